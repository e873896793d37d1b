/**
 * The scripted chat model of `langchain-compaction/testing`: it answers by script, records what it was sent,
 * reports usage as a provider does, and runs a real `createAgent` agent whose context grows and is compacted.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";

const readFile = tool(async ({ path }: { path: string }) => `// ${path}\n${"export const value = 42;\n".repeat(120)}`, {
  name: "read_file",
  description: "Reads a file.",
  schema: z.object({ path: z.string() }),
});

describe("ScriptedChatModel", () => {
  test("answers by script, records each request, makes up ids, and reports usage from its counter", async () => {
    const model = new ScriptedChatModel({ reply: (_messages, call) => (call === 0 ? { content: "", tool_calls: [{ name: "read_file", args: { path: "a.ts" } }] } : "done") });
    const bound = model.bindTools([readFile]);
    const first = await bound.invoke([new SystemMessage("s"), new HumanMessage("go")]);
    expect(first.tool_calls).toEqual([{ name: "read_file", args: { path: "a.ts" }, id: "scripted-0-0", type: "tool_call" }]);
    expect(first.id).toBe("scripted-0");
    const second = await model.invoke([new HumanMessage("again")]);
    expect(second.content).toBe("done");
    // One record for both the model and its bound copy, in order, with the tools bound at the time.
    expect(model.calls.map((call) => call.tools)).toEqual([["read_file"], []]);
    expect(model.calls[0]!.messages.map((message) => message.type)).toEqual(["system", "human"]);
    const input = approximateTokenCounter(model.calls[0]!.messages) + approximateTokenCounter([new SystemMessage(model.calls[0]!.schemaText)]);
    expect(first.usage_metadata?.input_tokens).toBe(input);
    expect(model.requestTokens(model.calls[0]!)).toBe(input);
    expect(new ScriptedChatModel({ reply: () => "x", usage: false }).requestTokens({ messages: [], tools: [], schemaText: "" })).toBeUndefined();
  });

  test("bad options are a TypeError naming them", () => {
    expect(() => new ScriptedChatModel({} as never)).toThrow(/needs options with a `reply` function, got an object/);
    expect(() => new ScriptedChatModel({ reply: () => "x", usage: 3 as never })).toThrow("`usage` must be a token counter function or false, got 3");
  });

  test("drives a createAgent agent whose requests grow until the middleware compacts them", async () => {
    const model = new ScriptedChatModel({
      reply: (messages, call) => (messages.at(-1)?.type === "tool" && call % 4 === 3 ? "Done." : { content: "", tool_calls: [{ name: "read_file", args: { path: `src/${call}.ts` } }] }),
    });
    const agent = createAgent({ model, tools: [readFile], middleware: [compactionMiddleware({ contextWindow: 6_000 })], checkpointer: new MemorySaver() });
    for (let turn = 0; turn < 4; turn += 1) await agent.invoke({ messages: [new HumanMessage(`Review batch ${turn}`)] }, { configurable: { thread_id: "t" } });
    const sizes = model.calls.map((call) => model.requestTokens(call)!);
    expect(Math.max(...sizes)).toBeLessThan(6_000 * 0.7 + 1_000);
    // The requests grew, then fell when the middleware compacted.
    expect(sizes.some((size, index) => index > 0 && size < sizes[index - 1]!)).toBe(true);
  });
});
