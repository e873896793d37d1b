/**
 * Cancellation through every integration: the caller's signal (and a
 * Runnable's `timeout`) reaches the compactor itself, so work that would
 * never end stops, and the call rejects with the signal's reason. The
 * compactor hangs until its own signal aborts and remembers the signals it
 * was handed; the graphs are real (`createReactAgent`, `createAgent`).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { CompactionHook, compactMessages } from "../../src";
import { createCompactionNode } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { agentModel, readLog } from "../support/stage-agents";
import { NeverSettles } from "../support/test-compactors";

const CONTEXT_WINDOW = 1_000;

/** A conversation well over the trigger of a 1,000-token window, ending with a question. */
function longChat(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = 0; turn < 12; turn += 1) messages.push(new HumanMessage(`question ${turn}: ${"why? ".repeat(30)}`), new AIMessage(`answer ${turn}: ${"because. ".repeat(30)}`));
  messages.push(new HumanMessage("and now?"));
  return messages;
}

/** Waits until `compactor` has been called, then aborts `controller`; returns the reason used. */
async function abortOnceCalled(compactor: NeverSettles, controller: AbortController): Promise<Error> {
  while (compactor.signals.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const reason = new Error("stopped by the caller");
  controller.abort(reason);
  return reason;
}

/** The compactor was called once, with a signal that is now aborted with `reason` (when given). */
function expectCompactorAborted(compactor: NeverSettles, reason?: unknown): void {
  expect(compactor.signals).toHaveLength(1);
  expect(compactor.signals[0]?.aborted).toBe(true);
  if (reason !== undefined) expect(compactor.signals[0]?.reason).toBe(reason);
}

describe("the caller's signal reaches the compactor", () => {
  test("CompactionHook.run(messages, overhead, { signal })", async () => {
    const compactor = new NeverSettles(false);
    const controller = new AbortController();
    const running = new CompactionHook({ contextWindow: CONTEXT_WINDOW, compactor }).run(longChat(), {}, { signal: controller.signal });
    const reason = await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toBe(reason);
    expectCompactorAborted(compactor, reason);
  });

  test("a compactor that ignores its signal cannot hold the hook: it still rejects", async () => {
    const compactor = new NeverSettles(true);
    const controller = new AbortController();
    const running = new CompactionHook({ contextWindow: CONTEXT_WINDOW, compactor }).run(longChat(), {}, { signal: controller.signal });
    const reason = await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toBe(reason);
  });

  test("compactMessages as a Runnable: the run's signal, and its timeout", async () => {
    const bySignal = new NeverSettles(false);
    const controller = new AbortController();
    const running = compactMessages({ targetTokens: 200, compactor: bySignal }).invoke(longChat(), { signal: controller.signal });
    const reason = await abortOnceCalled(bySignal, controller);
    await expect(running).rejects.toBe(reason);
    expectCompactorAborted(bySignal, reason);

    const byTimeout = new NeverSettles(false);
    await expect(compactMessages({ targetTokens: 200, compactor: byTimeout }).invoke(longChat(), { timeout: 50 })).rejects.toThrow();
    expectCompactorAborted(byTimeout);
  });

  test("compactMessages(messages, options, { signal })", async () => {
    const compactor = new NeverSettles(false);
    const controller = new AbortController();
    const running = compactMessages(longChat(), { targetTokens: 200, compactor }, { signal: controller.signal });
    const reason = await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toBe(reason);
    expectCompactorAborted(compactor, reason);
  });

  test.each(["view", "commit"] as const)("createCompactionNode in createReactAgent (%s): the graph's signal", async (mode) => {
    const compactor = new NeverSettles(false);
    const model = agentModel();
    const agent = createReactAgent({
      llm: model,
      tools: [readLog],
      preModelHook: createCompactionNode({ contextWindow: CONTEXT_WINDOW, compactor, mode }),
      checkpointer: new MemorySaver(),
    });
    const controller = new AbortController();
    const running = agent.invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, signal: controller.signal });
    await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toThrow();
    expectCompactorAborted(compactor);
    expect(model.calls).toHaveLength(0);
  });

  test.each(["view", "commit"] as const)("compactionMiddleware in createAgent (%s): the agent's signal", async (mode) => {
    const compactor = new NeverSettles(false);
    const model = agentModel();
    const agent = createAgent({
      model,
      tools: [readLog],
      middleware: [compactionMiddleware({ contextWindow: CONTEXT_WINDOW, compactor, mode })],
      checkpointer: new MemorySaver(),
    });
    const controller = new AbortController();
    const running = agent.invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, signal: controller.signal });
    await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toThrow();
    expectCompactorAborted(compactor);
    expect(model.calls).toHaveLength(0);
  });
});

describe("a graph's timeout reaches the compactor", () => {
  test("createReactAgent with the compaction node", async () => {
    const compactor = new NeverSettles(false);
    const agent = createReactAgent({ llm: agentModel(), tools: [readLog], preModelHook: createCompactionNode({ contextWindow: CONTEXT_WINDOW, compactor }), checkpointer: new MemorySaver() });
    await expect(agent.invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, timeout: 100 })).rejects.toThrow();
    expectCompactorAborted(compactor);
  });

  test("createAgent with the middleware", async () => {
    const compactor = new NeverSettles(false);
    const agent = createAgent({ model: agentModel(), tools: [readLog], middleware: [compactionMiddleware({ contextWindow: CONTEXT_WINDOW, compactor })], checkpointer: new MemorySaver() });
    await expect(agent.invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, timeout: 100 })).rejects.toThrow();
    expectCompactorAborted(compactor);
  });
});
