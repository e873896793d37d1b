/**
 * The grouping rules of `layoutConversation`, one conversation each, with the
 * layout written out by hand from the rules in its documentation:
 *
 * - leading system messages are the instructions; the latest real human
 *   message is the task (a summary of ours never is); no human message means
 *   no task, and everything after the instructions is the task's work;
 * - history is grouped into turns, each from a human message (or a summary)
 *   up to the next; what comes before the first is loose;
 * - after the task each AI message opens a step, and a summary opens one of
 *   its own; other messages (a system message, another role) join the step
 *   they stand in, or open one when none has begun;
 * - a result joins the unit of the call asking for its id, wherever it
 *   stands; one without an id joins the AI message right before it when that
 *   message asks for tools, and is loose otherwise;
 * - omission notes belong to no unit.
 *
 * Each layout is checked fresh and remembered (after the list grew message by
 * message), so a rule broken in the grouping both share fails here.
 */
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { freshLayout, layoutConversation } from "../../src/messages/layout";
import type { ConversationLayout } from "../../src/messages/grouping";
import { createOmissionNote, DEFAULT_OMISSION_NOTE } from "../../src/messages/omission-note";
import { forgetRememberedLists } from "../../src/messages/prefix-memory";
import { call, layoutOf as layout, result, step, turn } from "../support/layout-builders";

const lostId = (): ToolMessage => new ToolMessage({ content: "a result that lost its id", tool_call_id: "" });
/** A tool call whose id the provider left out: it still asks for a tool. */
const callWithoutId = (): AIMessage => new AIMessage({ content: "", tool_calls: [{ name: "lookup", args: {} }] });
const summary = (): HumanMessage =>
  new HumanMessage({ content: "<conversation_summary>so far</conversation_summary>", response_metadata: { compaction: { strategy: "summarization", summarized_messages: 3, source: "history" } } });
const note = (): HumanMessage => createOmissionNote(DEFAULT_OMISSION_NOTE, 2, 3);
const human = (text: string): HumanMessage => new HumanMessage(text);
const system = (text: string): SystemMessage => new SystemMessage(text);
const ai = (text: string): AIMessage => new AIMessage(text);
const critic = (): ChatMessage => new ChatMessage({ role: "critic", content: "fine" });


/** The fresh layout, and the remembered one after growing the list one message at a time, both equal to `expected`. */
function expectLayout(messages: readonly BaseMessage[], expected: ConversationLayout): void {
  expect(freshLayout(messages)).toEqual(expected);
  forgetRememberedLists();
  for (let length = 1; length < messages.length; length += 1) layoutConversation(messages.slice(0, length));
  expect(layoutConversation(messages)).toEqual(expected);
}

beforeEach(() => forgetRememberedLists());

describe("results without an id", () => {
  test("after a call whose id was left out: it answers that call", () => {
    expectLayout([human("task"), callWithoutId(), lostId()], layout({ task: 0, steps: [step([1, 2])] }));
  });

  test("after an AI message that asks for nothing: loose, even when a call without an id came before", () => {
    expectLayout([human("task"), callWithoutId(), ai("thinking"), lostId()], layout({ task: 0, steps: [step([1]), step([2])], loose: [3] }));
  });

  test("after a omission note: loose (a note ends the exchange before it)", () => {
    expectLayout(
      [note(), human("old"), note(), human("task"), call("a"), note(), lostId()],
      layout({ task: 3, turns: [turn([1])], steps: [step([4])], notes: [0, 2, 5], loose: [6] }),
    );
  });
});

describe("instructions and the task", () => {
  test("only instructions, growing and shrinking: the layout follows the leading system messages", () => {
    const first = system("instructions");
    const second = system("more instructions");
    const task = human("task");
    expect(layoutConversation([first])).toEqual(layout({ systemEnd: 1 }));
    expect(layoutConversation([first, second])).toEqual(layout({ systemEnd: 2 }));
    expect(layoutConversation([first])).toEqual(layout({ systemEnd: 1 }));
    expect(layoutConversation([first, task])).toEqual(layout({ systemEnd: 1, task: 1 }));
    // The task cut off: no task any more (not a stale index past the end).
    expect(layoutConversation([first])).toEqual(layout({ systemEnd: 1 }));
    expect(layoutConversation([])).toEqual(layout({}));
  });

  test("the task message right after the instructions replaced by an AI message: no task, not the old index", () => {
    // The stretch undone is the task's own, so the task it set is stale: the new list has no task at all.
    const instructions = [system("instructions"), system("more instructions")];
    expect(layoutConversation([...instructions, human("task")])).toEqual(layout({ systemEnd: 2, task: 2 }));
    expect(layoutConversation([...instructions, ai("thinking")])).toEqual(layout({ systemEnd: 2, steps: [step([2])] }));
    const one = system("instructions");
    expect(layoutConversation([one, human("task")])).toEqual(layout({ systemEnd: 1, task: 1 }));
    expect(layoutConversation([one, ai("thinking")])).toEqual(layout({ systemEnd: 1, steps: [step([1])] }));
  });

  test("no human message: everything after the instructions is the task's work, in steps", () => {
    expectLayout(
      [system("instructions"), call("a"), result("a"), ai("answer"), result("nobody")],
      layout({ systemEnd: 1, steps: [step([1, 2]), step([3])], loose: [4] }),
    );
  });

  test("a summary is never the task: before it, it opens a turn; after it, a step of its own", () => {
    expectLayout([summary(), ai("answer"), human("task")], layout({ task: 2, turns: [turn([0, 1])] }));
    expectLayout([human("task"), ai("first"), summary(), ai("second")], layout({ task: 0, steps: [step([1]), step([2]), step([3])] }));
  });
});

describe("messages of other kinds", () => {
  test("another role after the task opens a step when none has begun, and joins the one it stands in", () => {
    expectLayout([human("task"), critic(), call("a"), critic(), result("a")], layout({ task: 0, steps: [step([1]), step([2, 3, 4])] }));
  });

  test("before the first turn it is loose; inside a turn it belongs to the turn", () => {
    expectLayout([critic(), human("old"), critic(), human("task")], layout({ task: 3, turns: [turn([1, 2])], loose: [0] }));
  });

  test("a system message inside the task joins the step it stands in, between a call and its result too", () => {
    expectLayout([human("task"), call("a"), system("mid"), result("a"), system("late")], layout({ task: 0, steps: [step([1, 2, 3, 4])] }));
  });
});

describe("results standing apart from their calls", () => {
  test("a result before its call joins the call's step; the group's members are ascending and its order is the call's", () => {
    expectLayout([human("task"), result("a"), ai("thinking"), call("a")], layout({ task: 0, steps: [step([2]), step([1, 3], 3)] }));
  });

  test("results of parallel calls answered out of order and interleaved with the next step's: each with its own call", () => {
    expectLayout(
      [human("task"), call("a", "b"), result("b"), call("c"), result("a"), result("c")],
      layout({ task: 0, steps: [step([1, 2, 4]), step([3, 5])] }),
    );
  });
});
