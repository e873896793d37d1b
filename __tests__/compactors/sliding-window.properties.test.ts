/**
 * The nine properties of the compactor, each checked on at least
 * FC_RUNS (default 1,000) random cases: messy histories with random targets
 * (0, tiny, fractions of the input, huge), `minKeepSteps` 0..5, note
 * templates, caches and counters (mostly the approximate one; tiktoken, an
 * async counter and a model-like counter in a smaller share).
 *
 * Each property runs on the clock seed and on the fixed seeds of
 * `support/seeds.ts`, sharing the budget. Replay a failure with
 * `FC_SEED=<printed seed>`; fast-check also prints the shrunk plan and its path.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";
import * as fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import { SlidingWindowCompactor } from "../../src/compactors/sliding-window";
import type { CompactionReport } from "../../src/compactors/report";
import { layoutConversation } from "../../src/messages/layout";
import { conversationArbitrary, snapshotMessages } from "../support/conversations";
import { assertAnthropic, assertConvertsEverywhere, assertOpenAICompletions, assertOpenAIResponses } from "../support/providers";
import { assertOnSeedsAsync, casesIn } from "../support/seeds";
import {
  buildWellFormedConversation,
  compactorOptions,
  compactorPlanArbitrary,
  countEach,
  counterArbitrary,
  counterFor,
  messyPlanArbitrary,
  prepareMessyInput,
  resolveTarget,
  targetArbitrary,
  wellFormedPlanArbitrary,
} from "../support/messy";
import type { CompactorPlan, CounterName, MessyPlan, TargetPlan } from "../support/messy";
import { diagnostic } from "../support/diagnostics";

const budget = Number(process.env.FC_RUNS ?? 1000);
/** Cases each property runs, over all its seeds. */
const numRuns = casesIn(budget);

// Each property runs its whole budget in one test: 36 s at most measured on a loaded 2-core machine.
jest.setTimeout(90_000);

const casesRun: Record<string, number> = {};
afterAll(() => diagnostic(`cases run per property: ${JSON.stringify(casesRun)}`));

async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>): Promise<void> {
  casesRun[name] = 0;
  await assertOnSeedsAsync(
    fc.asyncProperty(arbitrary, async (value) => {
      casesRun[name]! += 1;
      await predicate(value);
    }),
    budget,
  );
}

// ---------------------------------------------------------------------------
// One case: a messy input with its target, counter and compactor

interface CasePlan {
  plan: MessyPlan;
  target: TargetPlan;
  counter: CounterName;
  compactor: CompactorPlan;
}

const casePlan: fc.Arbitrary<CasePlan> = fc.record({
  plan: messyPlanArbitrary(),
  target: targetArbitrary,
  counter: counterArbitrary,
  compactor: compactorPlanArbitrary,
});

interface Case {
  messages: BaseMessage[];
  counts: number[];
  total: number;
  target: number;
  counter: ReturnType<typeof counterFor>;
  compactor: SlidingWindowCompactor;
  minKeepSteps: number;
}

async function setUp(plan: CasePlan): Promise<Case> {
  const counter = counterFor(plan.counter);
  const messages = await prepareMessyInput(plan.plan, counter);
  const counts = await countEach(counter, messages);
  const total = counts.reduce((a, b) => a + b, 0);
  return {
    messages,
    counts,
    total,
    target: resolveTarget(plan.target, total),
    counter,
    compactor: new SlidingWindowCompactor(compactorOptions(plan.compactor)),
    minKeepSteps: plan.compactor.minKeepSteps,
  };
}

// ---------------------------------------------------------------------------
// Independent readings of the input (not the library's own helpers)

/** What a message is, read here from `type` and a ChatMessage's `role`, as the providers' converters read them. */
function roleIn(message: BaseMessage): "system" | "human" | "ai" | "tool" | "other" {
  if (message.type === "generic") {
    const role = (message as unknown as { role?: string }).role;
    if (role === "user" || role === "human") return "human";
    if (role === "assistant" || role === "ai") return "ai";
    if (role === "system" || role === "developer") return "system";
    return role === "tool" ? "tool" : "other";
  }
  const type = String(message.type);
  return type === "system" || type === "human" || type === "ai" || type === "tool" ? type : "other";
}

function isOurNote(message: BaseMessage): boolean {
  const meta = (message.response_metadata as { compaction?: { strategy?: unknown } } | undefined)?.compaction;
  return roleIn(message) === "human" && meta?.strategy === "sliding_window";
}

function systemBlockEnd(messages: readonly BaseMessage[]): number {
  let end = 0;
  while (end < messages.length && roleIn(messages[end]!) === "system") end += 1;
  return end;
}

function latestRealHuman(messages: readonly BaseMessage[], from: number): number {
  for (let i = messages.length - 1; i >= from; i -= 1) if (roleIn(messages[i]!) === "human" && !isOurNote(messages[i]!)) return i;
  return -1;
}

/**
 * Every call id a provider's converter sends for this message: parsed calls,
 * invalid calls, raw OpenAI calls in `additional_kwargs`, and Anthropic
 * `tool_use` blocks (plus standard `tool_call` blocks).
 */
function callIds(message: BaseMessage): string[] {
  if (roleIn(message) !== "ai") return [];
  const fields = message as unknown as {
    tool_calls?: { id?: unknown }[];
    invalid_tool_calls?: { id?: unknown }[];
    additional_kwargs?: { tool_calls?: { id?: unknown }[] };
  };
  const blocks = Array.isArray(message.content) ? (message.content as { type?: unknown; id?: unknown }[]) : [];
  const ids = [
    ...(fields.tool_calls ?? []).map((call) => call.id),
    ...(fields.invalid_tool_calls ?? []).map((call) => call.id),
    ...(fields.additional_kwargs?.tool_calls ?? []).map((call) => call.id),
    ...blocks.filter((block) => block.type === "tool_use" || block.type === "tool_call").map((block) => block.id),
  ];
  return [...new Set(ids.filter((id): id is string => typeof id === "string" && id.length > 0))];
}

function resultId(message: BaseMessage): string | undefined {
  if (!ToolMessage.isInstance(message)) return undefined;
  const id = message.tool_call_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/** Whether `result` is `input` with some elements dropped (same objects, same order). */
function isSubsequence(result: readonly BaseMessage[], input: readonly BaseMessage[]): boolean {
  let j = 0;
  for (const message of result) {
    while (j < input.length && input[j] !== message) j += 1;
    if (j === input.length) return false;
    j += 1;
  }
  return true;
}

/** Whether `input` is an interleaving of `kept` and `removed` (each in order). Objects may repeat, so search all splits. */
function isInterleaving(input: readonly BaseMessage[], kept: readonly BaseMessage[], removed: readonly BaseMessage[]): boolean {
  if (kept.length + removed.length !== input.length) return false;
  let reachable = new Set([0]); // numbers of kept messages consumed so far
  input.forEach((message, i) => {
    const next = new Set<number>();
    for (const k of reachable) {
      if (k < kept.length && kept[k] === message) next.add(k + 1);
      const r = i - k;
      if (r < removed.length && removed[r] === message) next.add(k);
    }
    reachable = next;
  });
  return reachable.has(kept.length);
}

/** The result without the note it added. */
function keptOf(report: CompactionReport): BaseMessage[] {
  return report.messages === null ? [] : report.messages.filter((message) => message !== report.note);
}

function describeList(messages: readonly BaseMessage[]): string {
  return messages
    .map((m, i) => {
      const calls = callIds(m);
      const extra = calls.length ? ` calls ${calls.join(",")}` : m.type === "tool" ? ` answers ${String((m as ToolMessage).tool_call_id)}` : "";
      return `${i}:${m.type}${isOurNote(m) ? "(note)" : ""}${extra}`;
    })
    .join(" ");
}

function fail(message: string, messages: readonly BaseMessage[]): never {
  throw new Error(`${message}\n  input: ${describeList(messages)}`);
}

// ---------------------------------------------------------------------------
// Properties 1-8 on messy input

describe("compactor properties on messy conversations", () => {
  test("1. never throws for a list of BaseMessages", async () => {
    await check("1-never-throws", casePlan, async (plan) => {
      const c = await setUp(plan);
      const compacted = await c.compactor.compact(c.messages, c.target, c.counter);
      const report = await c.compactor.compactWithReport(c.messages, c.target, c.counter);
      // Both entry points agree on what is kept (the same objects).
      const plain = compacted === null ? [] : compacted.filter((m) => !isOurNote(m) || c.messages.includes(m));
      const kept = keptOf(report);
      if (plain.length !== kept.length || plain.some((m, i) => m !== kept[i])) fail("compact and compactWithReport keep different messages", c.messages);
      expect(compacted === null).toBe(report.messages === null);
    });
  });

  test("2. the result is null or the input's own messages in order plus at most one note; nothing is lost", async () => {
    const seen = { compacted: 0, stepsTrimmed: 0, foldedNotes: 0, silent: 0 };
    await check("2-subsequence-plus-note", casePlan, async (plan) => {
      const c = await setUp(plan);
      const report = await c.compactor.compactWithReport(c.messages, c.target, c.counter);
      if (report.messages !== null) {
        seen.compacted += 1;
        if (report.stepsTrimmed) seen.stepsTrimmed += 1;
        if (report.removed.some(isOurNote)) seen.foldedNotes += 1;
        if (report.note === null) seen.silent += 1;
      }
      if (report.messages === null) {
        expect(report.removed).toEqual([]);
        expect(report.note).toBeNull();
        return;
      }
      const added = report.messages.filter((m) => !c.messages.includes(m));
      expect(added.length).toBeLessThanOrEqual(1);
      if (added.length === 1) {
        expect(added[0]).toBe(report.note);
        expect(isOurNote(added[0]!)).toBe(true);
      } else expect(report.note).toBeNull();
      const kept = keptOf(report);
      if (!isSubsequence(kept, c.messages)) fail("kept messages are not an ordered subsequence of the input", c.messages);
      expect(kept.length).toBe(report.keptCount);
      // Every input message is either kept or reported removed: none silently lost.
      if (!isInterleaving(c.messages, kept, report.removed)) fail("kept + removed is not the input", c.messages);
      expect(report.removed.length).toBeGreaterThan(0);
      if (report.note !== null) {
        // The new note counts every removed message, plus what each folded note counted (a usable count, or
        // digits a store stringified; anything else counts 0 rather than turning the count into NaN or "071").
        // A note repeated (the same id, or without one the same text and counts: a store race re-adding one list)
        // stands for the same messages and is folded once.
        const seenNotes = new Set<string>();
        const folded = report.removed.reduce((sum, m) => {
          if (!isOurNote(m)) return sum + 1;
          const meta = (m.response_metadata as { compaction: { removed_messages?: unknown; kept_messages?: unknown } }).compaction;
          const count = meta.removed_messages;
          const usable =
            typeof count === "string" && /^\d+$/.test(count)
              ? Number(count)
              : typeof count === "number" && Number.isSafeInteger(count) && count >= 0
                ? count
                : 0;
          const kept = meta.kept_messages;
          const keptUsable =
            typeof kept === "string" && /^\d+$/.test(kept) ? Number(kept) : typeof kept === "number" && Number.isSafeInteger(kept) && kept >= 0 ? kept : 0;
          const identity = m.id ?? JSON.stringify([m.content, usable, keptUsable]);
          if (seenNotes.has(identity)) return sum;
          seenNotes.add(identity);
          return sum + usable;
        }, 0);
        const meta = (report.note.response_metadata as { compaction: Record<string, unknown> }).compaction;
        expect(meta.removed_messages).toBe(folded);
        expect(meta.kept_messages).toBe(report.keptCount);
        const text = report.note.content as string;
        expect(text).not.toMatch(/NaN|undefined|Infinity/);
      }
    });
    // The generator must reach the interesting paths, or the property proves little.
    diagnostic(`property 2: ${JSON.stringify(seen)}`);
    expect(seen.compacted).toBeGreaterThan(numRuns / 4);
    expect(seen.stepsTrimmed).toBeGreaterThan(0);
    expect(seen.foldedNotes).toBeGreaterThan(0);
  });

  test("3. a tool call and the ToolMessage answering it are kept or removed together", async () => {
    await check("3-call-result-together", casePlan, async (plan) => {
      const c = await setUp(plan);
      const result = await c.compactor.compact(c.messages, c.target, c.counter);
      if (result === null) return;
      const kept = new Set(result);
      for (const ai of c.messages) {
        for (const id of callIds(ai)) {
          for (const tool of c.messages) {
            if (resultId(tool) === id && kept.has(ai) !== kept.has(tool)) {
              fail(`call ${id} ${kept.has(ai) ? "kept" : "removed"} but its result ${kept.has(tool) ? "kept" : "removed"}`, c.messages);
            }
          }
        }
      }
    });
  });

  test("4. the leading system block and the latest real human message are kept", async () => {
    await check("4-protected-kept", casePlan, async (plan) => {
      const c = await setUp(plan);
      const result = await c.compactor.compact(c.messages, c.target, c.counter);
      if (result === null) return;
      const end = systemBlockEnd(c.messages);
      expect(result.slice(0, end)).toEqual(c.messages.slice(0, end));
      for (let i = 0; i < end; i += 1) expect(result[i]).toBe(c.messages[i]);
      const task = latestRealHuman(c.messages, end);
      if (task >= 0 && !result.includes(c.messages[task]!)) fail(`the task message at ${task} was removed`, c.messages);
    });
  });

  test("5. compacting the result again with the same target yields null or the same kept messages", async () => {
    await check("5-idempotent", casePlan, async (plan) => {
      const c = await setUp(plan);
      const first = await c.compactor.compact(c.messages, c.target, c.counter);
      if (first === null) return;
      const second = await c.compactor.compact(first, c.target, c.counter);
      if (second === null) return;
      const strip = (list: BaseMessage[]) => list.filter((m) => !isOurNote(m));
      const a = strip(first);
      const b = strip(second);
      if (a.length !== b.length || a.some((m, i) => m !== b[i])) {
        fail(`second compaction changed the kept messages: ${describeList(first)} => ${describeList(second)}`, c.messages);
      }
    });
  });

  test("6. the input array and its messages are left unchanged", async () => {
    await check("6-no-mutation", casePlan, async (plan) => {
      const c = await setUp(plan);
      const elements = [...c.messages];
      const before = snapshotMessages(c.messages);
      const probe = c.messages.map((m) => ({
        id: m.id,
        content: structuredClone(m.content),
        tool_calls: structuredClone((m as AIMessage).tool_calls),
        response_metadata: structuredClone(m.response_metadata),
        additional_kwargs: structuredClone(m.additional_kwargs),
      }));
      const compacted = await c.compactor.compact(c.messages, c.target, c.counter);
      const report = await c.compactor.compactWithReport(c.messages, c.target, c.counter);
      if (compacted !== null) await c.compactor.compact(compacted, c.target, c.counter);
      expect(c.messages.length).toBe(elements.length);
      if (c.messages.some((m, i) => m !== elements[i])) fail("an element of the input array was replaced", c.messages);
      const after = snapshotMessages(c.messages);
      const fields = c.messages.map((m) => ({
        id: m.id,
        content: m.content,
        tool_calls: (m as AIMessage).tool_calls,
        response_metadata: m.response_metadata,
        additional_kwargs: m.additional_kwargs,
      }));
      // Jest's matchers only on a mismatch, for their diff: deep-comparing every case with them is slow.
      if (!isDeepStrictEqual(after, before)) expect(after).toStrictEqual(before);
      if (!isDeepStrictEqual(fields, probe)) expect(fields).toEqual(probe);
      // The result is a new array, never the input itself.
      expect(report.messages).not.toBe(c.messages);
    });
  });

  test("7. null exactly when the input fits (rule 1), when rule 5 would remove only earlier notes (rule 6), or when only the protected messages and the newest minKeepSteps steps are left to keep (rule 8)", async () => {
    const seen = { fits: 0, compacted: 0, nullOverTarget: 0, onlyNotes: 0, nothingRemovable: 0 };
    // Half the cases aim the target between the real messages' tokens and the whole list's, where only the
    // earlier notes keep the list from fitting (rule 6); the generator alone almost never lands there.
    const shaped = fc.tuple(casePlan, fc.option(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { freq: 2 }));
    await check("7-null-exactly-when", shaped, async ([plan, between]) => {
      const c = await setUp(plan);
      const real = c.messages.reduce((sum, message, i) => (isOurNote(message) ? sum : sum + c.counts[i]!), 0);
      if (between !== null && real < c.total) c.target = real + Math.floor(between * (c.total - real));
      const report = await c.compactor.compactWithReport(c.messages, c.target, c.counter);
      expect(report.tokensBefore).toBe(c.total);
      // Rule 1: a list that fits is left alone.
      if (c.total <= c.target) {
        seen.fits += 1;
        expect(report.messages).toBeNull();
        expect(await c.compactor.compact(c.messages, c.target, c.counter)).toBeNull();
      }
      if (report.messages !== null) {
        seen.compacted += 1;
        // A compaction only happens for a list that does not fit, and its report adds up.
        expect(c.total).toBeGreaterThan(c.target);
        const kept = await countEach(c.counter, keptOf(report));
        const note = report.note === null ? 0 : (await countEach(c.counter, [report.note]))[0]!;
        expect(report.tokensAfter).toBe(kept.reduce((a, b) => a + b, 0) + note);
      } else expect(report.tokensAfter).toBe(c.total);
      if (c.total <= c.target) return;
      // The converse, for a list that does not fit: null exactly when rule 6 or rule 8 says so.
      const reason = nothingToRemove(c);
      if (report.messages === null) {
        seen.nullOverTarget += 1;
        if (reason === null) fail(`null for a list of ${c.total} tokens over its target ${c.target}, with real messages rule 5 would remove`, c.messages);
        seen[reason] += 1;
      } else if (reason !== null) {
        fail(`compacted although ${reason === "onlyNotes" ? "only earlier notes" : "nothing"} could be removed (rule ${reason === "onlyNotes" ? 6 : 8})`, c.messages);
      }
    });
    diagnostic(`property 7: ${JSON.stringify(seen)}`);
    // Every branch of the equivalence must be reached, or it proves little.
    expect(seen.fits).toBeGreaterThan(numRuns / 20);
    expect(seen.compacted).toBeGreaterThan(numRuns / 4);
    expect(seen.nothingRemovable).toBeGreaterThan(0);
    expect(seen.onlyNotes).toBeGreaterThan(0);
  });

  test("8. the newest minKeepSteps steps are kept; when they and the protected messages fit, the kept messages fit", async () => {
    const seen = { premiseHeld: 0, compactedUnderPremise: 0, stepsKeptChecked: 0 };
    // Half the cases aim the target between the protected minimum and the whole list, where the premise holds.
    const shaped = fc.tuple(casePlan, fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 2 }));
    await check("8-kept-fit", shaped, async ([plan, between]) => {
      const c = await setUp(plan);
      const { end, task, newestSteps } = readProtected(c);
      const tokensAt = (i: number) => c.counts[i]!;
      let needed = 0;
      for (let i = 0; i < end; i += 1) needed += tokensAt(i);
      if (task >= 0) needed += tokensAt(task);
      for (const step of newestSteps) for (const i of step) needed += tokensAt(i);
      if (between !== null) c.target = needed + Math.floor(between * Math.max(c.total - needed, 0));
      const premise = needed <= c.target;
      if (premise) seen.premiseHeld += 1;
      const report = await c.compactor.compactWithReport(c.messages, c.target, c.counter);
      if (report.messages === null) return;
      // Lower bound (rules 5 and 8): whatever the target, the newest minKeepSteps steps of the task stay whole.
      const result = new Set(report.messages);
      if (newestSteps.length > 0) seen.stepsKeptChecked += 1;
      for (const step of newestSteps) {
        for (const i of step) if (!result.has(c.messages[i]!)) fail(`message ${i} of one of the newest ${c.minKeepSteps} steps was removed`, c.messages);
      }
      // Upper bound: when they and the protected messages fit, everything kept fits.
      if (!premise) return;
      seen.compactedUnderPremise += 1;
      const kept = (await countEach(c.counter, keptOf(report))).reduce((a, b) => a + b, 0);
      if (kept > c.target) fail(`kept ${kept} tokens for a target of ${c.target} (protected + minKeepSteps: ${needed})`, c.messages);
    });
    diagnostic(`property 8: ${JSON.stringify(seen)}`);
    // The generator must make both bounds bite in a good share of the cases, or the property is vacuous.
    expect(seen.premiseHeld).toBeGreaterThan(numRuns / 3);
    expect(seen.compactedUnderPremise).toBeGreaterThan(numRuns / 5);
    expect(seen.stepsKeptChecked).toBeGreaterThan(numRuns / 10);
  });
});

/** The protected positions, read independently, and the members of the newest `minKeepSteps` steps. */
function readProtected(c: Case): { end: number; task: number; newestSteps: number[][] } {
  const layout = layoutConversation(c.messages);
  const end = systemBlockEnd(c.messages);
  const task = latestRealHuman(c.messages, end);
  // The steps come from the library's layout; its protected positions must agree with the reading here.
  expect(layout.systemEnd).toBe(end);
  expect(layout.task).toBe(task);
  const newest = layout.steps.slice(layout.steps.length - Math.min(c.minKeepSteps, layout.steps.length));
  return { end, task, newestSteps: newest.map((step) => step.members) };
}

/**
 * Why a list over its target must not be compacted, or null when rule 5 would
 * remove a real message. Rule 8: every unprotected real message (not an
 * earlier note) is in the newest `minKeepSteps` steps, which stay whatever
 * their size. Rule 6: the real messages fit the target (only notes push the
 * list over it) and none is loose (rule 3: loose messages go whenever
 * compaction runs), so rule 5 keeps every group and would remove notes only.
 */
function nothingToRemove(c: Case): "onlyNotes" | "nothingRemovable" | null {
  const { end, task, newestSteps } = readProtected(c);
  const inKeptSteps = new Set(newestSteps.flat());
  const layout = layoutConversation(c.messages);
  const loose = new Set(layout.loose);
  let realTokens = 0;
  let removable = 0;
  let looseReal = 0;
  c.messages.forEach((message, i) => {
    if (isOurNote(message)) return;
    realTokens += c.counts[i]!;
    if (i < end || i === task) return;
    if (!inKeptSteps.has(i)) removable += 1;
    if (loose.has(i)) looseReal += 1;
  });
  if (removable === 0) return "nothingRemovable";
  return looseReal === 0 && realTokens <= c.target ? "onlyNotes" : null;
}

// ---------------------------------------------------------------------------
// Properties 10 and 11: message shapes

describe("compactor properties on message shapes", () => {
  test("10. a system or other message after the task is kept exactly when the step it stands in is", async () => {
    let checked = 0;
    await check("10-late-system-with-its-step", casePlan, async (plan) => {
      const c = await setUp(plan);
      const result = await c.compactor.compact(c.messages, c.target, c.counter);
      if (result === null) return;
      const kept = new Set(result);
      const end = systemBlockEnd(c.messages);
      const task = latestRealHuman(c.messages, end);
      let stepHead = -1; // the AI message that opened the step we are in
      for (let i = Math.max(task + 1, end); i < c.messages.length; i += 1) {
        const message = c.messages[i]!;
        const role = roleIn(message);
        if (role === "ai") stepHead = i;
        if ((role !== "system" && role !== "other") || stepHead < 0) continue;
        // The same object may stand twice (a duplicated message); its two places may belong to two steps.
        // Membership in the result is by object, so either object standing anywhere else makes the check moot.
        const once = (at: number) => c.messages.indexOf(c.messages[at]!) === at && c.messages.lastIndexOf(c.messages[at]!) === at;
        if (!once(i) || !once(stepHead)) continue;
        checked += 1;
        if (kept.has(message) !== kept.has(c.messages[stepHead]!)) {
          fail(`message ${i} (${role}) ${kept.has(message) ? "kept" : "removed"} but the step it stands in (from ${stepHead}) ${kept.has(c.messages[stepHead]!) ? "kept" : "removed"}`, c.messages);
        }
      }
    });
    diagnostic(`property 10: ${checked} late system or other messages checked`);
    expect(checked).toBeGreaterThan(0);
  });

  test("11. a ChatMessage is read by its role: a user ChatMessage can be the task, an assistant one's calls stay with their results", async () => {
    const seen = { chatTask: 0, chatCalls: 0 };
    await check("11-chat-roles", casePlan, async (plan) => {
      const c = await setUp(plan);
      const result = await c.compactor.compact(c.messages, c.target, c.counter);
      const task = latestRealHuman(c.messages, systemBlockEnd(c.messages));
      if (task >= 0 && c.messages[task]!.type === "generic") {
        seen.chatTask += 1;
        // Target 0 and no steps kept: only what is protected stays, and the task is.
        const bare = await new SlidingWindowCompactor({ minKeepSteps: 0, cache: null }).compact(c.messages, 0, c.counter);
        if (bare !== null && !bare.includes(c.messages[task]!)) fail(`the ChatMessage task at ${task} was removed`, c.messages);
      }
      if (result === null) return;
      const kept = new Set(result);
      for (const ai of c.messages) {
        if (ai.type !== "generic" && callIds(ai).length === 0) continue;
        for (const id of callIds(ai)) {
          for (const tool of c.messages) {
            if (resultId(tool) !== id) continue;
            seen.chatCalls += 1;
            if (kept.has(ai) !== kept.has(tool)) fail(`call ${id} and its result split`, c.messages);
          }
        }
      }
    });
    diagnostic(`property 11: ${JSON.stringify(seen)}`);
    expect(seen.chatTask).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------
// Property 9: well-formed input stays valid for OpenAI, Anthropic and Gemini (the checks in support/providers.ts)

interface WellFormedCase {
  messages: () => BaseMessage[];
  target: TargetPlan;
  counter: CounterName;
  compactor: CompactorPlan;
}

const wellFormedCase: fc.Arbitrary<WellFormedCase> = fc.record({
  messages: fc.oneof(
    // Plans are built per run, so every run gets fresh message objects.
    wellFormedPlanArbitrary().map((plan) => Object.assign(() => buildWellFormedConversation(plan), { toString: () => JSON.stringify(plan) })),
    conversationArbitrary().map((list) => Object.assign(() => list, { toString: () => describeList(list) })),
  ),
  target: targetArbitrary,
  counter: counterArbitrary,
  compactor: compactorPlanArbitrary,
});

describe("well-formed input stays valid for providers", () => {
  test("the checkers reject what the providers reject", () => {
    const call = () => new AIMessage({ content: "", tool_calls: [{ id: "t1", name: "f", args: {}, type: "tool_call" }] });
    const result = () => new ToolMessage({ tool_call_id: "t1", content: "r" });
    const human = (text: string) => new HumanMessage(text);
    const broken: [string, BaseMessage[]][] = [
      ["result without its call", [human("q"), result()]],
      ["call not answered before the next message", [human("q"), call(), human("again"), result()]],
      ["call never answered", [human("q"), call()]],
      ["system message in the middle", [human("q"), new SystemMessage("late"), new AIMessage("a")]],
      ["assistant first", [new AIMessage("hello"), human("q")]],
    ];
    for (const [, messages] of broken) expect(() => assertConvertsEverywhere(messages)).toThrow();
    // The converted-payload checks bite on their own too, without the message-level check first.
    const separated = [human("q"), call(), human("again"), result()];
    expect(() => assertOpenAICompletions(convertMessagesToCompletionsMessageParams({ messages: separated, model: "gpt-4o" }) as never)).toThrow(/tool/);
    expect(() => assertAnthropic(convertPromptToAnthropic(new ChatPromptValue(separated)) as never)).toThrow(/tool_use ids were found without tool_result/);
    expect(() => assertOpenAIResponses(convertMessagesToResponsesInput({ messages: [human("q"), result()], model: "gpt-4o", zdrEnabled: false }) as never)).toThrow(/without its call/);
    expect(() => assertConvertsEverywhere([new SystemMessage("s"), human("q"), call(), result(), new AIMessage("done")])).not.toThrow();
  });

  test("9. the result passes strict OpenAI, Anthropic and Gemini ordering checks and their own converters", async () => {
    let compactedCases = 0;
    await check("9-provider-valid", wellFormedCase, async (plan) => {
      const messages = plan.messages();
      const counter = counterFor(plan.counter);
      // The generators must produce valid input, or the property proves nothing.
      assertConvertsEverywhere(messages);
      const total = (await countEach(counter, messages)).reduce((a, b) => a + b, 0);
      const compactor = new SlidingWindowCompactor(compactorOptions(plan.compactor));
      const target = resolveTarget(plan.target, total);
      const result = await compactor.compact(messages, target, counter);
      if (result === null) return;
      compactedCases += 1;
      try {
        assertConvertsEverywhere(result);
        // A second compaction of a valid result stays valid too.
        const again = await compactor.compact(result, Math.floor(target / 2), counter);
        if (again !== null) assertConvertsEverywhere(again);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n  input:  ${describeList(messages)}\n  result: ${describeList(result)}`);
      }
    });
    diagnostic(`property 9: ${compactedCases} cases compacted and checked`);
    expect(compactedCases).toBeGreaterThan(numRuns / 4);
  });
});
