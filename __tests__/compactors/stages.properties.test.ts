/**
 * Properties of every stage and of pipelines, each on FC_RUNS
 * (default 1,000) random cases: messy histories (see `support/messy.ts`) for
 * "never throws, leaves the input unchanged, keeps protected messages,
 * reports what it did, is idempotent where that holds", and well-formed
 * conversations for "the result is valid for OpenAI, Anthropic and Gemini",
 * checked through their LangChain converters offline.
 *
 * Each property runs on the clock seed and on the fixed seeds of
 * `support/seeds.ts`, sharing the budget. Replay a failure with
 * `FC_SEED=<printed seed>`.
 */
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import * as fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import {
  CompactionPipeline,
  DEFAULT_PRUNING_PLACEHOLDER,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { Compactor, CompactionReport, OffloadStore, ProtectPredicate } from "../../src";
import { conversationArbitrary, snapshotMessages } from "../support/conversations";
import {
  buildWellFormedConversation,
  countEach,
  counterArbitrary,
  counterFor,
  messyPlanArbitrary,
  prepareMessyInput,
  resolveTarget,
  targetArbitrary,
  wellFormedPlanArbitrary,
} from "../support/messy";
import type { CounterName, MessyPlan, TargetPlan } from "../support/messy";
import { assertConvertsEverywhere, assertGemini } from "../support/providers";
import { assertOnSeedsAsync, casesIn } from "../support/seeds";
import { ScriptedSummaryModel } from "../support/summary-model";
import { diagnostic } from "../support/diagnostics";

const budget = Number(process.env.FC_RUNS ?? 1000);
/** Cases each property runs, over all its seeds. */
const numRuns = casesIn(budget);

// Each property runs its whole budget in one test: 24 s at most measured on a loaded 2-core machine.
jest.setTimeout(90_000);

const timings: Record<string, number> = {};
afterAll(() => diagnostic(`ms per property: ${JSON.stringify(timings)}`));

async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>): Promise<void> {
  const started = performance.now();
  await assertOnSeedsAsync(fc.asyncProperty(arbitrary, predicate), budget);
  timings[name] = Math.round(performance.now() - started);
}

// ---------------------------------------------------------------------------
// Stage plans: plain data, so fast-check shrinks and prints them

type SummaryBehaviour = "ok" | "throws" | "empty" | "huge" | "okThenThrows";

type StagePlan =
  | { kind: "pruning"; minKeepResults: number; minTokens: number; placeholder: "default" | "short" | "braces"; skipWeather: boolean }
  | { kind: "summarization"; minKeepSteps: number; maxSummaryTokens: number; behaviour: SummaryBehaviour }
  | { kind: "offload"; minKeepSteps: number; minTokens: number; previewChars: number; failingWrites: boolean }
  | { kind: "window"; minKeepSteps: number };

const pruningPlan = fc.record({
  kind: fc.constant("pruning" as const),
  minKeepResults: fc.integer({ min: 1, max: 4 }),
  minTokens: fc.constantFrom(0, 5, 50, 200),
  placeholder: fc.constantFrom("default" as const, "short" as const, "braces" as const),
  skipWeather: fc.boolean(),
});
const summarizationPlan = fc.record({
  kind: fc.constant("summarization" as const),
  minKeepSteps: fc.integer({ min: 0, max: 3 }),
  maxSummaryTokens: fc.integer({ min: 1, max: 300 }),
  behaviour: fc.constantFrom<SummaryBehaviour>("ok", "ok", "ok", "throws", "empty", "huge", "okThenThrows"),
});
const offloadPlan = fc.record({
  kind: fc.constant("offload" as const),
  minKeepSteps: fc.integer({ min: 1, max: 3 }),
  minTokens: fc.constantFrom(0, 5, 50, 200),
  previewChars: fc.constantFrom(0, 20, 200, 2000),
  failingWrites: fc.boolean(),
});
const windowPlan = fc.record({ kind: fc.constant("window" as const), minKeepSteps: fc.integer({ min: 0, max: 5 }) });

const PLACEHOLDERS = { default: DEFAULT_PRUNING_PLACEHOLDER, short: "[pruned]", braces: '{"pruned": "{tool_name}", "json": {"kept": true}}' };

/** A store whose writes fail for about a third of the keys (by the key, so a retry fails the same way). */
function storeFor(failing: boolean): OffloadStore {
  const store = new InMemoryStore();
  if (!failing) return store;
  return {
    put: async (namespace, key, value) => {
      if (key.charCodeAt(key.length - 1) % 3 === 0) throw new Error("write failed");
      await store.put(namespace, key, value);
    },
    get: (namespace, key) => store.get(namespace, key),
  };
}

function summaryScript(behaviour: SummaryBehaviour): (call: number) => string | Error {
  return (call) => {
    switch (behaviour) {
      case "ok":
        return `summary ${call}: objective, decisions, ids call_${call}`;
      case "throws":
        return new Error("provider unavailable");
      case "empty":
        return " ";
      case "huge":
        return "word ".repeat(20_000);
      case "okThenThrows":
        return call === 0 ? "the first summary" : new Error("second call failed");
    }
  };
}

function build(plan: StagePlan, protect: ProtectPredicate | undefined): Compactor {
  const shared = protect === undefined ? {} : { protect };
  switch (plan.kind) {
    case "pruning":
      return new ToolResultPruningCompactor({
        minKeepResults: plan.minKeepResults,
        minTokens: plan.minTokens,
        placeholder: PLACEHOLDERS[plan.placeholder],
        ...(plan.skipWeather ? { skip: (m: ToolMessage) => m.name === "weather" } : {}),
        ...shared,
      });
    case "summarization":
      return new SummarizationCompactor({
        model: new ScriptedSummaryModel(summaryScript(plan.behaviour)),
        minKeepSteps: plan.minKeepSteps,
        maxSummaryTokens: plan.maxSummaryTokens,
        ...shared,
      });
    case "offload":
      return new ToolResultOffloadCompactor({
        store: storeFor(plan.failingWrites),
        minKeepSteps: plan.minKeepSteps,
        minTokens: plan.minTokens,
        previewChars: plan.previewChars,
        ...shared,
      });
    case "window":
      return new SlidingWindowCompactor({ minKeepSteps: plan.minKeepSteps, ...shared });
  }
}

/** Which messages are protected: none, chosen input messages (by identity), or every k-th index. */
type ProtectPlan = { kind: "none" } | { kind: "some"; picks: number[] } | { kind: "everyKth"; k: number };

const protectPlan: fc.Arbitrary<ProtectPlan> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<ProtectPlan>({ kind: "none" }) },
  { weight: 2, arbitrary: fc.array(fc.nat(60), { minLength: 1, maxLength: 4 }).map((picks): ProtectPlan => ({ kind: "some", picks })) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 7 }).map((k): ProtectPlan => ({ kind: "everyKth", k })) },
);

/** The predicate and the input messages it protects. Index-based plans only for single stages: indices shift between stages. */
function protection(plan: ProtectPlan, messages: readonly BaseMessage[], single: boolean): { protect: ProtectPredicate | undefined; chosen: Set<BaseMessage> } {
  if (plan.kind === "none" || messages.length === 0) return { protect: undefined, chosen: new Set() };
  if (plan.kind === "everyKth" && single) {
    const chosen = new Set(messages.filter((_, i) => i % plan.k === 0));
    return { protect: (_m, i) => i % plan.k === 0, chosen };
  }
  const picks = plan.kind === "some" ? plan.picks : [0, plan.k];
  const chosen = new Set(picks.map((p) => messages[p % messages.length]!));
  return { protect: (m) => chosen.has(m), chosen };
}

// ---------------------------------------------------------------------------
// Independent readings of a conversation

/** Every call id an AI message names: parsed, invalid and raw OpenAI calls, and call content blocks. */
function callIds(message: BaseMessage): string[] {
  if (!AIMessage.isInstance(message)) return [];
  const raw = (message.additional_kwargs as { tool_calls?: { id?: unknown }[] } | undefined)?.tool_calls ?? [];
  const blocks = Array.isArray(message.content) ? (message.content as { type?: string; id?: unknown; call_id?: unknown }[]) : [];
  const ids = [
    ...(message.tool_calls ?? []).map((call) => call.id),
    ...(message.invalid_tool_calls ?? []).map((call) => call.id),
    ...(Array.isArray(raw) ? raw.map((call) => call?.id) : []),
    ...blocks.filter((b) => b?.type === "tool_use" || b?.type === "tool_call").map((b) => b.id),
    ...blocks.filter((b) => b?.type === "function_call").map((b) => b.call_id ?? b.id),
  ];
  return [...new Set(ids.filter((id): id is string => typeof id === "string" && id.length > 0))];
}

function resultId(message: BaseMessage): string | undefined {
  if (!ToolMessage.isInstance(message)) return undefined;
  const id = message.tool_call_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/** The protected messages and, by tool-call id in any shape, their exchange partners (calls with their results, results with their calls). */
function mustStay(messages: readonly BaseMessage[], chosen: ReadonlySet<BaseMessage>): Set<BaseMessage> {
  const stay = new Set(chosen);
  const asked = new Set(messages.flatMap(callIds));
  const answered = new Set(messages.map(resultId).filter((id): id is string => id !== undefined));
  const ids = new Set<string>();
  for (const message of chosen) {
    // A call pulls in what answers it (nothing, when nothing does); a result its call's exchange.
    for (const id of callIds(message)) if (answered.has(id)) ids.add(id);
    const id = resultId(message);
    if (id !== undefined && asked.has(id)) ids.add(id);
  }
  for (const message of messages) {
    if (callIds(message).some((id) => ids.has(id))) stay.add(message);
    const id = resultId(message);
    if (id !== undefined && ids.has(id)) stay.add(message);
  }
  return stay;
}

function describeList(messages: readonly BaseMessage[]): string {
  return messages.map((m, i) => `${i}:${m.type}${callIds(m).length ? ` calls ${callIds(m).join(",")}` : ""}${resultId(m) ? ` answers ${resultId(m)}` : ""}`).join(" ");
}

async function sum(counter: ReturnType<typeof counterFor>, messages: readonly BaseMessage[]): Promise<number> {
  return (await countEach(counter, messages)).reduce((a, b) => a + b, 0);
}

// ---------------------------------------------------------------------------
// The checks, shared by stages and pipelines

interface MessyCase {
  plan: MessyPlan;
  target: TargetPlan;
  counter: CounterName;
  protect: ProtectPlan;
}

const messyCase = (): fc.Arbitrary<MessyCase> =>
  fc.record({ plan: messyPlanArbitrary(), target: targetArbitrary, counter: counterArbitrary, protect: protectPlan });

/**
 * Never throws; input array and messages unchanged; protected messages and
 * their partners in the result as the same objects; the report adds up; and,
 * where `idempotent` says so, compacting the result again changes nothing.
 */
async function messyProperty(c: MessyCase, stages: StagePlan[], idempotent: (result: BaseMessage[], report: CompactionReport) => boolean): Promise<void> {
  const counter = counterFor(c.counter);
  const messages = await prepareMessyInput(c.plan, counter);
  const total = await sum(counter, messages);
  const target = resolveTarget(c.target, total);
  const single = stages.length === 1;
  const { protect, chosen } = protection(c.protect, messages, single);
  const compactor = single ? build(stages[0]!, protect) : new CompactionPipeline(stages.map((s) => build(s, protect)));

  const elements = [...messages];
  const before = snapshotMessages(messages);
  let report: CompactionReport;
  try {
    report = await compactor.compactWithReport(messages, target, counter);
  } catch (error) {
    throw new Error(`threw ${(error as Error).stack}\n  input: ${describeList(messages)}`);
  }
  if (messages.some((m, i) => m !== elements[i]) || messages.length !== elements.length) throw new Error("the input array was changed");
  const after = snapshotMessages(messages);
  if (!isDeepStrictEqual(after, before)) expect(after).toStrictEqual(before);

  expect(report.tokensBefore).toBe(total);
  if (report.messages === null) {
    expect(report.tokensAfter).toBe(total);
    expect(report.removed.length + report.rewritten.length + report.added.length).toBe(0);
    return;
  }
  const result = report.messages;
  expect(result).not.toBe(messages);
  if (total <= target) throw new Error(`compacted a conversation that fits (${total} <= ${target})`);
  expect(report.tokensAfter).toBe(await sum(counter, result));
  // Everything in the result is an input message, a replacement, or an added message; every input message is kept, rewritten or removed.
  const replacements = new Set(report.rewritten.map((r) => r.replacement));
  const added = new Set(report.added);
  for (const message of result) if (!elements.includes(message) && !replacements.has(message) && !added.has(message)) throw new Error("an unreported message in the result");
  const kept = result.filter((m) => elements.includes(m)).length;
  expect(kept + report.rewritten.length + report.removed.length).toBe(messages.length);
  for (const message of mustStay(messages, chosen)) {
    if (!result.includes(message)) throw new Error(`a protected message (or its partner) was removed or rewritten\n  input: ${describeList(messages)}`);
  }
  // Index-based protection names other messages in the shorter result, so only identity-based protection can be idempotent.
  if (c.protect.kind !== "everyKth" && idempotent(result, report)) {
    const again = await compactor.compact(result, target, counter);
    if (again !== null) throw new Error(`a second compaction changed the result again\n  first: ${describeList(result)}\n  second: ${describeList(again)}`);
  }
}

interface WellFormedCase {
  messages: () => BaseMessage[];
  target: TargetPlan;
  counter: CounterName;
  protect: ProtectPlan;
}

const wellFormedCase: fc.Arbitrary<WellFormedCase> = fc.record({
  messages: fc.oneof(
    wellFormedPlanArbitrary().map((plan) => Object.assign(() => buildWellFormedConversation(plan), { toString: () => JSON.stringify(plan) })),
    conversationArbitrary().map((list) => Object.assign(() => list, { toString: () => describeList(list) })),
  ),
  target: targetArbitrary,
  counter: counterArbitrary,
  protect: protectPlan,
});

/** Valid input stays valid for every provider, also when compacted again at half the target. */
async function validProperty(c: WellFormedCase, stages: StagePlan[], seen: { compacted: number }): Promise<void> {
  const messages = c.messages();
  assertConvertsEverywhere(messages); // the generators must produce valid input, or the property proves nothing
  const counter = counterFor(c.counter);
  const target = resolveTarget(c.target, await sum(counter, messages));
  const { protect } = protection(c.protect, messages, stages.length === 1);
  const compactor = stages.length === 1 ? build(stages[0]!, protect) : new CompactionPipeline(stages.map((s) => build(s, protect)));
  const result = await compactor.compact(messages, target, counter);
  if (result === null) return;
  seen.compacted += 1;
  try {
    assertConvertsEverywhere(result);
    const again = await compactor.compact(result, Math.floor(target / 2), counter);
    if (again !== null) assertConvertsEverywhere(again);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n  input:  ${describeList(messages)}\n  result: ${describeList(result)}`);
  }
}

// ---------------------------------------------------------------------------

const STAGES: { name: string; plan: fc.Arbitrary<StagePlan>; idempotent: (plan: StagePlan) => boolean }[] = [
  // Pruning and offloading never touch a rewritten result again, and stop only at the target or when out of candidates.
  { name: "ToolResultPruningCompactor", plan: pruningPlan, idempotent: () => true },
  { name: "ToolResultOffloadCompactor", plan: offloadPlan, idempotent: () => true },
  // A summary model that always answers leaves nothing a second run could summarize; a failing one may succeed later.
  { name: "SummarizationCompactor", plan: summarizationPlan, idempotent: (plan) => plan.kind === "summarization" && plan.behaviour === "ok" },
  // The sliding window's own idempotence (same kept messages) is property 5 of properties.test.ts.
  { name: "SlidingWindowCompactor", plan: windowPlan, idempotent: () => false },
];

describe("the checkers bite", () => {
  test("Gemini's rules reject an unanswered call and a stray response", () => {
    expect(() => assertGemini([{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ functionCall: { name: "f" } }] }, { role: "user", parts: [{ text: "again" }] }])).toThrow(/not answered/);
    expect(() => assertGemini([{ role: "user", parts: [{ functionResponse: { name: "f" } }] }])).toThrow(/answers no open/);
    expect(() => assertGemini([{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ functionCall: { name: "f" } }] }, { role: "user", parts: [{ functionResponse: { name: "f" } }] }])).not.toThrow();
    const call = new AIMessage({ content: "", tool_calls: [{ id: "t1", name: "f", args: {}, type: "tool_call" }] });
    const separated = [new HumanMessage("q"), call, new HumanMessage("again"), new ToolMessage({ tool_call_id: "t1", name: "f", content: "r" })];
    expect(() => assertConvertsEverywhere(separated)).toThrow();
  });
});

describe.each(STAGES)("$name properties", ({ name, plan, idempotent }) => {
  test("on messy input: never throws, input unchanged, protected messages kept, report adds up, idempotent where it holds", async () => {
    await check(`${name} messy`, fc.tuple(messyCase(), plan), ([c, stage]) => messyProperty(c, [stage], () => idempotent(stage)));
  });

  test("on valid input: every result is valid for OpenAI, Anthropic and Gemini", async () => {
    const seen = { compacted: 0 };
    await check(`${name} valid`, fc.tuple(wellFormedCase, plan), ([c, stage]) => validProperty(c, [stage], seen));
    diagnostic(`${name}: ${seen.compacted} of ${numRuns} valid cases compacted and checked`);
    expect(seen.compacted).toBeGreaterThan(numRuns / 20);
  });
});

describe("CompactionPipeline properties", () => {
  const anyStage: fc.Arbitrary<StagePlan> = fc.oneof(pruningPlan, offloadPlan, summarizationPlan, windowPlan);
  const pipelinePlan = fc.array(anyStage, { minLength: 1, maxLength: 3 });
  const idempotentPipeline = (stages: StagePlan[]) =>
    stages.every((s) => s.kind === "pruning" || s.kind === "offload" || (s.kind === "summarization" && s.behaviour === "ok"));

  test("on messy input: never throws, input unchanged, protected messages kept, report adds up", async () => {
    await check("pipeline messy", fc.tuple(messyCase(), pipelinePlan), ([c, stages]) => messyProperty(c, stages, () => idempotentPipeline(stages)));
  });

  test("on valid input: every result is valid for OpenAI, Anthropic and Gemini", async () => {
    const seen = { compacted: 0 };
    await check("pipeline valid", fc.tuple(wellFormedCase, pipelinePlan), ([c, stages]) => validProperty(c, stages, seen));
    diagnostic(`pipelines: ${seen.compacted} of ${numRuns} valid cases compacted and checked`);
    expect(seen.compacted).toBeGreaterThan(numRuns / 4);
  });
});
