/**
 * The layout engine (`layoutConversation`, `freshLayout`: `src/messages/layout.ts`) against the grouping rules as
 * `src/messages/grouping.ts` states them (`groupConversation`, written plainly with no reuse): they must agree on
 * small conversations built to reach every rule often (a pool of five call ids, so results come before their
 * calls, ids repeat across AI messages, a call in history is answered after the task, results lose their id,
 * summaries and notes stand anywhere), and through appends, edits, removals and truncations of one conversation,
 * which drive the engine's undo and relay paths.
 */
import { isDeepStrictEqual } from "node:util";
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { toolCallIdsOf } from "../../src/messages/exchanges";
import { groupConversation } from "../../src/messages/grouping";
import { freshLayout, layoutCheckedConversation, layoutConversation } from "../../src/messages/layout";
import type { ConversationLayout } from "../../src/messages/grouping";
import { createOmissionNote, DEFAULT_OMISSION_NOTE } from "../../src/messages/omission-note";
import { toolCallIdOf } from "../../src/messages/roles";
import { assertOnSeeds } from "../support/seeds";
import { diagnostic } from "../support/diagnostics";

const budget = Number(process.env.FC_RUNS ?? 300);

// ---------------------------------------------------------------------------
// Conversations that reach every rule

const POOL = ["a", "b", "c", "d", "e"] as const;

type Op =
  | { t: "human"; chat: boolean }
  | { t: "summary" }
  | { t: "note" }
  | { t: "system" }
  | { t: "other" }
  | { t: "ai"; chat: boolean }
  | { t: "call"; ids: string[]; where: "tool_calls" | "tool_use" | "raw" | "no ids" }
  | { t: "result"; id: string | null; chat: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.boolean().map((chat): Op => ({ t: "human", chat })) },
  { weight: 1, arbitrary: fc.constant<Op>({ t: "summary" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ t: "note" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ t: "system" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ t: "other" }) },
  { weight: 2, arbitrary: fc.boolean().map((chat): Op => ({ t: "ai", chat })) },
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.uniqueArray(fc.constantFrom(...POOL), { minLength: 1, maxLength: 3 }), fc.constantFrom("tool_calls", "tool_calls", "tool_use", "raw", "no ids"))
      .map(([ids, where]): Op => ({ t: "call", ids, where: where as "tool_calls" | "tool_use" | "raw" | "no ids" })),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.option(fc.constantFrom(...POOL), { freq: 6 }), fc.nat(7))
      .map(([id, chat]): Op => ({ t: "result", id, chat: chat === 0 })),
  },
);

function build(item: Op): BaseMessage {
  switch (item.t) {
    case "human":
      return item.chat ? new ChatMessage({ role: "user", content: "user turn" }) : new HumanMessage("user turn");
    case "summary":
      return new HumanMessage({ content: "<conversation_summary>done</conversation_summary>", response_metadata: { compaction: { strategy: "summarization", summarized_messages: 3, source: "history" } } });
    case "note":
      return createOmissionNote(DEFAULT_OMISSION_NOTE, 2, 3);
    case "system":
      return new SystemMessage("mid-conversation instruction");
    case "other":
      return new ChatMessage({ role: "critic", content: "looks fine" });
    case "ai":
      return item.chat ? new ChatMessage({ role: "assistant", content: "thinking" }) : new AIMessage("thinking");
    case "call":
      if (item.where === "tool_calls") return new AIMessage({ content: "", tool_calls: item.ids.map((id) => ({ id, name: "lookup", args: {} })) });
      if (item.where === "tool_use") return new AIMessage({ content: item.ids.map((id) => ({ type: "tool_use", id, name: "lookup", input: {} })) });
      if (item.where === "raw") {
        // Raw OpenAI calls only, set after construction as a store hands them back (the constructor would parse them).
        const message = new AIMessage("");
        message.additional_kwargs = { tool_calls: item.ids.map((id) => ({ id, type: "function" as const, function: { name: "lookup", arguments: "{}" } })) };
        return message;
      }
      // Calls whose ids a store lost: the message still asks for tools.
      return new AIMessage({ content: "", tool_calls: item.ids.map(() => ({ id: "", name: "lookup", args: {} })) });
    case "result":
      if (item.chat) return new ChatMessage({ role: "tool", content: "result" });
      return new ToolMessage({ content: "result", tool_call_id: item.id ?? "" });
  }
}

/** History, then (usually) a user message, then the task's own work: so the task often stands mid-list. */
const conversation = fc
  .record({
    system: fc.nat(2),
    history: fc.array(op, { maxLength: 16 }),
    task: fc.option(fc.array(op.filter((item) => item.t !== "human"), { maxLength: 12 }), { freq: 5 }),
  })
  .map(({ system, history, task }) => ({ system, ops: task === null ? history : [...history, { t: "human", chat: false } as Op, ...task] }));

function buildConversation(plan: { system: number; ops: Op[] }): BaseMessage[] {
  return [...Array.from({ length: plan.system }, () => new SystemMessage("instructions")), ...plan.ops.map(build)];
}

function expectReference(actual: ConversationLayout, messages: readonly BaseMessage[], label: string): void {
  const expected = groupConversation(messages);
  // Plain objects on both sides; jest's matcher only on a mismatch, for its diff.
  const plain = JSON.parse(JSON.stringify(actual)) as ConversationLayout;
  if (!isDeepStrictEqual(plain, expected)) expect({ label, layout: plain }).toEqual({ label, layout: expected });
}

// ---------------------------------------------------------------------------

describe("the layout follows its rules (an independent reference)", () => {
  test("a conversation worked out by hand: the reference and the layout agree with it", () => {
    const messages = buildConversation({
      system: 1,
      ops: [
        { t: "human", chat: false }, // 1: opens a turn
        { t: "call", ids: ["a"], where: "tool_calls" }, // 2: in that turn
        { t: "human", chat: false }, // 3: opens a turn
        { t: "result", id: "b", chat: false }, // 4: answers call 7, which comes after it: goes with that step
        { t: "note" }, // 5: an earlier note, in no group
        { t: "human", chat: false }, // 6: the task
        { t: "call", ids: ["b"], where: "tool_calls" }, // 7: opens a step
        { t: "result", id: "a", chat: false }, // 8: answers call 2 in history: joins turn 1 where it stands
        { t: "result", id: null, chat: false }, // 9: no id: answers the calling message before it (7)
        { t: "ai", chat: false }, // 10: opens a step
        { t: "call", ids: ["a"], where: "tool_use" }, // 11: asks for the answered id a again: turn 1 joins this step
        { t: "result", id: "c", chat: false }, // 12: answers nothing, after the task: loose
        { t: "ai", chat: false }, // 13: opens a step, asks for nothing
        { t: "result", id: null, chat: true }, // 14: no id, no calling message right before it: loose
      ],
    });
    const expected: ConversationLayout = {
      systemEnd: 1,
      task: 6,
      turns: [{ kind: "turn", members: [3], order: 3 }],
      steps: [
        { kind: "step", members: [4, 7, 9], order: 7 },
        { kind: "step", members: [10], order: 10 },
        // A turn joined to a step is a step, and stands at the newest head among them.
        { kind: "step", members: [1, 2, 8, 11], order: 11 },
        { kind: "step", members: [13], order: 13 },
      ],
      notes: [5],
      loose: [12, 14],
    };
    expect(groupConversation(messages)).toEqual(expected);
    expect(freshLayout(messages)).toEqual(expected);
    expect(layoutConversation(messages)).toEqual(expected);
  });

  test("a fresh layout equals the reference on conversations that reach every rule", () => {
    const reached = { beforeCall: 0, repeatedCaller: 0, acrossTask: 0, loose: 0, turnToStep: 0 };
    assertOnSeeds(
      fc.property(conversation, (plan) => {
        const messages = buildConversation(plan);
        const expected = groupConversation(messages);
        expectReference(freshLayout(messages), messages, "fresh");
        expectReference(layoutConversation(messages), messages, "remembered");
        if (expected.loose.length > 0) reached.loose += 1;
        const stepMembers = expected.steps.flatMap((g) => g.members);
        if (expected.task >= 0 && stepMembers.some((m) => m < expected.task)) reached.turnToStep += 1;
        const ids = messages.map((m) => toolCallIdOf(m));
        if (ids.some((id, i) => id !== undefined && messages.slice(i + 1).some((m) => toolCallIdsOf(m).includes(id)))) reached.beforeCall += 1;
        if (POOL.some((id) => messages.filter((m) => toolCallIdsOf(m).includes(id)).length > 1)) reached.repeatedCaller += 1;
        if (expected.task >= 0 && ids.some((id, i) => i > expected.task && id !== undefined && messages.slice(0, expected.task).some((m) => toolCallIdsOf(m).includes(id)))) reached.acrossTask += 1;
      }),
      budget,
    );
    diagnostic(`layout reference, cases reaching each rule: ${JSON.stringify(reached)}`);
    // The conversations must reach the rules they are here for, not just agree on easy cases.
    for (const [rule, cases] of Object.entries(reached)) expect({ rule, enough: cases >= budget / 20 }).toEqual({ rule, enough: true });
  });

  /** A change to the current list: the next model call's list, an edit, or another conversation's list. */
  type Change =
    | { kind: "append"; ops: Op[] }
    | { kind: "replace"; at: number; op: Op }
    | { kind: "remove"; at: number }
    | { kind: "truncate"; keep: number }
    | { kind: "copy" }
    | { kind: "checked" };

  const change: fc.Arbitrary<Change> = fc.oneof(
    { weight: 8, arbitrary: fc.array(op, { minLength: 1, maxLength: 4 }).map((ops): Change => ({ kind: "append", ops })) },
    { weight: 2, arbitrary: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), op).map(([at, item]): Change => ({ kind: "replace", at, op: item })) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }).map((at): Change => ({ kind: "remove", at })) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((keep): Change => ({ kind: "truncate", keep })) },
    { weight: 1, arbitrary: fc.constant<Change>({ kind: "copy" }) },
    { weight: 1, arbitrary: fc.constant<Change>({ kind: "checked" }) },
  );

  test("a remembered layout equals the reference through appends, edits, removals and truncations", () => {
    assertOnSeeds(
      fc.property(conversation, fc.array(change, { minLength: 1, maxLength: 16 }), (plan, changes) => {
        let messages = buildConversation(plan);
        expectReference(layoutConversation(messages), messages, "start");
        changes.forEach((next, k) => {
          const at = (fraction: number): number => Math.floor(fraction * messages.length);
          if (next.kind === "append") messages = [...messages, ...next.ops.map(build)];
          else if (next.kind === "replace" && messages.length > 0) messages = messages.map((m, i) => (i === at(next.at) ? build(next.op) : m));
          else if (next.kind === "remove" && messages.length > 0) messages = messages.filter((_, i) => i !== at(next.at));
          else if (next.kind === "truncate") messages = messages.slice(0, at(next.keep));
          else messages = [...messages];
          const layout = next.kind === "checked" ? layoutCheckedConversation(messages) : layoutConversation(messages);
          expectReference(layout, messages, `after change ${k} (${next.kind})`);
        });
      }),
      budget,
    );
  });
});

describe("a continued layout hands out again what did not change", () => {
  // The layout is documented as read-only and shared: lists and groups a new message did not touch are the very
  // objects handed out before, so a caller (the window's selection, the view) can tell by identity what is new.
  const history = (): BaseMessage[] =>
    buildConversation({
      system: 1,
      ops: [
        { t: "human", chat: false },
        { t: "call", ids: ["a"], where: "tool_calls" },
        { t: "result", id: "a", chat: false },
        { t: "result", id: "z", chat: false }, // answers nothing: in history it joins its turn
        { t: "note" },
        { t: "human", chat: false },
        { t: "call", ids: ["b"], where: "tool_calls" },
        { t: "result", id: "b", chat: false },
        { t: "result", id: "y", chat: false }, // answers nothing after the task: loose
      ],
    });

  test("a new step: the same turns, notes and loose lists, the same older step groups, a new steps list", () => {
    const messages = history();
    const first = layoutConversation(messages);
    const next = [...messages, new AIMessage("done")];
    const second = layoutConversation(next);
    expect(second).toEqual(groupConversation(next));
    expect(second).not.toBe(first);
    expect(second.turns).toBe(first.turns);
    expect(second.notes).toBe(first.notes);
    expect(second.loose).toBe(first.loose);
    expect(second.steps).not.toBe(first.steps);
    expect(second.steps[0]).toBe(first.steps[0]);
    // The same list again: the whole layout is the one handed out last.
    expect(layoutConversation(next)).toBe(second);
    expect(layoutConversation([...next])).toBe(second);
  });

  test("a new note changes only the notes list; a result answering nothing only the loose list; a new task every list it touches", () => {
    const messages = history();
    const first = layoutConversation(messages);
    const withNote = [...messages, createOmissionNote(DEFAULT_OMISSION_NOTE, 1, 1)];
    const second = layoutConversation(withNote);
    expect(second).toEqual(groupConversation(withNote));
    expect(second.notes).not.toBe(first.notes);
    expect([second.turns, second.steps, second.loose]).toEqual([first.turns, first.steps, first.loose]);
    expect(second.turns).toBe(first.turns);
    expect(second.steps).toBe(first.steps);
    expect(second.loose).toBe(first.loose);

    const withLoose = [...withNote, new ToolMessage({ content: "late", tool_call_id: "x" })];
    const third = layoutConversation(withLoose);
    expect(third).toEqual(groupConversation(withLoose));
    expect(third.loose).not.toBe(second.loose);
    expect(third.notes).toBe(second.notes);
    expect(third.turns).toBe(second.turns);
    expect(third.steps).toBe(second.steps);

    // A new user message: the task becomes history (new turns, steps emptied).
    const newTask = [...withLoose, new HumanMessage("next question")];
    const fourth = layoutConversation(newTask);
    expect(fourth).toEqual(groupConversation(newTask));
    expect(fourth.turns).not.toBe(third.turns);
    expect(fourth.steps).toEqual([]);
  });
});
