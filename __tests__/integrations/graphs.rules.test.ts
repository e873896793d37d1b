/**
 * The graph integrations' rules stated directly, one deterministic test each: the hook's trigger and usage anchor
 * and the overhead the node counts, the view's note across calls, and the middleware's structured output, request
 * overhead and commit-mode update. Each expectation is worked out independently of the code (exact ids, exact token
 * sums on a one-token-per-character counter).
 */
import { AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createAgent, toolStrategy } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter, CompactionHook, isOmissionNote, SlidingWindowCompactor } from "../../src";
import { COMPACTION_VIEW_KEY, createCompactionNode } from "../../src/integrations/langgraph";
import type { CompactionView } from "../../src/integrations/langgraph";
import { COMPACTION_MIDDLEWARE_NAME, compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";
// One token per character of string content: every expectation below is plain arithmetic.
import { lengthCounter as chars } from "../support/stages";


/** Ids of a result, the note shown as "NOTE". */
const idsOf = (messages: readonly BaseMessage[] | null | undefined) =>
  messages === null || messages === undefined ? null : messages.map((m) => (isOmissionNote(m) ? "NOTE" : m.id));

const ai = (id: string, content: string, calls: string[] = []) =>
  new AIMessage({ id, content, tool_calls: calls.map((call) => ({ id: call, name: "lookup", args: {} })) });
const result = (id: string, call: string, content: string) => new ToolMessage({ id, tool_call_id: call, content });
const human = (id: string, content: string) => new HumanMessage({ id, content });
const system = (id: string, content: string) => new SystemMessage({ id, content });

describe("the hook's trigger and usage anchor, seen through the graph node", () => {
  const SHORT_NOTE = "[{num_removed} gone]";
  const nodeOptions = { contextWindow: 1_000, compactAt: 0.5, compactTo: 0.4, tokenCounter: chars };
  /** 4 old turns of 100 tokens, then the task (10) and its answer carrying the reported usage. */
  function withUsage(input: number, output: number, after: BaseMessage[] = []): BaseMessage[] {
    const messages: BaseMessage[] = [];
    for (let turn = 0; turn < 4; turn += 1) messages.push(human(`q${turn}`, "q".repeat(50)), ai(`a${turn}`, "a".repeat(50)));
    messages.push(
      human("task", "t".repeat(10)),
      new AIMessage({ id: "reply", content: "", tool_calls: [{ id: "c1", name: "lookup", args: {} }], usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } }),
      ...after,
    );
    return messages;
  }

  test("the trigger fires at exactly contextWindow × compactAt (>=, not >)", async () => {
    const node = createCompactionNode({ ...nodeOptions, compactor: new SlidingWindowCompactor({ cache: null, omissionNote: SHORT_NOTE }) });
    const at = await node({ messages: withUsage(450, 50, [result("r1", "c1", "")]), [COMPACTION_VIEW_KEY]: null });
    // Fired: target 400 keeps task 10 + step 0 + the newest 3 turns (300).
    expect(idsOf(at.llmInputMessages)).toEqual(["NOTE", "q1", "a1", "q2", "a2", "q3", "a3", "task", "reply", "r1"]);
    expect(at[COMPACTION_VIEW_KEY]!.hiddenIds).toEqual(["q0", "a0"]);
    const below = await node({ messages: withUsage(449, 50, [result("r1", "c1", "")]), [COMPACTION_VIEW_KEY]: null });
    expect(below[COMPACTION_VIEW_KEY]).toBeUndefined();
    expect(below.llmInputMessages).toHaveLength(11);
  });

  test("the estimate is the newest usage plus a local count of what follows it", async () => {
    const node = createCompactionNode(nodeOptions);
    // Locally 410 tokens: below the trigger of 500, so only the reported usage can fire it.
    const reported = await node({ messages: withUsage(480, 40, [result("r1", "c1", "")]), [COMPACTION_VIEW_KEY]: null });
    expect(reported[COMPACTION_VIEW_KEY]!.hiddenIds).toEqual(["q0", "a0"]);
    // 480 reported + 30 counted after it reach 500; 480 alone does not.
    const after = await node({ messages: withUsage(470, 10, [result("r1", "c1", "r".repeat(30))]), [COMPACTION_VIEW_KEY]: null });
    expect(after[COMPACTION_VIEW_KEY]).toBeDefined();
    const notAfter = await node({ messages: withUsage(470, 9, [result("r1", "c1", "r".repeat(20))]), [COMPACTION_VIEW_KEY]: null });
    expect(notAfter[COMPACTION_VIEW_KEY]).toBeUndefined();
    // An older AI message's usage is not the anchor when a newer one has usage.
    const older = withUsage(100, 10, [result("r1", "c1", "")]);
    older.splice(1, 1, new AIMessage({ id: "a0", content: "a".repeat(50), usage_metadata: { input_tokens: 900, output_tokens: 0, total_tokens: 900 } }));
    expect((await node({ messages: older, [COMPACTION_VIEW_KEY]: null }))[COMPACTION_VIEW_KEY]).toBeUndefined();
  });
});

describe("the graph node counts the tools and system prompt it is given", () => {
  const lookup = tool(async ({ query }: { query: string }) => `result for ${query}`, {
    name: "lookup",
    description: "Looks something up in the archive.",
    schema: z.object({ query: z.string().describe("what to look for") }),
  });
  const systemMessage = "P".repeat(50);
  const base = { contextWindow: 1_000, compactAt: 0.5, compactTo: 0.4, tokenCounter: chars };
  /** 6 turns of 70 tokens and a task of 40: 460 locally, below the trigger of 500. */
  function history(): BaseMessage[] {
    const messages: BaseMessage[] = [];
    for (let turn = 0; turn < 6; turn += 1) messages.push(human(`q${turn}`, "q".repeat(35)), ai(`a${turn}`, "a".repeat(35)));
    messages.push(human("task", "t".repeat(40)));
    return messages;
  }

  test.each(["view", "commit"] as const)("%s: the overhead fires the trigger and comes off the target", async (mode) => {
    const overhead = await new CompactionHook(base).overheadTokens({ tools: [lookup], systemMessage });
    // The overhead is the JSON of the schema plus the prompt's 50 characters.
    expect(overhead).toBeGreaterThan(50);
    expect(460 + overhead).toBeGreaterThanOrEqual(500);
    // Independent expectation: target 400 − overhead holds the task (40) and as many newest turns of 70 as fit.
    const keptTurns = Math.max(0, Math.floor((400 - overhead - 40) / 70));
    const expected = ["NOTE"];
    for (let turn = 6 - keptTurns; turn < 6; turn += 1) expected.push(`q${turn}`, `a${turn}`);
    expected.push("task");

    const node = createCompactionNode({ ...base, mode, tools: [lookup], systemMessage });
    const bare = createCompactionNode({ ...base, mode });
    const messages = history();
    if (mode === "view") {
      const update = await node({ messages, [COMPACTION_VIEW_KEY]: null });
      expect(idsOf(update.llmInputMessages)).toEqual(expected);
      expect((await bare({ messages, [COMPACTION_VIEW_KEY]: null }))[COMPACTION_VIEW_KEY]).toBeUndefined();
    } else {
      const update = await node({ messages });
      const removed = update.messages!.filter((m) => RemoveMessage.isInstance(m)).map((m) => m.id);
      const hosted = update.messages!.filter((m) => isOmissionNote(m)).map((m) => m.id);
      expect([...removed, ...hosted].sort()).toEqual(messages.map((m) => m.id!).filter((id) => !expected.includes(id)).sort());
      expect(await bare({ messages })).toEqual({});
    }
  });
});

describe("the view's note after trimmed steps stays after the task on later calls", () => {
  test("the remembered cut puts the note right after the task message", async () => {
    const node = createCompactionNode({
      contextWindow: 100,
      compactAt: 0.8,
      compactTo: 0.4,
      tokenCounter: chars,
      compactor: new SlidingWindowCompactor({ cache: null, omissionNote: "[{num_removed} gone]" }),
    });
    const messages = [
      system("sys", "sys"),
      human("old", "o".repeat(10)),
      ai("oldans", "o".repeat(10)),
      human("task", "task"),
      ai("s1", "", ["c1"]),
      result("t1", "c1", "1".repeat(30)),
      ai("s2", "", ["c2"]),
      result("t2", "c2", "2".repeat(30)),
    ];
    // 87 ≥ 80 fires; target 40 − protected 7 leaves 33: the newest step (30) only.
    const first = await node({ messages, [COMPACTION_VIEW_KEY]: null });
    expect(idsOf(first.llmInputMessages)).toEqual(["sys", "task", "NOTE", "s2", "t2"]);
    const view = first[COMPACTION_VIEW_KEY] as CompactionView;
    const grown = [...messages, ai("s3", "done")];
    const next = await node({ messages: grown, [COMPACTION_VIEW_KEY]: view });
    expect(next[COMPACTION_VIEW_KEY]).toBeUndefined();
    expect(idsOf(next.llmInputMessages)).toEqual(["sys", "task", "NOTE", "s2", "t2", "s3"]);
  });
});

// ---------------------------------------------------------------------------
// The createAgent middleware

const weather = tool(async ({ city }: { city: string }) => `${city}: sunny`, {
  name: "weather",
  description: "The weather forecast for a city.",
  schema: z.object({ city: z.string().describe("The city") }),
});

/** 30 old exchanges of about 100 tokens each (approximate counter), with ids. */
function oldHistory(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = 0; turn < 30; turn += 1) {
    messages.push(human(`h${turn}`, `Question ${turn}: ${"words ".repeat(30)}`), ai(`a${turn}`, `Answer ${turn}: ${"words ".repeat(30)}`));
  }
  return messages;
}

describe("compactionMiddleware: structured output", () => {
  test("view mode hands a structured response on as it is and remembers no cut for it", async () => {
    const Forecast = z.object({ city: z.string(), summary: z.string() });
    const model: ScriptedChatModel = new ScriptedChatModel({
      usage: approximateTokenCounter,
      reply: (_messages, call) => {
        const name = model.calls[call]!.tools.find((tool) => tool !== "weather")!;
        return { content: "", tool_calls: [{ id: `so-${call}`, name, args: { city: "Paris", summary: "sunny" } }] };
      },
    });
    const agent = createAgent({
      model,
      tools: [weather],
      responseFormat: toolStrategy(Forecast),
      middleware: [compactionMiddleware({ contextWindow: 3_000 })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "structured" } };
    const output = await agent.invoke({ messages: [...oldHistory(), human("task", "Weather in Paris?")] }, config);
    // The request was compacted (so the middleware had a new cut in hand)...
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.messages.some((m) => isOmissionNote(m))).toBe(true);
    // ...and the structured response still reached the agent.
    expect(output.structuredResponse).toEqual({ city: "Paris", summary: "sunny" });
    const state = (await agent.graph.getState(config)).values as { _compactionView?: unknown; messages: BaseMessage[] };
    expect(state._compactionView ?? null).toBeNull();
    expect(state.messages.slice(0, 61).map((m) => m.id)).toEqual([...oldHistory().map((m) => m.id), "task"]);
  });
});

describe("compactionMiddleware: overhead of the request", () => {
  async function overheadAfterOneCall(tools: (typeof weather)[], systemPrompt?: string): Promise<number | undefined> {
    const model = new ScriptedChatModel({ reply: () => "ok", usage: false });
    const agent = createAgent({
      model,
      tools,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      middleware: [compactionMiddleware({ contextWindow: 100_000, mode: "commit" })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "overhead" } };
    await agent.invoke({ messages: [human("task", "hi")] }, config);
    return ((await agent.graph.getState(config)).values as { _compactionOverhead?: number })._compactionOverhead;
  }

  test("an empty system prompt costs nothing: only what is sent counts", async () => {
    const hook = new CompactionHook({ contextWindow: 100_000 });
    expect(await overheadAfterOneCall([])).toBe(0);
    expect(await overheadAfterOneCall([weather])).toBe(await hook.overheadTokens({ tools: [weather] }));
    const prompt = "You are a weather assistant.";
    expect(await overheadAfterOneCall([weather], prompt)).toBe(await hook.overheadTokens({ tools: [weather], systemMessage: prompt }));
  });
});

describe("compactionMiddleware: commit mode writes only removals by id and the note", () => {
  test("the update removes exactly the compacted ids (never REMOVE_ALL_MESSAGES) and rewrites nothing kept", async () => {
    const model = new ScriptedChatModel({ usage: approximateTokenCounter, reply: () => "ok" });
    const agent = createAgent({
      model,
      tools: [weather],
      middleware: [compactionMiddleware({ contextWindow: 3_000, mode: "commit" })],
      checkpointer: new MemorySaver(),
    });
    const input = [...oldHistory(), human("task", "Weather in Paris?")];
    const config = { configurable: { thread_id: "commit-writes" }, streamMode: "updates" as const };
    const writes: BaseMessage[][] = [];
    for await (const chunk of await agent.stream({ messages: input }, config)) {
      for (const [node, update] of Object.entries(chunk as Record<string, { messages?: BaseMessage[] } | undefined>)) {
        if (node.startsWith(COMPACTION_MIDDLEWARE_NAME) && update?.messages) writes.push(update.messages);
      }
    }
    expect(writes).toHaveLength(1);
    const write = writes[0]!;
    const removals = write.filter((m) => RemoveMessage.isInstance(m));
    const others = write.filter((m) => !RemoveMessage.isInstance(m));
    const inputIds = input.map((m) => m.id!);
    expect(removals.length).toBeGreaterThan(0);
    for (const removal of removals) {
      expect(removal.id).not.toBe(REMOVE_ALL_MESSAGES);
      expect(inputIds).toContain(removal.id);
    }
    // The only other write is the note, which takes over the id of a removed message in its slot.
    expect(others).toHaveLength(1);
    expect(isOmissionNote(others[0])).toBe(true);
    expect(inputIds).toContain(others[0]!.id);
    const gone = new Set([...removals.map((m) => m.id), others[0]!.id]);
    // The old history went oldest first: what is gone is a prefix of the input.
    expect([...gone].sort()).toEqual(inputIds.slice(0, gone.size).sort());
    const state = (await agent.graph.getState({ configurable: { thread_id: "commit-writes" } })).values.messages as BaseMessage[];
    expect(model.calls).toHaveLength(1);
    expect(idsOf(state)).toEqual(["NOTE", ...inputIds.slice(gone.size), "scripted-0"]);
  });
});
