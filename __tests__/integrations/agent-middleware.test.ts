/**
 * `agentCompactionMiddleware`, the one-line recommended configuration for
 * `createAgent`: the same requests as the long form it stands for
 * (`compactionMiddleware` + `agentCompactor`, `compactTo: 0.3`), the offload
 * reader registered on the agent when a store is given (and an offloaded
 * result read back through it), none without a store, and bad options
 * refused where they enter.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent, tool } from "langchain";
import type { AgentMiddleware } from "langchain";
import { z } from "zod/v4";
import { agentCompactor, createOffloadReaderTool, OFFLOAD_READER_TOOL_NAME, RECOMMENDED_AGENT_COMPACT_TO } from "../../src";
import { CONVERSATION_SUMMARY_REQUEST } from "../../src/compactors/summarization";
import { agentCompactionMiddleware, compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";

jest.setTimeout(60_000);

const WINDOW = 12_000;
const READS = 30;
const readFile = tool(async ({ path }) => `// ${path}\n${`export const value_${path.length} = "${path}";\n`.repeat(60)}`, {
  name: "read_file",
  description: "Reads a file.",
  schema: z.object({ path: z.string() }),
});

/** The key of the first offloaded result the request shows, if any. */
function offloadedKey(messages: readonly BaseMessage[]): string | undefined {
  for (const message of messages) {
    const match = ToolMessage.isInstance(message) ? /key "([^"]+)"/.exec(String(message.content)) : null;
    if (match) return match[1];
  }
  return undefined;
}

const isSummaryCall = (messages: readonly BaseMessage[]) => String(messages.at(-1)?.content ?? "").startsWith(CONVERSATION_SUMMARY_REQUEST);

/** Reads READS files; then, if a result was offloaded, reads it back once; then answers. Asked for a summary, writes one. */
function agentModel(): ScriptedChatModel {
  let readBack = false;
  let step = 0;
  return new ScriptedChatModel({
    reply: (messages) => {
      if (isSummaryCall(messages)) return "Summary: files were read.";
      const call = step++;
      if (call < READS) return { content: "", tool_calls: [{ name: "read_file", args: { path: `src/file_${call}.ts` } }] };
      const key = offloadedKey(messages);
      if (!readBack && key !== undefined) {
        readBack = true;
        return { content: "", tool_calls: [{ name: OFFLOAD_READER_TOOL_NAME, args: { key, length: 100_000 } }] };
      }
      return "Reviewed.";
    },
  });
}

async function run(model: ScriptedChatModel, middleware: unknown, tools = [readFile] as ReturnType<typeof tool>[]): Promise<BaseMessage[]> {
  const agent = createAgent({ model, tools, middleware: [middleware as AgentMiddleware], checkpointer: new MemorySaver() });
  const state = await agent.invoke({ messages: [{ role: "user", content: "Review every file." }] }, { configurable: { thread_id: "t" }, recursionLimit: 200 });
  return state.messages;
}

/** Sizes of the agent's requests (the summary calls the same model answers left out). */
const sizes = (model: ScriptedChatModel) => model.calls.filter((call) => !isSummaryCall(call.messages)).map((call) => model.requestTokens(call) ?? 0);
const summaryCalls = (model: ScriptedChatModel) => model.calls.filter((call) => isSummaryCall(call.messages)).length;

describe("agentCompactionMiddleware", () => {
  test("sends exactly what the long form sends: compactionMiddleware with agentCompactor and compactTo 0.3 (not the hook's 0.4)", async () => {
    const preset = agentModel();
    await run(preset, agentCompactionMiddleware({ model: preset, contextWindow: WINDOW }));
    const longForm = agentModel();
    await run(longForm, compactionMiddleware({ contextWindow: WINDOW, compactTo: RECOMMENDED_AGENT_COMPACT_TO, compactor: agentCompactor({ model: longForm }) }));
    const hookDefault = agentModel();
    await run(hookDefault, compactionMiddleware({ contextWindow: WINDOW, compactor: agentCompactor({ model: hookDefault }) }));
    expect(RECOMMENDED_AGENT_COMPACT_TO).toBe(0.3);
    expect(sizes(preset).length).toBeGreaterThan(READS);
    expect(sizes(preset)).toEqual(sizes(longForm));
    expect(sizes(preset)).not.toEqual(sizes(hookDefault));
    // It compacted with summaries written by the agent's own model, and every agent request stayed under the trigger.
    expect(summaryCalls(preset)).toBeGreaterThan(0);
    expect(Math.max(...sizes(preset))).toBeLessThanOrEqual(WINDOW * 0.7);
    // Without a store: no reader tool, nothing offloaded.
    expect(preset.calls.every((call) => !call.tools.includes(OFFLOAD_READER_TOOL_NAME))).toBe(true);
    expect(preset.calls.some((call) => offloadedKey(call.messages) !== undefined)).toBe(false);
  });

  test("with a store, it registers the reader tool on the agent, and an offloaded result is read back whole", async () => {
    const model = agentModel();
    const store = new InMemoryStore();
    const messages = await run(model, agentCompactionMiddleware({ model, contextWindow: WINDOW, store }));
    // The agent's model is bound to the reader beside the agent's own tool.
    const agentCalls = model.calls.filter((call) => !isSummaryCall(call.messages));
    expect(agentCalls.every((call) => call.tools.includes(OFFLOAD_READER_TOOL_NAME))).toBe(true);
    const read = messages.find((message) => ToolMessage.isInstance(message) && message.name === OFFLOAD_READER_TOOL_NAME);
    expect(read).toBeDefined();
    // What it read is the original result of the call the key stands for, as the checkpointed state keeps it.
    const key = messages
      .filter((message) => AIMessage.isInstance(message))
      .flatMap((message) => (message as AIMessage).tool_calls ?? [])
      .find((call) => call.name === OFFLOAD_READER_TOOL_NAME)!.args.key as string;
    const stored = await store.get(["compaction", "tool-results"], key);
    expect(typeof stored?.value.content).toBe("string");
    const original = messages.find((message) => ToolMessage.isInstance(message) && message.content === stored!.value.content);
    expect(original).toBeDefined();
    expect(String(read!.content)).toContain(String(stored!.value.content));
  });

  test("the tool it registers is the reader createOffloadReaderTool builds, and only that", async () => {
    const store = new InMemoryStore();
    const middleware = agentCompactionMiddleware({ model: agentModel(), contextWindow: WINDOW, store }) as unknown as { tools?: { name: string }[] };
    expect(middleware.tools?.map((t) => t.name)).toEqual([createOffloadReaderTool({ store }).name]);
  });

  test("options the middleware takes override its defaults; a target below 0.3 is kept", async () => {
    const model = agentModel();
    await run(model, agentCompactionMiddleware({ model, contextWindow: WINDOW, compactTo: 0.2, summarization: { maxSummaryTokens: 200 } }));
    const longForm = agentModel();
    await run(longForm, compactionMiddleware({ contextWindow: WINDOW, compactTo: 0.2, compactor: agentCompactor({ model: longForm, maxSummaryTokens: 200 }) }));
    expect(sizes(model)).toEqual(sizes(longForm));
  });

  test("bad options are refused where they enter, naming the bad value", () => {
    const model = agentModel();
    expect(() => agentCompactionMiddleware(null as never)).toThrow(/options must be an object, got null/);
    expect(() => agentCompactionMiddleware({ model, contextWindow: WINDOW, compactor: agentCompactor({ model }) } as never)).toThrow(/builds its own compactor/);
    expect(() => agentCompactionMiddleware({ model, contextWindow: WINDOW, store: { get: 1 } as never })).toThrow(TypeError);
    expect(() => agentCompactionMiddleware({ model, contextWindow: WINDOW, summarization: "short" as never })).toThrow(/`summarization` must be the options of agentCompactor, got "short"/);
    expect(() => agentCompactionMiddleware({ model, contextWindow: WINDOW, summarization: [] as never })).toThrow(/`summarization` must be the options of agentCompactor/);
    expect(() => agentCompactionMiddleware({ model: undefined as never, contextWindow: WINDOW })).toThrow(/model/);
    expect(() => agentCompactionMiddleware({ model, contextWindow: -1 })).toThrow(/contextWindow/);
  });
});
