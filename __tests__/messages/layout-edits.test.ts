/**
 * Every single edit of a few conversations, each applied to a remembered
 * layout: the result must be the fresh layout of the edited list.
 *
 * The random suites (`layout-reuse`, `rules/layout-reference`) reach the
 * engine's undo and relay paths by chance; some paths they rarely reach
 * (an element replaced in place with the length unchanged, a replacement
 * that turns the task into history, a result whose call arrives only later,
 * an id asked for twice). Here each conversation is edited at every position
 * with every kind of message, removed from, cut back and grown, so each
 * path is taken deterministically. The oracle is `freshLayout` (no memory):
 * the grouping rules both share are checked against an independent
 * reference in `rules/layout-reference`.
 */
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { freshLayout } from "../../src/messages/layout";
import { layoutWork } from "../../src/messages/layout-engine";
import { createOmissionNote, DEFAULT_OMISSION_NOTE } from "../../src/messages/omission-note";
import { call, result } from "../support/layout-builders";
import { expectSameAsFresh } from "../support/layout-oracle";


/** One message of each kind the layout tells apart, new objects each time. */
const kinds: Record<string, () => BaseMessage> = {
  human: () => new HumanMessage("a user message"),
  system: () => new SystemMessage("an instruction"),
  ai: () => new AIMessage("thinking"),
  "call a": () => call("a"),
  "call q": () => call("q"),
  "result a": () => result("a"),
  "result q": () => result("q"),
  "result without id": () => new ToolMessage({ content: "lost id", tool_call_id: "" }),
  note: () => createOmissionNote(DEFAULT_OMISSION_NOTE, 2, 3),
  summary: () => new HumanMessage({ content: "<conversation_summary>so far</conversation_summary>", response_metadata: { compaction: { strategy: "summarization", summarized_messages: 3, source: "history" } } }),
  other: () => new ChatMessage({ role: "critic", content: "fine" }),
};

/** Conversations that hold what the engine decides across stretches. */
const conversations: Record<string, () => BaseMessage[]> = {
  "history, then a task with parallel calls": () => [
    new SystemMessage("instructions"),
    new HumanMessage("first question"),
    call("a"),
    result("a"),
    new AIMessage("answer"),
    new HumanMessage("current task"),
    call("b", "c"),
    result("c"),
    result("b"),
    call("d"),
    result("d"),
  ],
  "a result before its call, a call answered across the task, a note": () => [
    new SystemMessage("instructions"),
    new HumanMessage("first question"),
    result("late"), // answers the call after the task: decided when that call arrives
    call("h"),
    createOmissionNote(DEFAULT_OMISSION_NOTE, 4, 2),
    new HumanMessage("current task"),
    result("h"), // answers a call in history: that turn joins this step
    call("late"),
    new AIMessage("thinking"),
    result("nobody"), // answers nothing after the task: loose
  ],
  "an id asked for twice, and a task with no steps yet": () => [
    new HumanMessage("first question"),
    call("x"),
    result("x"),
    call("x"),
    result("x"),
    new HumanMessage("current task"),
  ],
};

/** Every single edit of `base`: each replacement, removal, truncation, insertion and append, with a label. */
function edits(base: readonly BaseMessage[]): [string, BaseMessage[]][] {
  const out: [string, BaseMessage[]][] = [];
  for (let at = 0; at < base.length; at += 1) {
    for (const [kind, make] of Object.entries(kinds)) {
      out.push([`replace ${at} by ${kind}`, base.map((message, index) => (index === at ? make() : message))]);
      out.push([`insert ${kind} at ${at}`, [...base.slice(0, at), make(), ...base.slice(at)]]);
    }
    out.push([`remove ${at}`, base.filter((_, index) => index !== at)]);
    out.push([`truncate to ${at}`, base.slice(0, at)]);
    if (at + 1 < base.length) out.push([`swap ${at} and ${at + 1}`, base.map((message, index) => (index === at ? base[at + 1]! : index === at + 1 ? base[at]! : message))]);
  }
  for (const [kind, make] of Object.entries(kinds)) out.push([`append ${kind}`, [...base, make()]]);
  out.push(["the same messages in a new array", [...base]]);
  return out;
}

describe("a remembered layout, edited once anywhere, equals a fresh layout", () => {
  for (const [name, build] of Object.entries(conversations)) {
    test(name, () => {
      const base = build();
      let cases = 0;
      for (const [label, edited] of edits(base)) {
        // Start from the remembered layout of the whole base list, then edit, then grow the edited list by one step.
        expectSameAsFresh(base, `${label}: the base list`);
        expectSameAsFresh(edited, label);
        expectSameAsFresh([...edited, call("z"), result("z")], `${label}, then a step`);
        expectSameAsFresh([...edited, new HumanMessage("next task")], `${label}, then a new task`);
        cases += 1;
      }
      expect(cases).toBe(base.length * (2 * Object.keys(kinds).length + 3) - 1 + Object.keys(kinds).length + 1);
    });
  }

  test("grown one message at a time, then cut back one message at a time", () => {
    for (const build of Object.values(conversations)) {
      const full = build();
      for (let length = 0; length <= full.length; length += 1) expectSameAsFresh(full.slice(0, length), `grown to ${length}`);
      for (let length = full.length; length >= 0; length -= 1) expectSameAsFresh(full.slice(0, length), `cut back to ${length}`);
    }
  });

  test("the last message retried again and again (a model call replayed), and the task message edited in place", () => {
    const base = conversations["history, then a task with parallel calls"]!();
    expectSameAsFresh(base, "base");
    for (let retry = 0; retry < 5; retry += 1) {
      expectSameAsFresh([...base.slice(0, -1), result("d")], `retry ${retry}`);
      expectSameAsFresh([...base.slice(0, -2), call(`d${retry}`), result(`d${retry}`)], `another last step ${retry}`);
    }
    const task = base.findIndex((message) => message.content === "current task");
    expectSameAsFresh(base.map((message, index) => (index === task ? new HumanMessage("current task, reworded") : message)), "task reworded");
    expectSameAsFresh(base.map((message, index) => (index === task ? new AIMessage("no longer a task") : message)), "task gone");
  });
});

describe("a result that lost its id, worked out by hand", () => {
  // Shared by the remembered and the fresh layout, so checked here against expectations of its own.
  test("it answers the calling AI message right before it, and nothing else", () => {
    const task = new HumanMessage("task");
    expect(freshLayout([task, call("a"), new ToolMessage({ content: "r", tool_call_id: "" })])).toMatchObject({ steps: [{ members: [1, 2] }], loose: [] });
    // An AI message that asks for nothing, a system message or another result in between: no caller, so it is loose.
    expect(freshLayout([task, new AIMessage("thinking"), new ToolMessage({ content: "r", tool_call_id: "" })])).toMatchObject({ steps: [{ members: [1] }], loose: [2] });
    expect(freshLayout([task, call("a"), new SystemMessage("late"), new ToolMessage({ content: "r", tool_call_id: "" })])).toMatchObject({ steps: [{ members: [1, 2] }], loose: [3] });
    // In history it stays in its turn either way.
    expect(freshLayout([new HumanMessage("old"), new AIMessage("thinking"), new ToolMessage({ content: "r", tool_call_id: "" }), task])).toMatchObject({ turns: [{ members: [0, 1, 2] }], loose: [] });
  });
});

describe("long conversations and the engine's own counters", () => {
  test("more call ids, messages and results than the engine's first arrays hold: every result stays with its call", () => {
    // The engine keeps per-message and per-id facts in typed arrays that start at 64 entries and grow.
    const messages: BaseMessage[] = [new SystemMessage("instructions"), new HumanMessage("current task")];
    for (let step = 0; step < 150; step += 1) messages.push(call(`id${step}`), result(`id${step}`));
    const layout = freshLayout(messages);
    expect(layout.steps).toHaveLength(150);
    layout.steps.forEach((group, step) => expect(group.members).toEqual([2 + 2 * step, 3 + 2 * step]));
    expect(layout.loose).toEqual([]);
    // The same list continued, one step at a time past the 64th call id of this conversation.
    const grown: BaseMessage[] = messages.slice(0, 2);
    for (let index = 2; index < messages.length; index += 2) {
      grown.push(messages[index]!, messages[index + 1]!);
      expectSameAsFresh(grown, `grown to ${grown.length}`);
    }
  });

  test("the work counters grow with the work: unions, owner visits, union-find steps and moved members", () => {
    const before = { ...layoutWork };
    // An id asked for by two AI messages: the second owner's unit is joined to the first's when the id is answered.
    freshLayout([new HumanMessage("task"), call("a"), new AIMessage("thinking"), call("a"), result("a"), call("a"), result("a")]);
    // Read once: an id asked for again is found by the same probe that would add it, nothing is laid out twice.
    expect(layoutWork.messages - before.messages).toBe(7);
    expect(layoutWork.unions - before.unions).toBeGreaterThan(0);
    expect(layoutWork.ownerVisits - before.ownerVisits).toBeGreaterThan(0);
    expect(layoutWork.memberMoves - before.memberMoves).toBeGreaterThan(0);
    expect(layoutWork.findSteps - before.findSteps).toBeGreaterThan(0);
  });
});
