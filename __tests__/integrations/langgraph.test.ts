import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { AIMessage, BaseMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, MemorySaver, MessagesAnnotation, messagesStateReducer, REMOVE_ALL_MESSAGES, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { approximateTokenCounter, omissionNoteMetadata, isOmissionNote, SlidingWindowCompactor } from "../../src";
import {
  COMPACTION_VIEW_KEY,
  CompactionAnnotation,
  createCompactionNode,
} from "../../src/integrations/langgraph";
import type { CompactionNode, CompactionNodeUpdate, CompactionView } from "../../src/integrations/langgraph";
import { ScriptedChatModel } from "../../src/testing";
import { archiveGraph, CONTEXT_WINDOW, tools, TURN_MESSAGES } from "../support/archive-tools";
import { POSTGRES_URL, requireServer } from "../support/servers";
import { assertToolPairs } from "../support/tool-pairing";

// ---------------------------------------------------------------------------
// The agent: two real tools, a scripted model that calls them, a small window.

const PROMPT = "You are an archivist. Use the tools.";
const CALLS_PER_TURN = 3;

/** Three calls per user turn: parallel lookup + weather, one more lookup, an answer. */
function scriptedModel(prefix: string): ScriptedChatModel {
  return new ScriptedChatModel({
    usage: approximateTokenCounter,
    // Its own reply ids: a second model on the same thread must not reuse the first one's.
    idPrefix: prefix,
    reply: (_messages, call) => {
      const turn = Math.floor(call / CALLS_PER_TURN);
      switch (call % CALLS_PER_TURN) {
        case 0:
          return {
            content: "",
            tool_calls: [
              { id: `${prefix}-l${call}`, name: "lookup", args: { topic: `topic ${turn}` } },
              { id: `${prefix}-w${call}`, name: "weather", args: { city: `City ${turn}` } },
            ],
          };
        case 1:
          return { content: "", tool_calls: [{ id: `${prefix}-m${call}`, name: "lookup", args: { topic: `more on ${turn}` } }] };
        default:
          return `Summary of topic ${turn}: found the records.`;
      }
    },
  });
}

type Mode = "view" | "commit";
type Kind = "createReactAgent" | "StateGraph";

interface NodeCall {
  stateIds: (string | undefined)[];
  update: CompactionNodeUpdate;
}

/** Wraps the node to record what it read and returned. */
function recording(node: CompactionNode, calls: NodeCall[]): CompactionNode {
  return async (state) => {
    const stateIds = state.messages.map((message) => message.id);
    const update = await node(state);
    calls.push({ stateIds, update });
    return update;
  };
}

interface Agent {
  invoke(input: { messages: BaseMessage[] }, config: { configurable: { thread_id: string } }): Promise<unknown>;
  getState(config: { configurable: { thread_id: string } }): Promise<{ values: Record<string, unknown> }>;
  getStateHistory(config: { configurable: { thread_id: string } }): AsyncIterableIterator<{ values: Record<string, unknown>; next: string[] }>;
}

function buildAgent(kind: Kind, mode: Mode, model: ScriptedChatModel, checkpointer: BaseCheckpointSaver, calls: NodeCall[]): Agent {
  const withPrompt = kind === "createReactAgent";
  const node = recording(
    createCompactionNode({
      contextWindow: CONTEXT_WINDOW,
      compactAt: 0.7,
      compactTo: 0.4,
      mode,
      tools,
      ...(withPrompt ? { systemMessage: PROMPT } : {}),
      compactor: new SlidingWindowCompactor({ minKeepSteps: 1 }),
    }),
    calls,
  );
  if (kind === "createReactAgent") {
    return createReactAgent({
      llm: model,
      tools,
      prompt: PROMPT,
      stateSchema: CompactionAnnotation,
      preModelHook: node,
      checkpointer,
    }) as unknown as Agent;
  }
  return archiveGraph(mode, node, model, { checkpointer }) as Agent;
}

const ids = (messages: BaseMessage[]) => messages.map((message) => message.id);

/** The states right before each model call, oldest first, and the states right before each compaction node run. */
async function checkpointsBefore(agent: Agent, thread: string, node: string) {
  const found: Record<string, unknown>[] = [];
  for await (const snapshot of agent.getStateHistory({ configurable: { thread_id: thread } })) {
    if (snapshot.next.length === 1 && snapshot.next[0] === node) found.push(snapshot.values);
  }
  return found.reverse();
}

interface Saver {
  name: string;
  open(): Promise<{ saver: BaseCheckpointSaver; close(): Promise<void> } | null>;
}

const savers: Saver[] = [
  { name: "MemorySaver", open: async () => ({ saver: new MemorySaver(), close: async () => undefined }) },
  {
    name: "SqliteSaver",
    open: async () => {
      const saver = SqliteSaver.fromConnString(":memory:");
      return { saver, close: async () => saver.db.close() };
    },
  },
  {
    name: "PostgresSaver",
    open: async () => {
      if (!(await requireServer("PostgreSQL", POSTGRES_URL))) return null;
      const schema = `compaction_test_${randomUUID().replace(/-/g, "")}`;
      const saver = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
      await saver.setup();
      return {
        saver,
        close: async () => {
          // The saver owns the only connection pool; its typed API has no way to drop a schema.
          const pool = (saver as unknown as { pool: { query(sql: string): Promise<unknown> } }).pool;
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await saver.end();
        },
      };
    },
  },
];

const cases: [string, Kind, Mode][] = [];
for (const kind of ["createReactAgent", "StateGraph"] as const) for (const mode of ["view", "commit"] as const) cases.push([`${kind} ${mode}`, kind, mode]);

describe.each(savers)("createCompactionNode with $name", (saverCase) => {
  let opened: Awaited<ReturnType<Saver["open"]>> = null;
  let skipped = false;
  beforeAll(async () => {
    opened = await saverCase.open();
    skipped = opened === null;
  });
  afterAll(async () => {
    await opened?.close();
  });

  it.each(cases)("%s: a multi-turn tool agent sees a compacted, valid view and resumes from its checkpoint", async (_label, kind, mode) => {
    if (skipped) return;
    const saver = opened!.saver;
    const thread = `thread-${randomUUID()}`;
    const config = { configurable: { thread_id: thread } };
    const model = scriptedModel("a");
    const nodeCalls: NodeCall[] = [];
    const agent = buildAgent(kind, mode, model, saver, nodeCalls);
    const turns = 6;
    for (let turn = 0; turn < turns; turn += 1) {
      await agent.invoke({ messages: [new HumanMessage(`Turn ${turn}: what does the archive hold on topic ${turn}?`)] }, config);
    }
    expect(model.calls).toHaveLength(turns * CALLS_PER_TURN);

    const trigger = CONTEXT_WINDOW * 0.7;
    const beforeModel = await checkpointsBefore(agent, thread, "agent");
    const beforeNode = await checkpointsBefore(agent, thread, kind === "createReactAgent" ? "pre_model_hook" : "compact");
    expect(beforeModel).toHaveLength(model.calls.length);
    expect(beforeNode).toHaveLength(model.calls.length);
    let compactedCalls = 0;
    model.calls.forEach(({ messages: request }, call) => {
      const sent = kind === "createReactAgent" ? request.slice(1) : request;
      if (kind === "createReactAgent") expect(request[0]!.content).toBe(PROMPT);
      // Within budget: the provider-style count (prompt and tool schemas included) stays below the trigger.
      expect(model.requestTokens(model.calls[call]!)).toBeLessThan(trigger);
      assertToolPairs(request);
      // The newest message of the state is the newest message sent.
      const newest = (beforeNode[call]!.messages as BaseMessage[]).at(-1)!;
      expect(sent.at(-1)!.id).toBe(newest.id);
      // What was sent is what the checkpoint recorded for the model.
      const stateForModel = beforeModel[call]!;
      const recorded = (mode === "view" ? stateForModel.llmInputMessages : stateForModel.messages) as BaseMessage[];
      expect(ids(sent)).toEqual(ids(recorded));
      if (sent.some((message) => isOmissionNote(message))) compactedCalls += 1;
    });
    expect(compactedCalls).toBeGreaterThan(0);

    const total = turns * TURN_MESSAGES;
    const state = (await agent.getState(config)).values;
    const messages = state.messages as BaseMessage[];
    expect(new Set(ids(messages)).size).toBe(messages.length);
    if (mode === "view") {
      // Nothing lost: the full history, no note in it; the cut and its note survive the checkpointer.
      expect(messages).toHaveLength(total);
      expect(messages.some((message) => isOmissionNote(message))).toBe(false);
      const view = state[COMPACTION_VIEW_KEY] as CompactionView;
      expect(view.hiddenIds.length).toBeGreaterThan(0);
      expect(view.added!.map(({ message }) => isOmissionNote(message))).toEqual([true]);
      expect(view.hiddenIds.every((id) => messages.some((message) => message.id === id))).toBe(true);
      // The node wrote the cut only when it moved.
      const writes = nodeCalls.filter((entry) => COMPACTION_VIEW_KEY in entry.update).length;
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThan(nodeCalls.length / 3);
    } else {
      const notes = messages.filter((message) => isOmissionNote(message));
      expect(notes).toHaveLength(1);
      expect(messages.length).toBeLessThan(total);
      expect(omissionNoteMetadata(notes[0]!)!.removed_messages + messages.length - 1).toBe(total);
      assertToolPairs(messages);
      for (const entry of nodeCalls) {
        for (const message of entry.update.messages ?? []) {
          if (!RemoveMessage.isInstance(message)) continue;
          expect(message.id).not.toBe(REMOVE_ALL_MESSAGES);
          expect(entry.stateIds).toContain(message.id);
        }
      }
    }

    // A new graph instance (and model) on the same checkpointer and thread picks up where the old one stopped.
    const lastBefore = model.calls.at(-1)!.messages;
    const resumedModel = scriptedModel("b");
    const resumedCalls: NodeCall[] = [];
    const resumed = buildAgent(kind, mode, resumedModel, saver, resumedCalls);
    await resumed.invoke({ messages: [new HumanMessage("One more: and topic 99?")] }, config);
    expect(resumedModel.calls).toHaveLength(CALLS_PER_TURN);
    const first = resumedModel.calls[0]!.messages;
    expect(first.some((message) => isOmissionNote(message))).toBe(true);
    expect(first.at(-1)!.content).toBe("One more: and topic 99?");
    expect(resumedModel.requestTokens(resumedModel.calls[0]!)).toBeLessThan(trigger);
    const movedNow = mode === "view" ? COMPACTION_VIEW_KEY in resumedCalls[0]!.update : (resumedCalls[0]!.update.messages ?? []).length > 0;
    if (!movedNow) {
      // The same prefix as before the restart, plus what came since: a prompt cache would still hit.
      expect(ids(first.slice(0, lastBefore.length))).toEqual(ids(lastBefore));
      expect(first.length).toBeGreaterThan(lastBefore.length);
    }
    const after = (await resumed.getState(config)).values.messages as BaseMessage[];
    if (mode === "view") expect(after).toHaveLength(total + TURN_MESSAGES);
    else expect(omissionNoteMetadata(after.find((m) => isOmissionNote(m))!)!.removed_messages + after.length - 1).toBe(total + TURN_MESSAGES);
  });
});

// ---------------------------------------------------------------------------
// The node on its own.

function longHistory(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage({ id: "sys", content: "Instructions." })];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `question ${turn} ${"words ".repeat(20)}` }));
    messages.push(new AIMessage({ id: `c${turn}`, content: "", tool_calls: [{ id: `t${turn}`, name: "lookup", args: { turn } }] }));
    messages.push(new ToolMessage({ id: `r${turn}`, tool_call_id: `t${turn}`, content: `result ${"data ".repeat(40)}` }));
    messages.push(new AIMessage({ id: `a${turn}`, content: `answer ${turn}` }));
  }
  messages.push(new HumanMessage({ id: "task", content: "And now?" }));
  return messages;
}

/**
 * What compacting `longHistory(turns)` to `target` must leave, by the rules and not by the compactor: the task
 * has no steps, so after the system prompt and the task the newest whole turns are kept while they fit
 * (rule 5), and the note stands after the system prompt (rule 7). Ids in order, "note" for the note.
 */
function expectedCompaction(turns: number, target: number): { keptTurns: number; ids: string[] } {
  const history = longHistory(turns);
  const size = (ids: string[]) => approximateTokenCounter(history.filter((message) => ids.includes(message.id!)));
  const turnIds = (turn: number) => [`h${turn}`, `c${turn}`, `r${turn}`, `a${turn}`];
  let available = target - size(["sys", "task"]);
  let keptTurns = 0;
  for (let turn = turns - 1; turn >= 0 && size(turnIds(turn)) <= available; turn -= 1) {
    available -= size(turnIds(turn));
    keptTurns += 1;
  }
  const kept = Array.from({ length: keptTurns }, (_, k) => turnIds(turns - keptTurns + k)).flat();
  return { keptTurns, ids: ["sys", "note", ...kept, "task"] };
}

describe("createCompactionNode: the update it returns", () => {
  const window = Math.ceil(approximateTokenCounter(longHistory(10)) / 0.8);

  it("view: hands the model the kept state messages themselves, and the note", async () => {
    const node = createCompactionNode({ contextWindow: window });
    const messages = longHistory(10);
    const update = await node({ messages, [COMPACTION_VIEW_KEY]: null });
    const sent = update.llmInputMessages!;
    expect(sent.map((message) => (isOmissionNote(message) ? "note" : message.id))).toEqual(expectedCompaction(10, Math.floor(window * 0.4)).ids);
    for (const message of sent) if (!isOmissionNote(message)) expect(messages).toContain(message);
    expect(sent.filter((message) => isOmissionNote(message))).toHaveLength(1);
    expect(update[COMPACTION_VIEW_KEY]!.hiddenIds.length).toBe(messages.length - (sent.length - 1));
    expect(update.messages).toBeUndefined();

    // Next call with the remembered cut and one more message: same prefix, cut not rewritten.
    const grown = [...messages, new AIMessage({ id: "more", content: "thinking" })];
    const next = await node({ messages: grown, [COMPACTION_VIEW_KEY]: update[COMPACTION_VIEW_KEY]! });
    expect(next[COMPACTION_VIEW_KEY]).toBeUndefined();
    expect(next.llmInputMessages!.slice(0, sent.length)).toEqual(sent);
    expect(next.llmInputMessages!.at(-1)!.id).toBe("more");
  });

  it("view: refuses a state without the key instead of silently forgetting the cut", async () => {
    const node = createCompactionNode({ contextWindow: window });
    await expect(node({ messages: longHistory(2) })).rejects.toThrow(new RegExp(`state key \`${COMPACTION_VIEW_KEY}\`.*CompactionAnnotation`));
  });

  it("commit: the messages reducer turns the state into exactly the compacted list, note in place", async () => {
    const node = createCompactionNode({ contextWindow: window, mode: "commit" });
    for (const minTurns of [10, 14]) {
      const messages = longHistory(minTurns);
      const update = await node({ messages });
      const written = update.messages!;
      const removals = written.filter((message) => RemoveMessage.isInstance(message));
      expect(removals.length).toBeGreaterThan(0);
      expect(removals.every((message) => message.id !== REMOVE_ALL_MESSAGES)).toBe(true);
      const result = messagesStateReducer(messages, written);
      // Independently of the compactor: the system prompt, the note, the newest turns that fit and the task.
      const { keptTurns, ids: expectedIds } = expectedCompaction(minTurns, Math.floor(window * 0.4));
      expect(keptTurns).toBeGreaterThan(0);
      expect(keptTurns).toBeLessThan(minTurns);
      expect(result.map((message) => (isOmissionNote(message) ? "note" : message.id))).toEqual(expectedIds);
      result.forEach((message) => {
        if (!isOmissionNote(message)) expect(message).toBe(messages.find((original) => original.id === message.id));
      });
      expect(omissionNoteMetadata(result[1]!)!.removed_messages).toBe((minTurns - keptTurns) * 4);
      for (const message of result) if (!isOmissionNote(message)) expect(messages).toContain(message);

      // A second compaction folds the first note in and still touches only ids in state.
      const grown = [...result];
      for (let index = 0; index < 12; index += 1) {
        grown.push(new AIMessage({ id: `x${index}`, content: "", tool_calls: [{ id: `xt${index}`, name: "lookup", args: {} }] }));
        grown.push(new ToolMessage({ id: `xr${index}`, tool_call_id: `xt${index}`, content: "more ".repeat(30) }));
      }
      const second = await node({ messages: grown });
      for (const message of second.messages!) if (RemoveMessage.isInstance(message)) expect(ids(grown)).toContain(message.id);
      const again = messagesStateReducer(grown, second.messages!);
      const notes = again.filter((message) => isOmissionNote(message));
      expect(notes).toHaveLength(1);
      expect(omissionNoteMetadata(notes[0]!)!.removed_messages + again.length - 1).toBe(grown.length - 1 + omissionNoteMetadata(result[1]!)!.removed_messages);
      assertToolPairs(again);
    }
  });

  it("commit: returns nothing when under the trigger", async () => {
    const node = createCompactionNode({ contextWindow: window * 10, mode: "commit" });
    expect(await node({ messages: longHistory(10) })).toEqual({});
  });

  it("commit: a message to remove without an id is a TypeError, not a broken update", async () => {
    const node = createCompactionNode({ contextWindow: window, mode: "commit" });
    const messages = longHistory(10);
    messages[1] = new HumanMessage(`question 0 ${"words ".repeat(20)}`);
    await expect(node({ messages })).rejects.toThrow(/has none \(human message.*messages reducer/);
  });

  it("rejects bad options with typed errors", () => {
    expect(() => createCompactionNode({ contextWindow: 100, mode: "rewrite" as never })).toThrow(new RangeError('`mode` must be "view" or "commit", got "rewrite"'));
    expect(() => createCompactionNode({ contextWindow: 0 })).toThrow(/contextWindow.*got 0/);
    expect(() => createCompactionNode({ contextWindow: 100, compactAt: 0.3, compactTo: 0.5 })).toThrow(RangeError);
    expect(() => createCompactionNode(null as never)).toThrow(TypeError);
  });

  it("refuses bad tools when it is created, and bad state when called", async () => {
    expect(() => createCompactionNode({ contextWindow: 100, tools: "lookup" as never })).toThrow(/`tools` must be an array/);
    const node = createCompactionNode({ contextWindow: 100 });
    await expect(node({ messages: [new HumanMessage("a"), "b" as never], [COMPACTION_VIEW_KEY]: null })).rejects.toThrow(
      /`state\.messages\[1\]` must be a BaseMessage/,
    );
  });
});

describe("commit mode and parallel branches", () => {
  /** A graph where `compact` and another branch write messages in the same step. */
  async function runParallel(compact: (state: { messages: BaseMessage[] }) => Promise<{ messages?: BaseMessage[] }>) {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("audit", async () => ({ messages: [new AIMessage({ content: "audit entry" })] }))
      .addNode("compact", compact)
      .addEdge(START, "audit")
      .addEdge(START, "compact")
      .addEdge("audit", END)
      .addEdge("compact", END)
      .compile({ checkpointer: new MemorySaver() });
    const result = await graph.invoke({ messages: longHistory(10) }, { configurable: { thread_id: randomUUID() } });
    return result.messages;
  }
  const window = Math.ceil(approximateTokenCounter(longHistory(10)) / 0.8);

  it("keeps the other branch's write", async () => {
    const messages = await runParallel(createCompactionNode({ contextWindow: window, mode: "commit" }));
    expect(messages.some((message) => message.content === "audit entry")).toBe(true);
    expect(messages.filter((message) => isOmissionNote(message))).toHaveLength(1);
    expect(messages.length).toBeLessThan(longHistory(10).length);
  });

  it("where REMOVE_ALL_MESSAGES would lose it (the control)", async () => {
    const compactor = new SlidingWindowCompactor();
    const messages = await runParallel(async (state) => {
      const compacted = (await compactor.compact(state.messages, Math.floor(window * 0.4)))!;
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...compacted] };
    });
    expect(messages.some((message) => isOmissionNote(message))).toBe(true);
    expect(messages.some((message) => message.content === "audit entry")).toBe(false);
  });
});

describe("the main entry", () => {
  it("does not load @langchain/langgraph", () => {
    const script =
      "require('./src'); const loaded = Object.keys(require.cache).filter((p) => p.includes('@langchain/langgraph')); console.log(JSON.stringify(loaded));";
    const out = execFileSync(process.execPath, ["--require", "tsx/cjs", "-e", script], { cwd: `${__dirname}/../..`, encoding: "utf8" });
    expect(JSON.parse(out.trim().split("\n").at(-1)!)).toEqual([]);
    const sub = execFileSync(
      process.execPath,
      ["--require", "tsx/cjs", "-e", "const m = require('./src/integrations/langgraph'); console.log(typeof m.createCompactionNode, typeof m.CompactionAnnotation)"],
      { cwd: `${__dirname}/../..`, encoding: "utf8" },
    );
    expect(sub.trim().split("\n").at(-1)).toBe("function object");
  });
});
