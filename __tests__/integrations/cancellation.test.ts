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
import type { ScriptedChatModel } from "../../src/testing";
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

type GraphIntegration = "createReactAgent" | "createAgent";

interface RunnableAgent {
  invoke(input: { messages: BaseMessage[] }, config: { configurable: { thread_id: string }; signal?: AbortSignal; timeout?: number }): Promise<unknown>;
}

/** `createReactAgent` with the compaction node as pre-model hook, or `createAgent` with the middleware. */
function compactingAgent(integration: GraphIntegration, mode: "view" | "commit", compactor: NeverSettles, model: ScriptedChatModel): RunnableAgent {
  const trigger = { contextWindow: CONTEXT_WINDOW, compactor, mode };
  if (integration === "createAgent") {
    return createAgent({ model, tools: [readLog], middleware: [compactionMiddleware(trigger)], checkpointer: new MemorySaver() }) as unknown as RunnableAgent;
  }
  return createReactAgent({ llm: model, tools: [readLog], preModelHook: createCompactionNode(trigger), checkpointer: new MemorySaver() }) as unknown as RunnableAgent;
}

const graphCases = (["createReactAgent", "createAgent"] as const).flatMap((integration) => (["view", "commit"] as const).map((mode) => [integration, mode] as const));

describe("the caller's signal reaches the compactor", () => {
  test.each([
    ["listens to its signal", false],
    ["ignores its signal (the hook still rejects)", true],
  ] as const)("CompactionHook.run(messages, overhead, { signal }), a compactor that %s", async (_name, deaf) => {
    const compactor = new NeverSettles(deaf);
    const controller = new AbortController();
    const running = new CompactionHook({ contextWindow: CONTEXT_WINDOW, compactor }).run(longChat(), {}, { signal: controller.signal });
    const reason = await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toBe(reason);
    expectCompactorAborted(compactor, reason);
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

  test.each(graphCases)("%s (%s): the graph's signal", async (integration, mode) => {
    const compactor = new NeverSettles(false);
    const model = agentModel();
    const controller = new AbortController();
    const running = compactingAgent(integration, mode, compactor, model).invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, signal: controller.signal });
    await abortOnceCalled(compactor, controller);
    await expect(running).rejects.toThrow();
    expectCompactorAborted(compactor);
    expect(model.calls).toHaveLength(0);
  });
});

describe("a graph's timeout reaches the compactor", () => {
  test.each(["createReactAgent", "createAgent"] as const)("%s", async (integration) => {
    const compactor = new NeverSettles(false);
    const agent = compactingAgent(integration, "view", compactor, agentModel());
    await expect(agent.invoke({ messages: longChat() }, { configurable: { thread_id: "t" }, timeout: 100 })).rejects.toThrow();
    expectCompactorAborted(compactor);
  });
});
