/**
 * A stand-in that keeps its text stays a stand-in across calls in view mode:
 * an assistant message whose large tool-call input was cleared
 * (`clearToolInputs`) changes only in its calls, and the remembered cut must
 * keep showing the cleared one. Taken for the original, the next request
 * showed every cleared input again, over the trigger and then over the window,
 * one call in two (found by the agent benchmark's clearing lever).
 * Through `createAgent` with the middleware and `createReactAgent` with the
 * node, both in view mode over a `MemorySaver`.
 */
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import type { AgentMiddleware } from "langchain";
import { z } from "zod/v4";
import { CLEARED_TOOL_INPUT, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import { createCompactionNode } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";

jest.setTimeout(60_000);

const WINDOW = 8_000;
const WRITES = 24;
const writeFile = tool(async ({ path }) => `Wrote ${path}.`, {
  name: "write_file",
  description: "Writes a whole file.",
  schema: z.object({ path: z.string(), text: z.string() }),
});

/** Writes WRITES files of about 700 tokens each, one per call, then answers. */
function writer(): ScriptedChatModel {
  return new ScriptedChatModel({
    reply: (_messages, call) =>
      call < WRITES ? { content: `Writing file ${call}.`, tool_calls: [{ name: "write_file", args: { path: `src/${call}.ts`, text: `// file ${call}\n${"export const line = 1;\n".repeat(120)}` } }] } : "All written.",
  });
}

/** The call ids whose input a request shows cleared. */
function clearedIn(messages: readonly BaseMessage[]): Set<string> {
  const cleared = new Set<string>();
  for (const message of messages) {
    if (!AIMessage.isInstance(message)) continue;
    for (const call of message.tool_calls ?? []) if (JSON.stringify(call.args) === JSON.stringify(CLEARED_TOOL_INPUT)) cleared.add(call.id!);
  }
  return cleared;
}

/** Every request after the first clearing shows each input cleared before it still cleared, and stays under the trigger. */
function expectClearingHeld(model: ScriptedChatModel): void {
  let before = new Set<string>();
  const sizes: number[] = [];
  for (const call of model.calls) {
    const now = clearedIn(call.messages);
    for (const id of before) {
      // Still cleared, or no longer shown at all (the window may drop the step later).
      const shown = call.messages.some((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.id === id));
      expect({ id, cleared: !shown || now.has(id) }).toEqual({ id, cleared: true });
    }
    before = now;
    sizes.push(model.requestTokens(call) ?? 0);
  }
  expect(model.calls.some((call) => clearedIn(call.messages).size > 0)).toBe(true);
  expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW * 0.7);
}

const stages = () => [new ToolResultPruningCompactor({ clearToolInputs: true, minKeepResults: 1 }), new SlidingWindowCompactor()];
const ask = { messages: [{ role: "user", content: "Write every file." }] };
const config = { configurable: { thread_id: "t" }, recursionLimit: 200 };

test("createAgent middleware, view mode: a cleared input stays cleared at every later call", async () => {
  const model = writer();
  const middleware = compactionMiddleware({ contextWindow: WINDOW, compactor: stages() });
  await createAgent({ model, tools: [writeFile], middleware: [middleware as unknown as AgentMiddleware], checkpointer: new MemorySaver() }).invoke(ask, config);
  expectClearingHeld(model);
});

test("LangGraph node, view mode: a cleared input stays cleared at every later call", async () => {
  const model = writer();
  const node = createCompactionNode({ contextWindow: WINDOW, compactor: stages(), tools: [writeFile] });
  await createReactAgent({ llm: model, tools: [writeFile], preModelHook: node, checkpointer: new MemorySaver() }).invoke(ask, config);
  expectClearingHeld(model);
});
