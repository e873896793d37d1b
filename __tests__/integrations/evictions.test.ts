/**
 * Everything that leaves a store or a state in a commit reaches `onEvict`, linked to what replaced it: the
 * evictions a report describes (every stage and pipelines), then the history wrapper over the in-memory, Redis and
 * PostgreSQL stores, the LangGraph node and the `createAgent` middleware in commit mode.
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { InMemoryStore, MemorySaver, MessagesAnnotation, messagesStateReducer, START, StateGraph } from "@langchain/langgraph";
import { RedisChatMessageHistory } from "@langchain/redis";
import { createAgent } from "langchain";
import { Pool } from "pg";
import { createClient } from "redis";
import { z } from "zod/v4";
import {
  approximateTokenCounter,
  CompactingChatMessageHistory,
  CompactionPipeline,
  createCompactionNode,
  evictionsOf,
  isCompactionMessage,
  isSummaryMessage,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { Compactor, EvictedMessage } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";
import { POSTGRES_URL, REDIS_URL, requireServer } from "../support/servers";
import { calling, human, lengthCounter, result, system } from "../support/stages";
import { ScriptedSummaryModel } from "../support/summary-model";

const textOf = (message: BaseMessage) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content));

/** What must hold of any eviction list: each entry is an input message taken out, once, in input order. */
function checkEntries(input: readonly BaseMessage[], output: readonly BaseMessage[], evicted: readonly EvictedMessage[]): void {
  const positions = evicted.map((entry) => input.indexOf(entry.message));
  expect(positions.every((position) => position >= 0)).toBe(true);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  for (const entry of evicted) {
    expect(output).not.toContain(entry.message);
    if (entry.replacedBy !== null) expect(output).toContain(entry.replacedBy);
    expect(entry.fromCompaction).toBe(isCompactionMessage(entry.message));
  }
  // Every input message is kept as itself or evicted.
  for (const message of input) expect(output.includes(message) || evicted.some((entry) => entry.message === message)).toBe(true);
}

describe("evictionsOf: what each stage takes out, and what stands for it", () => {
  const run = (n: number, size = 300) => {
    const messages: BaseMessage[] = [system(), human()];
    for (let i = 0; i < n; i += 1) messages.push(calling([`c${i}`]), result(`c${i}`, size));
    return messages;
  };

  test("pruning: each pruned result, replaced by its placeholder (same id as the stand-in's)", async () => {
    const input = run(4);
    const report = await new ToolResultPruningCompactor({ minKeepResults: 1, cache: null }).compactWithReport(input, 0, lengthCounter);
    const evicted = evictionsOf(input, report);
    expect(evicted.map((entry) => entry.message)).toEqual(report.rewritten.map((entry) => entry.original));
    expect(evicted.length).toBeGreaterThan(0);
    for (const entry of evicted) {
      expect(entry.fate).toBe("pruned");
      expect(entry.replacedBy).toBe(report.rewritten.find((r) => r.original === entry.message)!.replacement);
    }
    checkEntries(input, report.messages!, evicted);
  });

  test("offloading: each offloaded result, replaced by its reference", async () => {
    const input = run(4, 2_000);
    const report = await new ToolResultOffloadCompactor({ store: new InMemoryStore(), cache: null, previewChars: 10 }).compactWithReport(input, 0, lengthCounter);
    const evicted = evictionsOf(input, report);
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted.every((entry) => entry.fate === "offloaded")).toBe(true);
    checkEntries(input, report.messages!, evicted);
  });

  test("sliding window: every removed message, stood for by the note (or by nothing when notes are off)", async () => {
    const input = run(6);
    const withNote = await new SlidingWindowCompactor({ cache: null }).compactWithReport(input, 800, lengthCounter);
    const evicted = evictionsOf(input, withNote);
    expect(evicted.map((entry) => entry.message)).toEqual(withNote.removed);
    expect(evicted.every((entry) => entry.fate === "removed" && entry.replacedBy === withNote.note)).toBe(true);
    checkEntries(input, withNote.messages!, evicted);

    const silent = await new SlidingWindowCompactor({ cache: null, omissionNote: null }).compactWithReport(input, 800, lengthCounter);
    expect(evictionsOf(input, silent).every((entry) => entry.fate === "removed" && entry.replacedBy === null)).toBe(true);
  });

  test("summarization: each summarized message, stood for by its summary, also when a later summary folds an earlier one", async () => {
    const input: BaseMessage[] = [system()];
    for (let i = 0; i < 8; i += 1) input.push(human(200, `Q${i}`), new AIMessage("A".repeat(200)));
    input.push(human(10, "task"));
    // The first two summaries come back long, so that once the turns are gone the history's two summaries are
    // folded into a third, which then stands for every message the first two stood for.
    const model = new ScriptedSummaryModel((call) => (call < 2 ? "L".repeat(300) : "short"));
    const report = await new SummarizationCompactor({ model, maxSummaryTokens: 40, cache: null }).compactWithReport(input, 500, lengthCounter);
    expect(model.calls).toHaveLength(3);
    expect(report.messages!.filter((message) => isSummaryMessage(message))).toHaveLength(1);
    expect(report.standsFor).toEqual([{ added: report.messages![1], originals: input.slice(1, 17) }]);
    const evicted = evictionsOf(input, report);
    const summaries = report.messages!.filter((message) => isSummaryMessage(message));
    expect(summaries.length).toBeGreaterThan(0);
    expect(evicted.map((entry) => entry.message)).toEqual(report.removed);
    for (const entry of evicted) {
      expect(entry.fate).toBe("summarized");
      expect(summaries).toContain(entry.replacedBy);
    }
    checkEntries(input, report.messages!, evicted);
  });

  test("a pipeline: a result pruned and then removed is stood for by the note; one pruned and kept by its placeholder", async () => {
    // A pruning stage without its lazy rewrites: the pipeline then runs the stages one after the other.
    class Pruning extends ToolResultPruningCompactor {
      override rewritesInPlace(): undefined {
        return undefined;
      }
    }
    class Window extends SlidingWindowCompactor {}
    for (const stages of [
      [new ToolResultPruningCompactor({ minKeepResults: 1, cache: null }), new SlidingWindowCompactor({ cache: null })],
      [new Pruning({ minKeepResults: 1, cache: null }), new Window({ cache: null })],
    ] as Compactor[][]) {
      const input = run(12, 400);
      const report = await new CompactionPipeline(stages, { cache: null }).compactWithReport(input, 700, lengthCounter);
      const evicted = evictionsOf(input, report);
      checkEntries(input, report.messages!, evicted);
      expect(evicted.some((entry) => entry.fate === "pruned")).toBe(true);
      expect(evicted.some((entry) => entry.fate === "removed" && entry.replacedBy === report.note && entry.message.type === "tool")).toBe(true);
    }
  });

  test("a pipeline: a result pruned and then summarized is stood for by the summary", async () => {
    const input: BaseMessage[] = [system(), human(10, "old")];
    for (let i = 0; i < 5; i += 1) input.push(calling([`c${i}`]), result(`c${i}`, 400));
    input.push(new AIMessage("done"), human(10, "task"), calling(["z"]), result("z", 30));
    const model = new ScriptedSummaryModel(() => "short summary");
    const pipeline = new CompactionPipeline(
      [new ToolResultPruningCompactor({ minKeepResults: 1, cache: null }), new SummarizationCompactor({ model, maxSummaryTokens: 20, cache: null })],
      { cache: null },
    );
    const report = await pipeline.compactWithReport(input, 120, lengthCounter);
    const evicted = evictionsOf(input, report);
    checkEntries(input, report.messages!, evicted);
    const pruned = report.stages[0]!.rewritten.map((entry) => entry.original);
    expect(pruned.length).toBeGreaterThan(0);
    for (const original of pruned) {
      const entry = evicted.find((candidate) => candidate.message === original)!;
      expect(entry.fate).toBe("summarized");
      expect(isSummaryMessage(entry.replacedBy!)).toBe(true);
    }
  });

  test("earlier notes and summaries are marked as written by a compaction", async () => {
    const first = await new SlidingWindowCompactor({ cache: null }).compactWithReport(run(8), 900, lengthCounter);
    const grown = [...first.messages!];
    for (let i = 20; i < 28; i += 1) grown.push(calling([`c${i}`]), result(`c${i}`, 300));
    const second = await new SlidingWindowCompactor({ cache: null }).compactWithReport(grown, 900, lengthCounter);
    const evicted = evictionsOf(grown, second);
    const note = evicted.find((entry) => entry.message === first.note)!;
    expect(note.fromCompaction).toBe(true);
    expect(evicted.filter((entry) => entry.fromCompaction)).toEqual([note]);
  });

  test("nothing changed: nothing is evicted", async () => {
    const input = run(1);
    expect(evictionsOf(input, await new SlidingWindowCompactor().compactWithReport(input, 10_000, lengthCounter))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// The stores

type StoreKind = { name: string; open: (id: string) => Promise<BaseListChatMessageHistory> };
const redisClients: ReturnType<typeof createClient>[] = [];
let pool: Pool | undefined;
const PG_TABLE = `evictions_history_${process.pid}`;
let redisUp = false;
let pgUp = false;

beforeAll(async () => {
  redisUp = await requireServer("Redis", REDIS_URL);
  pgUp = await requireServer("PostgreSQL", POSTGRES_URL);
  if (pgUp) pool = new Pool({ connectionString: POSTGRES_URL, max: 4 });
});

afterAll(async () => {
  for (const client of redisClients) await client.quit().catch(() => undefined);
  if (pool !== undefined) {
    await pool.query(`DROP TABLE IF EXISTS ${PG_TABLE}`).catch(() => undefined);
    await pool.end();
  }
});

const STORES: StoreKind[] = [
  { name: "InMemoryChatMessageHistory", open: async () => new InMemoryChatMessageHistory() },
  {
    name: "RedisChatMessageHistory",
    open: async (id) => {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      redisClients.push(client);
      return new RedisChatMessageHistory({ sessionId: id, client: client as never });
    },
  },
  { name: "PostgresChatMessageHistory", open: async (id) => new PostgresChatMessageHistory({ sessionId: id, pool: pool!, tableName: PG_TABLE }) },
];

const available = (kind: StoreKind) => (kind.name.startsWith("Redis") ? redisUp : kind.name.startsWith("Postgres") ? pgUp : true);

/** Ten tool exchanges of ~2 KB results, each result text unique. */
function toolRun(tag: string): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You read logs."), new HumanMessage(`${tag}: read the ten logs`)];
  for (let i = 0; i < 10; i += 1) {
    const id = `${tag}-call-${i}`;
    messages.push(new AIMessage({ content: "", tool_calls: [{ id, name: "read_log", args: { i } }] }));
    messages.push(new ToolMessage({ tool_call_id: id, name: "read_log", content: `${tag} log ${i}: ${"GET /api 200 12ms; ".repeat(100)}` }));
  }
  return messages;
}

describe.each(STORES)("onEvict over $name, commit mode", (kind) => {
  test.each([
    ["pruning alone", () => [new ToolResultPruningCompactor()]],
    ["pruning then the window", () => [new ToolResultPruningCompactor(), new SlidingWindowCompactor()]],
  ] as [string, () => Compactor[]][])("%s: every original text is afterwards in the store or in the archive", async (_label, stages) => {
    if (!available(kind)) return;
    const id = `evict-${kind.name}-${Math.random().toString(36).slice(2)}`;
    const store = await kind.open(id);
    const input = toolRun(id);
    await store.addMessages(input);
    const archive: EvictedMessage[] = [];
    let storedAtEviction: string[] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: 2_500,
      mode: "commit",
      compactor: stages(),
      onEvict: async (evicted) => {
        storedAtEviction = (await store.getMessages()).map(textOf);
        archive.push(...evicted);
      },
    });
    await history.getMessages();
    const stored = (await store.getMessages()).map(textOf);
    expect(archive.length).toBeGreaterThan(0);
    // The store was untouched while onEvict ran.
    expect(storedAtEviction).toEqual(input.map(textOf));
    const archived = new Set(archive.map((entry) => textOf(entry.message)));
    for (const message of input) expect(stored.includes(textOf(message)) || archived.has(textOf(message))).toBe(true);
    // What replaced each archived message is in the store, found by its text (a store reads messages back as copies).
    for (const entry of archive) {
      expect(entry.fromCompaction).toBe(false);
      if (entry.replacedBy !== null) expect(stored).toContain(textOf(entry.replacedBy));
      if (entry.fate === "pruned") expect(entry.replacedBy!.id ?? (entry.replacedBy as ToolMessage).tool_call_id).toBe(entry.message.id ?? (entry.message as ToolMessage).tool_call_id);
    }
    // Pruning alone leaves placeholders; with the window after it the pruned results may go too, stood for by the note.
    expect(archive.some((entry) => entry.message.type === "tool" && (entry.fate === "pruned" || entry.fate === "removed"))).toBe(true);
    if (stages().length === 1) expect(archive.some((entry) => entry.fate === "pruned")).toBe(true);
  });

  test("a long chat: earlier notes handed over are marked, and no conversation message is lost", async () => {
    if (!available(kind)) return;
    const id = `evict-chat-${kind.name}-${Math.random().toString(36).slice(2)}`;
    const store = await kind.open(id);
    const archive: EvictedMessage[] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: 400,
      mode: "commit",
      onEvict: (evicted) => void archive.push(...evicted),
    });
    const written: string[] = [];
    for (let turn = 0; turn < 50; turn += 1) {
      const pair = [new HumanMessage(`question ${turn}: ${"is it raining? ".repeat(5)}`), new AIMessage(`answer ${turn}: ${"no, dry. ".repeat(8)}`)];
      written.push(...pair.map(textOf));
      await history.addMessages(pair);
      await history.getMessages();
    }
    const stored = new Set((await store.getMessages()).map(textOf));
    const conversation = new Set(archive.filter((entry) => !entry.fromCompaction).map((entry) => textOf(entry.message)));
    for (const text of written) expect(stored.has(text) || conversation.has(text)).toBe(true);
    const marked = archive.filter((entry) => entry.fromCompaction);
    expect(marked.length).toBeGreaterThan(0);
    expect(marked.every((entry) => isCompactionMessage(entry.message))).toBe(true);
    expect(archive.filter((entry) => !entry.fromCompaction).every((entry) => !isCompactionMessage(entry.message))).toBe(true);
  });
});

// ---------------------------------------------------------------------------
// Graphs

const lookup = tool(async ({ topic }: { topic: string }) => `${topic}: ${"record found, filed under 2019. ".repeat(20)}`, {
  name: "lookup",
  description: "Looks a topic up.",
  schema: z.object({ topic: z.string() }),
});

function toolCallingModel(prefix: string): ScriptedChatModel {
  return new ScriptedChatModel({
    usage: approximateTokenCounter,
    idPrefix: prefix,
    reply: (messages, call) => {
      if (messages.at(-1)!.type === "tool") return `Noted (answer ${call}).`;
      return { content: "", tool_calls: [{ id: `${prefix}-call-${call}`, name: "lookup", args: { topic: `topic ${call}` } }] };
    },
  });
}

/** Every message id ever written to the thread: from every checkpoint. */
async function everId(graph: { getStateHistory(config: object): AsyncIterableIterator<{ values: Record<string, unknown> }> }, thread: string): Promise<Map<string, BaseMessage>> {
  const seen = new Map<string, BaseMessage>();
  for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: thread } })) {
    for (const message of (snapshot.values.messages as BaseMessage[] | undefined) ?? []) if (message.id !== undefined) seen.set(message.id, message);
  }
  return seen;
}

describe("onEvict in graphs, commit mode", () => {
  test("the LangGraph node: every message that left the state was handed over, each with what stood for it right after", async () => {
    const archive: EvictedMessage[] = [];
    const afterEviction: (string | undefined)[][] = [];
    const model = toolCallingModel("node");
    const node = createCompactionNode({ contextWindow: 2_000, mode: "commit", tools: [lookup], onEvict: (evicted) => void archive.push(...evicted) });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("compact", async (state) => {
        const update = await node(state);
        if (update.messages !== undefined) afterEviction.push(messagesStateReducer(state.messages, update.messages).map((message) => message.id));
        return update;
      })
      .addNode("model", async (state) => ({ messages: [await model.bindTools([lookup]).invoke(state.messages)] }))
      .addNode("tools", async (state) => {
        const last = state.messages.at(-1) as AIMessage;
        return { messages: await Promise.all((last.tool_calls ?? []).map((call) => lookup.invoke({ ...call, type: "tool_call" }))) };
      })
      .addEdge(START, "compact")
      .addEdge("compact", "model")
      .addConditionalEdges("model", (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : "__end__"))
      .addEdge("tools", "compact")
      .compile({ checkpointer: new MemorySaver() });
    const thread = { configurable: { thread_id: "node-evictions" } };
    for (let turn = 0; turn < 12; turn += 1) await graph.invoke({ messages: [new HumanMessage({ id: `task-${turn}`, content: `Task ${turn}` })] }, thread);

    expect(archive.length).toBeGreaterThan(0);
    const final = ((await graph.getState(thread)).values.messages as BaseMessage[]).map((message) => message.id);
    const archived = new Set(archive.map((entry) => entry.message.id));
    for (const id of (await everId(graph, "node-evictions")).keys()) expect(final.includes(id) || archived.has(id)).toBe(true);
    // Each compaction's stand-ins (the note, under the id it took over) are in the state it wrote.
    let cursor = 0;
    for (const ids of afterEviction) {
      const batch = archive.slice(cursor).filter((entry) => !ids.includes(entry.message.id));
      for (const entry of batch) if (entry.replacedBy !== null) expect(ids).toContain(entry.replacedBy.id);
      cursor += batch.length;
    }
  });

  test("the createAgent middleware: every message that left the state was handed over", async () => {
    const archive: EvictedMessage[] = [];
    const agent = createAgent({
      model: toolCallingModel("mw"),
      tools: [lookup],
      systemPrompt: "You look things up.",
      middleware: [compactionMiddleware({ contextWindow: 2_000, mode: "commit", onEvict: (evicted) => void archive.push(...evicted) })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "mw-evictions" } };
    for (let turn = 0; turn < 12; turn += 1) await agent.invoke({ messages: [new HumanMessage({ id: `task-${turn}`, content: `Task ${turn}` })] }, thread);
    expect(archive.length).toBeGreaterThan(0);
    const final = ((await agent.graph.getState(thread)).values.messages as BaseMessage[]).map((message) => message.id);
    const archived = new Set(archive.map((entry) => entry.message.id));
    for (const id of (await everId(agent.graph as never, "mw-evictions")).keys()) expect(final.includes(id) || archived.has(id)).toBe(true);
    for (const entry of archive) if (entry.replacedBy !== null) expect(entry.replacedBy.id).toBeDefined();
  });

  test("onEvict needs commit mode, and must be a function", () => {
    expect(() => createCompactionNode({ contextWindow: 1_000, onEvict: () => undefined })).toThrow(/`onEvict` goes with mode "commit"/);
    expect(() => compactionMiddleware({ contextWindow: 1_000, onEvict: () => undefined })).toThrow(/`onEvict` goes with mode "commit"/);
    expect(() => new CompactingChatMessageHistory({ history: new InMemoryChatMessageHistory(), targetTokens: 10, onEvict: () => undefined })).toThrow(TypeError);
    expect(() => createCompactionNode({ contextWindow: 1_000, mode: "commit", onEvict: "archive" as never })).toThrow('`onEvict` must be a function, got "archive"');
  });

  test("a node whose onEvict throws leaves the state as it was", async () => {
    const node = createCompactionNode({ contextWindow: 1_000, mode: "commit", onEvict: () => Promise.reject(new Error("archive down")) });
    const messages: BaseMessage[] = [new SystemMessage("s")];
    for (let i = 0; i < 20; i += 1) messages.push(new HumanMessage({ id: `h${i}`, content: "q ".repeat(60) }), new AIMessage({ id: `a${i}`, content: "a ".repeat(60) }));
    await expect(node({ messages })).rejects.toThrow("archive down");
  });
});
