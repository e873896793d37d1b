/**
 * Compaction events on real agents with a checkpointer, read the way a user
 * reads them: `streamEvents` (version "v2"), `on_custom_event` with the
 * documented names and data. A compaction, a declined one, a failed summary
 * and an overflow retry, from the middleware and from the node; nothing
 * with `events: false`.
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { RunCollectorCallbackHandler } from "@langchain/core/tracers/run_collector";

type Run = RunCollectorCallbackHandler["tracedRuns"][number];
import { CompactingChatMessageHistory, COMPACTION_DECLINED_EVENT, COMPACTION_EVENT, COMPACTION_OVERFLOW_RETRY_EVENT, COMPACTION_SUMMARY_FAILED_EVENT, SlidingWindowCompactor, SummarizationCompactor } from "../../src";
import type { CompactionEventData, TokenBreakdown } from "../../src";
import { ScriptedChatModel } from "../../src/testing";
import { ask, middlewareAgent, nodeAgent, question, thread, weatherModel } from "../support/runtime-agents";
import type { AgentGraph, HeardEvent } from "../support/runtime-agents";
import { ScriptedSummaryModel } from "../support/summary-model";

const NAMES = [COMPACTION_EVENT, COMPACTION_DECLINED_EVENT, COMPACTION_OVERFLOW_RETRY_EVENT, COMPACTION_SUMMARY_FAILED_EVENT];

/** The compaction events of one streamed invocation, from `streamEvents` v2. */
async function streamedEvents(agent: AgentGraph, text: string, id: string): Promise<HeardEvent[]> {
  const heard: HeardEvent[] = [];
  for await (const event of agent.streamEvents(question(text), { ...thread(id), version: "v2" })) {
    if (event.event === "on_custom_event" && NAMES.includes(event.name)) heard.push({ name: event.name, data: event.data as CompactionEventData });
  }
  return heard;
}

/** Streams questions until one shows a compaction event; returns that question's events. */
async function untilCompaction(agent: AgentGraph, id: string, names = NAMES): Promise<HeardEvent[]> {
  for (let index = 0; index < 30; index += 1) {
    const events = await streamedEvents(agent, `What is the weather in place ${index}?`, id);
    if (events.some((event) => names.includes(event.name))) return events;
  }
  throw new Error("no compaction event in 30 questions");
}

const total = (breakdown: TokenBreakdown) => Object.values(breakdown).reduce((sum, value) => sum + value, 0);
const CATEGORIES = ["system", "tools", "history", "summaries", "toolResults", "task"];

type Setup = "middleware" | "node";
function build(setup: Setup, options: Record<string, unknown>, fault?: (call: number) => unknown): AgentGraph {
  const model = weatherModel(fault === undefined ? {} : { fault });
  return setup === "middleware" ? middlewareAgent(model, options).agent : nodeAgent(model, options).agent;
}

describe.each(["middleware", "node"] as const)("%s", (setup) => {
  const integration = setup === "middleware" ? "middleware" : "langgraph";

  test("a compaction: its report, with a breakdown by category that adds up to the request", async () => {
    const agent = build(setup, {});
    const events = await untilCompaction(agent, "t");
    expect(events.map((event) => event.name)).toEqual([COMPACTION_EVENT]);
    const data = events[0]!.data;
    expect(data).toMatchObject({ integration, strategy: "sliding_window", stages: ["sliding_window"], forced: false });
    expect(data.tokensAfter).toBeLessThan(data.tokensBefore);
    expect(data.removed).toBeGreaterThan(0);
    expect(data.added).toBe(1); // the omission note
    expect(data.rewritten).toBe(0);
    expect(Number.isFinite(data.durationMs) && data.durationMs >= 0).toBe(true);
    const { before, after } = data.breakdown;
    expect(Object.keys(before).sort()).toEqual([...CATEGORIES].sort());
    // Each side: what the request carries besides its messages (prompt, schemas), plus the messages the compactor counted.
    expect(total(before) - before.system - before.tools).toBe(data.tokensBefore);
    expect(total(after) - after.system - after.tools).toBe(data.tokensAfter);
    expect(before.tools).toBeGreaterThan(0);
    expect(after.tools).toBe(before.tools);
    expect(after.system).toBe(before.system);
    // The note is the only summary; history and tool results went down; the task in progress is kept.
    for (const category of ["history", "toolResults", "task"] as const) expect(before[category]).toBeGreaterThan(0);
    expect(before.summaries).toBe(0);
    expect(after.summaries).toBeGreaterThan(0);
    expect(after.history + after.toolResults).toBeLessThan(before.history + before.toolResults);
    expect(after.task).toBe(before.task);
    expect(data.breakdown).toEqual(JSON.parse(JSON.stringify(data.breakdown)));
  });

  test("a declined compaction says why and what it would have freed", async () => {
    const agent = build(setup, { minGainTokens: 50_000 });
    const events = await untilCompaction(agent, "t");
    expect(events.map((event) => event.name)).toContain(COMPACTION_DECLINED_EVENT);
    const data = events.find((event) => event.name === COMPACTION_DECLINED_EVENT)!.data;
    expect(data.declined).toMatchObject({ reason: "min_gain", minGainTokens: 50_000 });
    expect(data.declined!.gainTokens).toBeGreaterThan(0);
    expect(data.declined!.gainTokens).toBeLessThan(50_000);
    expect(data.tokensAfter).toBe(data.tokensBefore);
    expect(data.breakdown.after).toEqual(data.breakdown.before);
    expect(events.some((event) => event.name === COMPACTION_EVENT)).toBe(false);
  });

  test("a summary that fails is an event of its own, and the compaction goes on without it", async () => {
    const summaries = new ScriptedSummaryModel(() => new Error("503 the summary service is overloaded"));
    const agent = build(setup, { compactor: [new SummarizationCompactor({ model: summaries, maxSummaryTokens: 150, retries: 0 }), new SlidingWindowCompactor()] });
    const events = await untilCompaction(agent, "t");
    const failed = events.filter((event) => event.name === COMPACTION_SUMMARY_FAILED_EVENT);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.data.failure).toMatchObject({ strategy: "summarization", reason: "model_error" });
    expect(failed[0]!.data.failure!.error).toMatch(/overloaded/);
    // The sliding window did the work.
    const applied = events.find((event) => event.name === COMPACTION_EVENT)!.data;
    expect(applied.strategy).toBe("pipeline");
    expect(applied.stages).toEqual(["summarization", "sliding_window"]);
    expect(applied.tokensAfter).toBeLessThan(applied.tokensBefore);
  });

  test("an overflow retry carries what the provider said", async () => {
    const error = new Error("prompt is too long: 5000 tokens > 3000 maximum");
    const agent = build(setup, {}, (call) => (call === 6 ? error : undefined));
    await ask(agent, "t", 3);
    const events = await streamedEvents(agent, "And in Oslo?", "t");
    const retry = events.filter((event) => event.name === COMPACTION_OVERFLOW_RETRY_EVENT);
    expect(retry).toHaveLength(1);
    expect(retry[0]!.data).toMatchObject({ integration, forced: true, overflow: { requestTokens: 5000, limitTokens: 3000, error: error.message } });
    expect(retry[0]!.data.overflow!.estimatedTokens).toBeGreaterThan(0);
  });

  test("a tracer (LangSmith's is one) sees each event as a run of its name under the run that compacted, the data as its outputs", async () => {
    const agent = build(setup, {});
    let traced: Run[] = [];
    let streamed: HeardEvent[] = [];
    for (let index = 0; index < 30 && traced.length === 0; index += 1) {
      const collector = new RunCollectorCallbackHandler();
      const heard: HeardEvent[] = [];
      const config = { ...thread("t"), version: "v2" as const, callbacks: [collector] };
      for await (const event of agent.streamEvents(question(`What is the weather in place ${index}?`), config)) {
        if (event.event === "on_custom_event" && NAMES.includes(event.name)) heard.push({ name: event.name, data: event.data as CompactionEventData });
      }
      const all = collector.tracedRuns.flatMap(function flatten(run: Run): Run[] {
        return [run, ...(run.child_runs ?? []).flatMap(flatten)];
      });
      traced = all.filter((run) => NAMES.includes(run.name));
      streamed = heard;
    }
    expect(traced.map((run) => run.name)).toEqual([COMPACTION_EVENT]);
    expect(traced[0]!.outputs).toEqual(streamed[0]!.data);
    expect(traced[0]!.parent_run_id).toBeDefined();
  });

  test("events: false dispatches none, the compaction happening all the same", async () => {
    const agent = build(setup, { events: false });
    let compacted = false;
    for (let index = 0; index < 20; index += 1) {
      const events = await streamedEvents(agent, `What is the weather in place ${index}?`, "t");
      expect(events).toEqual([]);
    }
    // The same questions compact with events on (the trigger fired within them).
    const on = build(setup, {});
    for (let index = 0; index < 20 && !compacted; index += 1) compacted = (await streamedEvents(on, `What is the weather in place ${index}?`, "t")).length > 0;
    expect(compacted).toBe(true);
  });
});

describe("the history wrapper, under RunnableWithMessageHistory", () => {
  async function chatEvents(events: boolean): Promise<{ heard: HeardEvent[]; compacted: boolean }> {
    const store = new InMemoryChatMessageHistory();
    const history = new CompactingChatMessageHistory({ history: store, contextWindow: 400, events });
    const model = new ScriptedChatModel({ reply: (_messages, call) => `Answer ${call}: ${"words ".repeat(40)}` });
    const chain = new RunnableWithMessageHistory({ runnable: model, getMessageHistory: async () => history });
    const heard: HeardEvent[] = [];
    for (let turn = 0; turn < 8; turn += 1) {
      for await (const event of chain.streamEvents(`Question ${turn} ${"more ".repeat(20)}`, { version: "v2", configurable: { sessionId: "s" } })) {
        if (event.event === "on_custom_event" && NAMES.includes(event.name)) heard.push({ name: event.name, data: event.data as CompactionEventData });
      }
    }
    // The model was sent fewer messages than the store holds: reads were compacted.
    const compacted = model.calls.at(-1)!.messages.length < (await store.getMessages()).length;
    return { heard, compacted };
  }

  test("each compaction of a read is an event; events: false sends none", async () => {
    const on = await chatEvents(true);
    expect(on.compacted).toBe(true);
    expect(on.heard.length).toBeGreaterThan(0);
    for (const { name, data } of on.heard) {
      expect(name).toBe(COMPACTION_EVENT);
      expect(data.integration).toBe("history");
      expect(data.tokensAfter).toBeLessThan(data.tokensBefore);
      expect(total(data.breakdown.before) - data.breakdown.before.system - data.breakdown.before.tools).toBe(data.tokensBefore);
    }
    const off = await chatEvents(false);
    expect(off.compacted).toBe(true);
    expect(off.heard).toEqual([]);
  });
});
