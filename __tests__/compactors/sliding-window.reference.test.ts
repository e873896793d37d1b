/**
 * The selection rules, checked on random well-formed agent
 * conversations against an independent reference implementation written here:
 * it counts every message with the counter (no laziness, no cache) and applies
 * the rules as the issue states them. Results must be identical: the same kept
 * objects in the same order, and the same note text and metadata.
 */
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import {
  approximateTokenCounter,
  DEFAULT_OMISSION_NOTE,
  isOmissionNote,
  SlidingWindowCompactor,
  tiktokenCounter,
  TokenCountCache,
} from "../../src";
import type { TokenCounter } from "../../src";
import { assertProviderValid, labelledConversationArbitrary } from "../support/conversations";
import type { LabelledConversation } from "../support/conversations";
import { assertOnSeedsAsync, casesIn } from "../support/seeds";
import { diagnostic } from "../support/diagnostics";

const BUDGET = Number(process.env.FC_RUNS ?? 400);
/** Conversations checked, over all the seeds. */
const NUM_RUNS = casesIn(BUDGET);

interface CompactionMeta {
  strategy: string;
  removed_messages: number;
  kept_messages: number;
}

/** The rules' reading of a message's role: its type, or a ChatMessage's role as the providers read it. */
function roleIn(message: BaseMessage): string {
  if (message.type !== "generic") return ["system", "human", "ai", "tool"].includes(message.type) ? message.type : "other";
  const role = (message as ChatMessage).role;
  const map: Record<string, string> = { user: "human", human: "human", assistant: "ai", ai: "ai", system: "system", developer: "system", tool: "tool" };
  return map[role] ?? "other";
}

/** Every call id an AI message carries, wherever a provider's converter reads it. */
function callIdsIn(message: BaseMessage): string[] {
  if (roleIn(message) !== "ai") return [];
  const m = message as { tool_calls?: { id?: string }[]; invalid_tool_calls?: { id?: string }[]; additional_kwargs?: { tool_calls?: { id?: string }[] } };
  const blocks = Array.isArray(message.content) ? (message.content as { type?: string; id?: string }[]).filter((b) => b.type === "tool_use") : [];
  return [...(m.tool_calls ?? []), ...(m.invalid_tool_calls ?? []), ...(m.additional_kwargs?.tool_calls ?? []), ...blocks]
    .map((c) => c.id)
    .filter((id): id is string => typeof id === "string" && id !== "");
}

function noteMeta(message: BaseMessage): CompactionMeta | undefined {
  if (roleIn(message) !== "human") return undefined;
  const meta = (message.response_metadata as { compaction?: CompactionMeta } | undefined)?.compaction;
  return meta?.strategy === "sliding_window" ? meta : undefined;
}

/** What the reference decided, with its working shown for the property checks. */
interface ReferenceOutcome {
  messages: BaseMessage[] | null;
  turns: BaseMessage[][];
  steps: BaseMessage[][];
  total: number;
  count: (message: BaseMessage) => number;
}

/** The rules, step by step, counting every message. */
function referenceCompact(
  messages: BaseMessage[],
  target: number,
  counter: (messages: BaseMessage[]) => number,
  minKeepSteps: number,
  template: string | null,
): ReferenceOutcome {
  const count = (message: BaseMessage) => counter([message]);
  const tokens = messages.map(count);
  const total = tokens.reduce((a, b) => a + b, 0);

  // Rule 2: protected messages.
  let systemEnd = 0;
  while (systemEnd < messages.length && roleIn(messages[systemEnd]!) === "system") systemEnd += 1;
  let anchor = -1;
  for (let i = messages.length - 1; i >= systemEnd; i -= 1) {
    if (roleIn(messages[i]!) === "human" && noteMeta(messages[i]!) === undefined) {
      anchor = i;
      break;
    }
  }

  // Rules 3 and 4: groups. Tool results join the AI message whose call they answer, by id.
  const callerOf = new Map<string, number>();
  messages.forEach((message, i) => {
    if (i < systemEnd) return;
    for (const id of callIdsIn(message)) if (!callerOf.has(id)) callerOf.set(id, i);
  });
  const groupOf = new Map<number, number[]>(); // message index -> its group
  const turns: number[][] = [];
  const steps: number[][] = [];
  let turn: number[] | null = null;
  for (let i = systemEnd; i < messages.length; i += 1) {
    const message = messages[i]!;
    if (i === anchor || noteMeta(message) !== undefined) continue;
    const callId = message.type === "tool" ? (message as { tool_call_id?: string }).tool_call_id : undefined;
    if (callId !== undefined && callerOf.has(callId)) continue; // placed below, with its call
    let group: number[] | null = null;
    if (anchor < 0 || i > anchor) {
      // In the task: an AI message opens a step; any other message stays in the step it stands in (or opens one).
      if (roleIn(message) === "ai" || (roleIn(message) !== "tool" && steps.length === 0)) {
        steps.push((group = []));
      } else if (roleIn(message) !== "tool") group = steps[steps.length - 1]!;
    } else {
      if (roleIn(message) === "human") turns.push((turn = []));
      group = turn;
    }
    if (group) {
      group.push(i);
      groupOf.set(i, group);
    }
  }
  for (let i = systemEnd; i < messages.length; i += 1) {
    const message = messages[i]!;
    const callId = message.type === "tool" ? (message as { tool_call_id?: string }).tool_call_id : undefined;
    if (callId === undefined || !callerOf.has(callId)) continue;
    const group = groupOf.get(callerOf.get(callId)!);
    if (group) group.push(i);
  }
  for (const group of [...turns, ...steps]) group.sort((a, b) => a - b);
  const sizeOf = (group: number[]) => group.reduce((sum, i) => sum + tokens[i]!, 0);
  const asMessages = (groups: number[][]) => groups.map((g) => g.map((i) => messages[i]!));
  const outcome = (result: BaseMessage[] | null): ReferenceOutcome => ({
    messages: result,
    turns: asMessages(turns),
    steps: asMessages(steps),
    total,
    count,
  });

  // Rule 1.
  if (total <= target) return outcome(null);

  // Rule 5.
  let protectedTokens = anchor >= 0 ? tokens[anchor]! : 0;
  for (let i = 0; i < systemEnd; i += 1) protectedTokens += tokens[i]!;
  const available = target - protectedTokens;
  const allSteps = steps.reduce((sum, g) => sum + sizeOf(g), 0);
  const newestThatFit = (groups: number[][], budget: number) => {
    let used = 0;
    let n = 0;
    for (let k = groups.length - 1; k >= 0; k -= 1) {
      if (used + sizeOf(groups[k]!) > budget) break;
      used += sizeOf(groups[k]!);
      n += 1;
    }
    return n;
  };
  let keptGroups: number[][];
  let stepsTrimmed = false;
  if (allSteps > available) {
    const keep = Math.max(newestThatFit(steps, available), Math.min(minKeepSteps, steps.length));
    keptGroups = steps.slice(steps.length - keep);
    stepsTrimmed = keep < steps.length;
  } else {
    const keep = newestThatFit(turns, available - allSteps);
    keptGroups = [...turns.slice(turns.length - keep), ...steps];
  }

  const keep = new Set<number>(keptGroups.flat());
  for (let i = 0; i < systemEnd; i += 1) keep.add(i);
  if (anchor >= 0) keep.add(anchor);
  const kept = messages.filter((_, i) => keep.has(i));
  const removed = messages.filter((_, i) => !keep.has(i));

  // Rule 6.
  const removedReal = removed.filter((m) => noteMeta(m) === undefined);
  if (removedReal.length === 0) return outcome(null);
  if (template === null || template === "") return outcome(kept);

  // Rule 7.
  const numRemoved = removedReal.length + removed.reduce((sum, m) => sum + (noteMeta(m)?.removed_messages ?? 0), 0);
  const note = new HumanMessage({
    content: template.split("{num_removed}").join(String(numRemoved)),
    response_metadata: { compaction: { strategy: "sliding_window", removed_messages: numRemoved, kept_messages: kept.length } },
  });
  const at = stepsTrimmed && anchor >= 0 ? kept.indexOf(messages[anchor]!) + 1 : systemEnd;
  return outcome([...kept.slice(0, at), note, ...kept.slice(at)]);
}

/** Same objects in the same order; the note compared by text and metadata. */
function expectSameResult(actual: BaseMessage[] | null, expected: BaseMessage[] | null): void {
  if (expected === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  expect(actual!.length).toBe(expected.length);
  expected.forEach((message, i) => {
    const got = actual![i]!;
    // The reference's note is a new object: compare what it says. Every other message must be the very object.
    if (noteMeta(message) !== undefined && !actual!.includes(message)) {
      expect(isOmissionNote(got)).toBe(true);
      expect(got.content).toBe(message.content);
      expect(got.response_metadata).toEqual(message.response_metadata);
    } else {
      expect(got).toBe(message);
    }
  });
}

/** A third counter, so that the rules are not only seen through the 4-characters-a-token lens. */
const weightedCounter: TokenCounter = (messages) =>
  messages.reduce((sum, m) => {
    const chars = typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length;
    return sum + (m.type === "tool" ? 2 * chars + 5 : chars + 1);
  }, 0);

const COUNTERS: { name: string; sync: (messages: BaseMessage[]) => number; given: () => TokenCounter }[] = [
  { name: "approximate", sync: approximateTokenCounter, given: () => approximateTokenCounter },
  { name: "tiktoken o200k", sync: tiktokenCounter("o200k_base") as (m: BaseMessage[]) => number, given: () => tiktokenCounter("o200k_base") },
  { name: "weighted", sync: weightedCounter as (m: BaseMessage[]) => number, given: () => weightedCounter },
  {
    name: "weighted async",
    sync: weightedCounter as (m: BaseMessage[]) => number,
    // A new function each run: nothing cached under it from an earlier run.
    given: () => async (messages: BaseMessage[]) => weightedCounter(messages),
  },
];

const NOTES = [DEFAULT_OMISSION_NOTE, "Gone: {other} x{num_removed}", "History was trimmed.", null, ""];

/**
 * Issue 9 §3's shapes on a labelled conversation, with its labels carried
 * over: user messages as ChatMessages (role "user" or "human"), AI messages
 * whose call ids stand only in `invalid_tool_calls`, `additional_kwargs` or
 * `tool_use` blocks, and system (or unknown-role) messages after the task,
 * each belonging to the step it follows. `choices` picks per message.
 */
interface Reshape {
  chatUsers: boolean;
  idSources: ("tool_calls" | "invalid_tool_calls" | "additional_kwargs" | "tool_use")[];
  lateSystem: boolean[];
}

function reshape(c: LabelledConversation, plan: Reshape): LabelledConversation {
  let k = 0;
  const swap = new Map<BaseMessage, BaseMessage>();
  const asChat = (m: BaseMessage, i: number) => new ChatMessage({ role: i % 2 === 0 ? "user" : "human", content: m.content });
  const reshapeAI = (m: BaseMessage): BaseMessage => {
    const ai = m as AIMessage;
    const calls = ai.tool_calls ?? [];
    const source = plan.idSources[k++ % Math.max(1, plan.idSources.length)] ?? "tool_calls";
    if (calls.length === 0 || source === "tool_calls") return m;
    if (source === "invalid_tool_calls") {
      return new AIMessage({ content: ai.content, tool_calls: [], invalid_tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: "{", error: "bad", type: "invalid_tool_call" as const })) });
    }
    if (source === "tool_use") {
      return new AIMessage({ content: [{ type: "text", text: String(ai.content) }, ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args }))], tool_calls: [] });
    }
    const raw = new AIMessage({ content: ai.content });
    raw.additional_kwargs = { tool_calls: calls.map((c) => ({ id: c.id!, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.args) } })) };
    raw.tool_calls = [];
    return raw;
  };
  const map = (m: BaseMessage) => swap.get(m) ?? m;
  c.turns.forEach((turn, i) => {
    if (plan.chatUsers) swap.set(turn[0]!, asChat(turn[0]!, i));
    for (const m of turn.slice(1)) if (m.type === "ai") swap.set(m, reshapeAI(m));
  });
  if (plan.chatUsers) swap.set(c.task, asChat(c.task, c.turns.length));
  for (const step of c.steps) swap.set(step[0]!, reshapeAI(step[0]!));
  const steps = c.steps.map((step, i) => {
    const out = step.map(map);
    if (plan.lateSystem[i]) out.push(i % 2 === 0 ? new SystemMessage(`late instruction ${i}`) : new ChatMessage({ role: "critic", content: `note ${i}` }));
    return out;
  });
  const turns = c.turns.map((turn) => turn.map(map));
  const task = map(c.task) as HumanMessage;
  const afterTask = c.messages.slice(c.messages.indexOf(c.task) + 1).filter((m) => m === c.earlierNote);
  const messages = [...c.messages.slice(0, c.messages.indexOf(c.task)).map(map), task, ...afterTask, ...steps.flat()];
  return { messages, system: c.system, earlierNote: c.earlierNote, turns, task, steps };
}

const reshapeArbitrary: fc.Arbitrary<Reshape | null> = fc.option(
  fc.record({
    chatUsers: fc.boolean(),
    idSources: fc.array(fc.constantFrom("tool_calls" as const, "invalid_tool_calls" as const, "additional_kwargs" as const, "tool_use" as const), { minLength: 1, maxLength: 6 }),
    lateSystem: fc.array(fc.boolean(), { maxLength: 8 }),
  }),
  { freq: 2 },
);

const scenario = fc.record({
  conversation: fc.tuple(labelledConversationArbitrary(), reshapeArbitrary).map(([c, plan]) => (plan === null ? { ...c, reshaped: false } : { ...reshape(c, plan), reshaped: true })),
  counter: fc.integer({ min: 0, max: COUNTERS.length - 1 }),
  minKeepSteps: fc.integer({ min: 0, max: 4 }),
  note: fc.integer({ min: 0, max: NOTES.length - 1 }),
  cache: fc.constantFrom("shared", "own", "none"),
  // A fraction of the whole (per mille), or exactly at / just under the whole.
  target: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 1100 }) }, { weight: 1, arbitrary: fc.constantFrom(-1, -2) }),
});

function indexIn(list: readonly BaseMessage[], message: BaseMessage): number {
  return list.indexOf(message);
}

/** The rule checks that do not go through the reference, on the generator's ground truth. */
function checkRules(
  labelled: LabelledConversation,
  result: BaseMessage[] | null,
  ref: ReferenceOutcome,
  target: number,
  minKeepSteps: number,
  noteEnabled: boolean,
  reshaped: boolean,
): void {
  const { messages, system, task, turns, steps, earlierNote } = labelled;
  // The reference grouped exactly what the generator built.
  expect(ref.turns).toEqual(turns);
  ref.turns.forEach((turn, i) => turn.forEach((m, k) => expect(m).toBe(turns[i]![k])));
  ref.steps.forEach((step, i) => step.forEach((m, k) => expect(m).toBe(steps[i]![k])));
  expect(ref.steps.length).toBe(steps.length);

  if (ref.total <= target) {
    expect(result).toBeNull();
    return;
  }
  if (result === null) {
    // Over target yet unchanged: nothing but earlier notes could have gone, i.e. every turn and step is affordable or required.
    return;
  }
  const notes = result.filter((m) => isOmissionNote(m));
  expect(notes.length).toBe(noteEnabled ? 1 : 0);
  if (earlierNote) expect(result).not.toContain(earlierNote);
  const withoutNote = result.filter((m) => !isOmissionNote(m));
  // Same objects, original order.
  let last = -1;
  for (const m of withoutNote) {
    const at = indexIn(messages, m);
    expect(at).toBeGreaterThan(last);
    last = at;
  }
  expect(withoutNote.slice(0, system.length)).toEqual(system);
  system.forEach((m, i) => expect(withoutNote[i]).toBe(m));
  expect(withoutNote).toContain(task);
  // The reshaped shapes are valid for some providers only (ChatMessages, calls outside tool_calls, late system messages).
  if (!reshaped) assertProviderValid(result);

  const keptFlags = (groups: BaseMessage[][]) =>
    groups.map((group) => {
      const inResult = group.map((m) => withoutNote.includes(m));
      expect(new Set(inResult).size).toBeLessThanOrEqual(1); // whole or not at all
      return inResult[0]!;
    });
  const keptTurns = keptFlags(turns);
  const keptSteps = keptFlags(steps);
  const suffix = (flags: boolean[]) => flags.indexOf(true) === -1 || flags.slice(flags.indexOf(true)).every(Boolean);
  expect(suffix(keptTurns)).toBe(true);
  expect(suffix(keptSteps)).toBe(true);

  const trimmed = keptSteps.some((k) => !k);
  if (trimmed) {
    expect(keptTurns.every((k) => !k)).toBe(true);
    let protectedTokens = ref.count(task);
    for (const m of system) protectedTokens += ref.count(m);
    let fit = 0;
    let used = 0;
    for (let k = steps.length - 1; k >= 0; k -= 1) {
      const size = steps[k]!.reduce((s, m) => s + ref.count(m), 0);
      if (used + size > target - protectedTokens) break;
      used += size;
      fit += 1;
    }
    expect(keptSteps.filter(Boolean).length).toBe(Math.max(fit, Math.min(minKeepSteps, steps.length)));
  }
  if (noteEnabled) {
    const noteAt = result.indexOf(notes[0]!);
    expect(noteAt).toBe(trimmed ? result.indexOf(task) + 1 : system.length);
    const meta = noteMeta(notes[0]!)!;
    const removedReal = messages.filter((m) => !withoutNote.includes(m) && m !== earlierNote).length;
    expect(meta.removed_messages).toBe(removedReal + (earlierNote ? noteMeta(earlierNote)!.removed_messages : 0));
    expect(meta.kept_messages).toBe(withoutNote.length);
  }
}

describe("selection rules on random conversations", () => {
  test(`compactor agrees with the reference and the rules hold (${NUM_RUNS} conversations)`, async () => {
    const seen = { null: 0, fits: 0, trimmed: 0, turnsOnly: 0, withEarlierNote: 0, reshaped: 0 };
    await assertOnSeedsAsync(
      fc.asyncProperty(scenario, async ({ conversation, counter, minKeepSteps, note, cache, target: t }) => {
        const { messages } = conversation;
        const chosen = COUNTERS[counter]!;
        const template = NOTES[note]!;
        const total = chosen.sync(messages);
        const target = t < 0 ? Math.max(0, total + t + 1) : Math.floor((total * t) / 1000);
        const ref = referenceCompact(messages, target, chosen.sync, minKeepSteps, template);

        const compactor = new SlidingWindowCompactor({
          minKeepSteps,
          omissionNote: template,
          cache: cache === "none" ? null : cache === "own" ? new TokenCountCache() : undefined,
        });
        const counterFn = chosen.given();
        const result = await compactor.compact(messages, target, counterFn);
        expectSameResult(result, ref.messages);
        // Counted from the cache (when there is one) the second time: the same answer.
        expectSameResult(await compactor.compact(messages, target, counterFn), ref.messages);

        const report = await compactor.compactWithReport(messages, target, counterFn);
        expectSameResult(report.messages, ref.messages);
        expect(report.tokensBefore).toBe(total);
        expect(report.tokensAfter).toBe(report.messages === null ? total : chosen.sync(report.messages));
        if (report.messages !== null) {
          expect(report.removed).toEqual(messages.filter((m) => !report.messages!.includes(m)));
          report.removed.forEach((m) => expect(messages).toContain(m));
          expect(report.keptCount).toBe(messages.length - report.removed.length);
        }

        checkRules(conversation, result, ref, target, minKeepSteps, template !== null && template !== "", conversation.reshaped);
        if (conversation.reshaped) seen.reshaped += 1;

        if (result === null) seen[ref.total <= target ? "fits" : "null"] += 1;
        else if (conversation.steps.some((s) => !result.includes(s[0]!))) seen.trimmed += 1;
        else seen.turnsOnly += 1;
        if (conversation.earlierNote) seen.withEarlierNote += 1;
      }),
      BUDGET,
    );
    diagnostic(`cases: ${JSON.stringify(seen)}`);
    // The generator must exercise every branch, or the agreement above proves little.
    expect(seen.fits).toBeGreaterThan(0);
    expect(seen.trimmed).toBeGreaterThan(0);
    expect(seen.turnsOnly).toBeGreaterThan(0);
    expect(seen.withEarlierNote).toBeGreaterThan(0);
    expect(seen.reshaped).toBeGreaterThan(NUM_RUNS / 5);
  });
});
