import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import {
  approximateTokenCounter,
  omissionNoteMetadata,
  compactMessages,
  CompactingChatMessageHistory,
  isOmissionNote,
  SlidingWindowCompactor,
} from "../../src";
import { COMPACTION_VIEW_KEY, createCompactionNode } from "../../src/integrations/langgraph";
import type { CompactionView } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";
import { FaultInjector, InjectedFault } from "../support/faulty-checkpointer";
import { archiveGraph, CONTEXT_WINDOW, tools, TURN_MESSAGES } from "../support/archive-tools";
import { POSTGRES_URL, requireServer } from "../support/servers";
import { diagnostic } from "../support/diagnostics";


// ---------------------------------------------------------------------------
// A tool agent whose script depends on the state only, so a step that is run
// again after a fault replies exactly as the lost run would have.


/** Per user turn: parallel lookup + weather, one more lookup, an answer; ids derived from the turn and the step. */
let modelsMade = 0;

function stateScriptedModel(): ScriptedChatModel {
  modelsMade += 1;
  return new ScriptedChatModel({
    usage: approximateTokenCounter,
    // Reply ids of its own: a new model resuming a thread must not reuse an earlier one's (the state would replace it).
    idPrefix: `model${modelsMade}`,
    reply: (messages) => {
      let human = messages.length - 1;
      while (human >= 0 && !(HumanMessage.isInstance(messages[human]!) && !isOmissionNote(messages[human]!))) human -= 1;
      const turn = String(messages[human]!.id);
      const step = messages.slice(human + 1).filter((message) => AIMessage.isInstance(message)).length;
      if (step === 0) {
        return {
          content: "",
          tool_calls: [
            { id: `${turn}-l`, name: "lookup", args: { topic: `topic ${turn}` } },
            { id: `${turn}-w`, name: "weather", args: { city: `City ${turn}` } },
          ],
        };
      }
      if (step === 1) return { content: "", tool_calls: [{ id: `${turn}-m`, name: "lookup", args: { topic: `more on ${turn}` } }] };
      return `Summary of ${turn}: found the records.`;
    },
  });
}

type Mode = "view" | "commit";

type Durability = "sync" | "async";

interface Graph {
  invoke(input: { messages: BaseMessage[] } | null, config: { configurable: { thread_id: string }; durability?: Durability }): Promise<unknown>;
  getState(config: { configurable: { thread_id: string } }): Promise<{ values: Record<string, unknown>; next: string[] }>;
  getStateHistory(config: { configurable: { thread_id: string } }): AsyncIterableIterator<{ values: Record<string, unknown> }>;
}

function buildGraph(mode: Mode, model: ScriptedChatModel, checkpointer: BaseCheckpointSaver, interruptBefore?: "tools"[], contextWindow = CONTEXT_WINDOW): Graph {
  const node = createCompactionNode({
    contextWindow,
    mode,
    tools,
    compactor: new SlidingWindowCompactor({ minKeepSteps: 1 }),
  });
  return archiveGraph(mode, node, model, { checkpointer, ...(interruptBefore ? { interruptBefore } : {}) }) as Graph;
}

const humanTurn = (turn: number) => new HumanMessage({ id: `turn${turn}`, content: `Turn ${turn}: what does the archive hold on topic ${turn}?` });

/**
 * OpenAI/Anthropic ordering rules: system messages only at the start, every
 * tool result answers a call of the AI message right before its run of tool
 * results, and every call is answered before the next non-tool message.
 * With `openTail`, the calls of the last AI message may still be unanswered
 * (a state paused before its tools ran).
 */
function orderingProblems(messages: readonly BaseMessage[], openTail = false): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  let leading = true;
  messages.forEach((message, index) => {
    if (SystemMessage.isInstance(message)) {
      if (!leading) problems.push(`system message at ${index}`);
      return;
    }
    leading = false;
    if (ToolMessage.isInstance(message)) {
      if (!open.delete(message.tool_call_id)) problems.push(`tool result ${message.tool_call_id} at ${index} answers no open call`);
      return;
    }
    if (open.size > 0) problems.push(`calls ${[...open].join(",")} unanswered before ${message.type} at ${index}`);
    open = new Set(AIMessage.isInstance(message) ? (message.tool_calls ?? []).map((call) => call.id!) : []);
  });
  if (open.size > 0 && !openTail) problems.push(`calls ${[...open].join(",")} unanswered at the end`);
  return problems;
}

const config = (thread: string) => ({ configurable: { thread_id: thread } });

/** Every message id that a checkpoint in the thread's history held (a note reuses a removed message's id). */
async function idsEverStored(graph: Graph, thread: string): Promise<Set<string>> {
  const seen = new Set<string>();
  for await (const snapshot of graph.getStateHistory(config(thread))) {
    for (const message of (snapshot.values.messages as BaseMessage[] | undefined) ?? []) seen.add(message.id!);
  }
  return seen;
}

/** A commit-mode state loses nothing: kept messages plus the note's removed count make up all messages ever stored. */
function expectAccounted(messages: readonly BaseMessage[], total: number): void {
  const notes = messages.filter((message) => isOmissionNote(message));
  expect(notes.length).toBeLessThanOrEqual(1);
  const removed = notes.length === 0 ? 0 : omissionNoteMetadata(notes[0]!)!.removed_messages;
  expect(removed + messages.length - notes.length).toBe(total);
  expect(new Set(messages.map((message) => message.id)).size).toBe(messages.length);
}

// ---------------------------------------------------------------------------
// 1. Fault injection in commit mode.

const FAULT_TURNS = 5;
// Smaller than the other tests' window, so a run compacts more than once.
const FAULT_WINDOW = 1_200;

interface FaultOutcome {
  fired: boolean;
  compactionWrite: boolean;
  resumes: number;
  /** Retries that had work left: the fault stopped the run before its end (or before its input was stored). */
  unfinished: number;
}

/** One run of the agent where the checkpointer's `failAt`-th write fails once; the run is then retried. */
async function runWithFault(
  saver: BaseCheckpointSaver,
  failAt: number,
  afterStore: boolean | "torn",
  durability: Durability,
): Promise<{ outcome: FaultOutcome; calls: number; compactionCalls: number[] }> {
  const injector = new FaultInjector(failAt, afterStore);
  const graph = buildGraph("commit", stateScriptedModel(), injector.wrap(saver), undefined, FAULT_WINDOW);
  const thread = `fault-${randomUUID()}`;
  let resumes = 0;
  let unfinished = 0;
  for (let turn = 0; turn < FAULT_TURNS; turn += 1) {
    const input = { messages: [humanTurn(turn)] };
    try {
      await graph.invoke(input, { ...config(thread), durability });
    } catch (error) {
      if (!(error instanceof InjectedFault)) throw error;
      // Right after the fault: nothing half-applied, nothing lost.
      const paused = await graph.getState(config(thread));
      const messages = (paused.values.messages as BaseMessage[] | undefined) ?? [];
      const ever = await idsEverStored(graph, thread);
      for (const message of messages) ever.add(message.id!);
      expectAccounted(messages, ever.size);
      expect(orderingProblems(messages, true)).toEqual([]);
      // Retry: resume the run if its input was stored, else send the input again.
      const inputStored = messages.some((message) => message.id === `turn${turn}`);
      if (!inputStored || paused.next.length > 0) unfinished += 1;
      await graph.invoke(inputStored ? null : input, { ...config(thread), durability });
      resumes += 1;
    }
    const snapshot = await graph.getState(config(thread));
    expect(snapshot.next).toEqual([]);
    expect((snapshot.values.messages as BaseMessage[]).at(-1)!.content).toBe(`Summary of turn${turn}: found the records.`);
  }
  const messages = (await graph.getState(config(thread))).values.messages as BaseMessage[];
  expect(orderingProblems(messages)).toEqual([]);
  expectAccounted(messages, FAULT_TURNS * TURN_MESSAGES);
  expect(messages.filter((message) => isOmissionNote(message))).toHaveLength(1);
  expect(messages.map((message) => message.id)).toContain(`turn${FAULT_TURNS - 1}`);
  const fired = injector.fired;
  return { outcome: { fired: fired !== null, compactionWrite: fired?.compactionWrite ?? false, resumes, unfinished }, calls: injector.calls, compactionCalls: injector.compactionCalls };
}

describe("commit mode under checkpointer faults", () => {
  const memory = () => ({ saver: new MemorySaver(), close: () => undefined });
  const sqlite = () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    return { saver, close: () => saver.db.close() };
  };
  // "sync" durability stops the run at the failed write, like a crash there; "async" (LangGraph's default) runs on and reports it at the end.
  const savers: { name: string; open(): { saver: BaseCheckpointSaver; close(): void }; stride: number; durability: Durability }[] = [
    { name: "MemorySaver", open: memory, stride: 2, durability: "sync" },
    { name: "MemorySaver", open: memory, stride: 4, durability: "async" },
    { name: "SqliteSaver", open: sqlite, stride: 5, durability: "sync" },
  ];

  const title = "$name, $durability durability: a write failing at any point leaves every message accounted for, and a retry finishes the job";
  it.each(savers)(title, async ({ open, stride, durability }) => {
    const dry = open();
    const { calls, compactionCalls } = await runWithFault(dry.saver, Number.POSITIVE_INFINITY, false, durability);
    dry.close();
    expect(calls).toBeGreaterThan(FAULT_TURNS * 10);
    expect(compactionCalls.length).toBeGreaterThan(0);
    // Every `stride`-th write, lost or stored alternately, and every write of a compaction, both ways.
    const plan: [number, boolean][] = [];
    for (let failAt = 1; failAt <= calls; failAt += stride) if (!compactionCalls.includes(failAt)) plan.push([failAt, plan.length % 2 === 1]);
    for (const failAt of compactionCalls) plan.push([failAt, false], [failAt, true]);

    let faults = 0;
    let atCompaction = 0;
    let resumes = 0;
    let unfinished = 0;
    for (const [failAt, afterStore] of plan) {
      const opened = open();
      const { outcome } = await runWithFault(opened.saver, failAt, afterStore, durability);
      opened.close();
      expect(outcome.fired).toBe(true);
      faults += 1;
      if (outcome.compactionWrite) atCompaction += 1;
      resumes += outcome.resumes;
      unfinished += outcome.unfinished;
    }
    diagnostic(
      `[graph-reliability] ${expect.getState().currentTestName}: ${calls} checkpointer writes per run, ${faults} faults injected ` +
        `(${atCompaction} on the compaction's write), ${resumes} retries completed (${unfinished} of them finishing a run the fault had stopped)`,
    );
    expect(resumes).toBe(faults);
    expect(atCompaction).toBe(compactionCalls.length * 2);
    // Under "sync" the fault stops the run: the retry really resumes from the checkpointer.
    if (durability === "sync") expect(unfinished).toBeGreaterThan(faults / 2);
  }, 120_000); // every fault point of a whole run, per saver: 53 s measured on a loaded 2-core machine

  it("the accounting catches a torn write (control: a saver that stores the removals but not the note)", async () => {
    const dry = await runWithFault(new MemorySaver(), Number.POSITIVE_INFINITY, false, "sync");
    const [firstCompaction] = dry.compactionCalls;
    const failure = await runWithFault(new MemorySaver(), firstCompaction!, "torn", "sync").then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).stack).toContain("expectAccounted");
  });
});

// ---------------------------------------------------------------------------
// 2. Interrupted between steps, resumed by a new graph on a reopened checkpointer.

interface Store {
  open(): Promise<BaseCheckpointSaver>;
  close(saver: BaseCheckpointSaver): Promise<void>;
  dispose(): Promise<void>;
}

const RESUME_TURNS = 6;

async function interruptedConversation(mode: Mode, store: Store): Promise<number> {
  const thread = `resume-${randomUUID()}`;
  let saver = await store.open();
  let resumes = 0;
  let compactedAfterResume = 0;
  for (let turn = 0; turn < RESUME_TURNS; turn += 1) {
    await buildGraph(mode, stateScriptedModel(), saver, ["tools"]).invoke({ messages: [humanTurn(turn)] }, config(thread));
    for (;;) {
      // A "restart": the old graph and connection are gone; a new process opens the same checkpoint store.
      await store.close(saver);
      saver = await store.open();
      const model = stateScriptedModel();
      const graph = buildGraph(mode, model, saver, ["tools"]);
      const paused = await graph.getState(config(thread));
      if (paused.next.length === 0) break;
      expect(paused.next).toEqual(["tools"]);
      const before = paused.values.messages as BaseMessage[];
      const pending = before.at(-1)!;
      expect(AIMessage.isInstance(pending) && (pending.tool_calls ?? []).length > 0).toBe(true);
      expect(orderingProblems(before, true)).toEqual([]);

      await graph.invoke(null, config(thread));
      resumes += 1;
      // What the model got after the resume: valid for a provider, and ending with the results of the paused calls.
      const sent = model.calls[0]!.messages;
      expect(orderingProblems(sent)).toEqual([]);
      const callIds = (pending as AIMessage).tool_calls!.map((call) => call.id);
      expect(sent.some((message) => message.id === pending.id)).toBe(true);
      const tail = sent.slice(-callIds.length);
      expect(tail.map((message) => (ToolMessage.isInstance(message) ? message.tool_call_id : message.type)).sort()).toEqual([...callIds].sort());
      expect(sent.some((message) => message.id === `turn${turn}`)).toBe(true);
      if (sent.some((message) => isOmissionNote(message))) compactedAfterResume += 1;
      expect(approximateTokenCounter(sent)).toBeLessThan(CONTEXT_WINDOW * 0.7);
    }
  }
  const graph = buildGraph(mode, stateScriptedModel(), saver, ["tools"]);
  const state = (await graph.getState(config(thread))).values;
  const messages = state.messages as BaseMessage[];
  expect(orderingProblems(messages)).toEqual([]);
  expect(messages.at(-1)!.content).toBe(`Summary of turn${RESUME_TURNS - 1}: found the records.`);
  if (mode === "view") {
    expect(messages).toHaveLength(RESUME_TURNS * TURN_MESSAGES);
    expect(messages.some((message) => isOmissionNote(message))).toBe(false);
    const view = state[COMPACTION_VIEW_KEY] as CompactionView;
    expect(view.hiddenIds.length).toBeGreaterThan(0);
    expect(view.hiddenIds.every((id) => messages.some((message) => message.id === id))).toBe(true);
  } else {
    expectAccounted(messages, RESUME_TURNS * TURN_MESSAGES);
    expect(messages.filter((message) => isOmissionNote(message))).toHaveLength(1);
  }
  await store.close(saver);
  // Two pauses per turn (the parallel calls, then the follow-up call), each resumed by a fresh graph.
  expect(resumes).toBe(RESUME_TURNS * 2);
  expect(compactedAfterResume).toBeGreaterThan(0);
  return resumes;
}

describe("a graph interrupted before its tools resumes from the checkpointer with a valid history", () => {
  const stores: { name: string; make(): Promise<Store | null> }[] = [
    {
      name: "SqliteSaver (file)",
      make: async () => {
        const dir = mkdtempSync(join(tmpdir(), "compaction-resume-"));
        const file = join(dir, "checkpoints.sqlite");
        return {
          open: async () => SqliteSaver.fromConnString(file),
          close: async (saver) => (saver as SqliteSaver).db.close(),
          dispose: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: "PostgresSaver",
      make: async () => {
        if (!(await requireServer("PostgreSQL", POSTGRES_URL))) return null;
        const schema = `compaction_resume_${randomUUID().replace(/-/g, "")}`;
        const first = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
        await first.setup();
        await first.end();
        return {
          open: async () => PostgresSaver.fromConnString(POSTGRES_URL, { schema }),
          close: async (saver) => (saver as PostgresSaver).end(),
          dispose: async () => {
            const saver = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
            // The saver owns the only connection pool; its typed API has no way to drop a schema.
            await (saver as unknown as { pool: { query(sql: string): Promise<unknown> } }).pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
            await saver.end();
          },
        };
      },
    },
  ];

  describe.each(stores)("$name", ({ make }) => {
    let store: Store | null = null;
    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => {
      await store?.dispose();
    });
    it.each(["view", "commit"] as const)("%s mode", async (mode) => {
      if (store === null) return;
      const resumes = await interruptedConversation(mode, store);
      diagnostic(`[graph-reliability] ${expect.getState().currentTestName}: ${resumes} resumes by a new graph on a reopened checkpointer`);
    });
  });
});

// ---------------------------------------------------------------------------
// 3. Bad options of the integrations not covered elsewhere: a typed error naming the value, nothing changed.

describe("bad options of the integrations", () => {
  const store = new InMemoryChatMessageHistory();
  const notAFunction = "archive";
  // [label, make, error class, the message must mention]
  const cases: [string, () => unknown, typeof TypeError | typeof RangeError, RegExp][] = [
    ["node: mode", () => createCompactionNode({ contextWindow: 100, mode: "foo" as never }), RangeError, /`mode`.*"foo"/],
    ["node: contextWindow NaN", () => createCompactionNode({ contextWindow: Number.NaN }), RangeError, /`contextWindow`.*NaN/],
    ["node: contextWindow fractional", () => createCompactionNode({ contextWindow: 100.5 }), RangeError, /`contextWindow`.*100\.5/],
    ["node: contextWindow string", () => createCompactionNode({ contextWindow: "100" as never }), RangeError, /`contextWindow`.*"100"/],
    ["node: compactTo equal to compactAt", () => createCompactionNode({ contextWindow: 100, compactAt: 0.5, compactTo: 0.5 }), RangeError, /`compactTo` \(0\.5\).*`compactAt` \(0\.5\)/],
    ["node: compactAt above 1", () => createCompactionNode({ contextWindow: 100, compactAt: 1.5 }), RangeError, /`compactAt`.*1\.5/],
    ["node: compactor", () => createCompactionNode({ contextWindow: 100, compactor: {} as never }), TypeError, /`compactor`.*an object/],
    ["node: tokenCounter", () => createCompactionNode({ contextWindow: 100, tokenCounter: 42 as never }), TypeError, /tokenCounter.*42/],
    ["compactMessages: targetTokens Infinity", () => compactMessages({ targetTokens: Number.POSITIVE_INFINITY }), RangeError, /`targetTokens`.*Infinity/],
    ["compactMessages: targetTokens string", () => compactMessages({ targetTokens: "10" as never }), TypeError, /`targetTokens`.*"10"/],
    ["compactMessages: targetTokens missing", () => compactMessages({} as never), TypeError, /`targetTokens`.*undefined/],
    ["compactMessages (Runnable): compactor", () => compactMessages({ targetTokens: 10, compactor: new Map() as never }), TypeError, /`compactor`.*a Map/],
    ["middleware: mode", () => compactionMiddleware({ contextWindow: 1000, mode: 3 as never }), RangeError, /`mode`.*got 3/],
    ["middleware: contextWindow", () => compactionMiddleware({ contextWindow: -5 }), RangeError, /`contextWindow`.*-5/],
    ["history: missing", () => new CompactingChatMessageHistory({ targetTokens: 10 } as never), TypeError, /`history`.*undefined/],
    ["history: a message array", () => new CompactingChatMessageHistory({ history: [] as never, targetTokens: 10 }), TypeError, /`history`.*an array of 0/],
    ["history: mode", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, mode: "foo" as never }), RangeError, /`mode`.*"foo"/],
    ["history: onEvict", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, mode: "commit", onEvict: notAFunction as never }), TypeError, /`onEvict`.*"archive"/],
    ["history: rewrite", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, mode: "commit", rewrite: 1 as never }), TypeError, /`rewrite`.*got 1/],
    ["history: compactAt with targetTokens", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, compactAt: 0.5 }), TypeError, /`compactAt`.*`targetTokens`/],
    ["history: compactor", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, compactor: "sliding" as never }), TypeError, /`compactor`.*"sliding"/],
    ["history: tokenCounter with targetTokens", () => new CompactingChatMessageHistory({ history: store, targetTokens: 10, tokenCounter: 7 as never }), TypeError, /`tokenCounter`.*got 7/],
    ["history: contextWindow", () => new CompactingChatMessageHistory({ history: store, contextWindow: 0 }), RangeError, /`contextWindow`.*got 0/],
  ];

  it.each(cases)("%s", (_label, make, kind, mention) => {
    expect(make).toThrow(kind);
    expect(make).toThrow(mention);
  });

  it("the store behind a rejected history is untouched", async () => {
    const messages = [new HumanMessage({ id: "q", content: "question" }), new AIMessage({ id: "a", content: "answer" })];
    const kept = new InMemoryChatMessageHistory(messages);
    expect(() => new CompactingChatMessageHistory({ history: kept, targetTokens: 0, mode: "commit", onEvict: {} as never })).toThrow(TypeError);
    expect((await kept.getMessages()).map((message) => message.id)).toEqual(["q", "a"]);
  });

  it("a node that fails inside the graph leaves the checkpointed thread as it was; bad overhead fails when the node is made", async () => {
    expect(() => createCompactionNode({ contextWindow: CONTEXT_WINDOW, mode: "commit", extraTokens: -1 })).toThrow(/`extraTokens`.*-1/);
    const saver = new MemorySaver();
    const thread = config(`bad-${randomUUID()}`);
    const good = buildGraph("commit", stateScriptedModel(), saver);
    await good.invoke({ messages: [humanTurn(0)] }, thread);
    const before = (await good.getState(thread)).values.messages as BaseMessage[];
    const failing = () => {
      throw new Error("tokenizer down");
    };
    // The system prompt is counted once the node exists; the counter's failure surfaces at the node's first run.
    const badNode = createCompactionNode({ contextWindow: CONTEXT_WINDOW, mode: "commit", systemMessage: "You are terse.", tokenCounter: failing });
    const bad = new StateGraph(MessagesAnnotation)
      .addNode("compact", badNode)
      .addEdge(START, "compact")
      .addEdge("compact", END)
      .compile({ checkpointer: saver }) as unknown as Graph;
    await expect(bad.invoke({ messages: [] }, thread)).rejects.toThrow(/tokenizer down/);
    const after = (await bad.getState(thread)).values.messages as BaseMessage[];
    expect(after.map((message) => message.id)).toEqual(before.map((message) => message.id));
  });
});
