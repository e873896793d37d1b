/**
 * Exchanges that join units together, worked out by hand: an id asked for by
 * two AI messages, a result answering a call in another turn, a turn of
 * history answered inside the task, a call asked for before the first turn.
 *
 * These are the engine's unions (and the undo of each). `layout-edits` checks
 * a remembered layout against a fresh one, which share the grouping; here each
 * expected layout is written out, so a union that joins the wrong units, keeps
 * the wrong kind or head, lists the merged group in the wrong place or leaves
 * a joined message among the loose ones fails, whichever way it was laid out.
 */
import { AIMessage, BaseMessage, HumanMessage } from "@langchain/core/messages";
import { freshLayout, layoutConversation } from "../../src/messages/layout";
import type { ConversationLayout } from "../../src/messages/grouping";
import { forgetRememberedLists } from "../../src/messages/prefix-memory";
import { call, layoutOf, result, step, turn } from "../support/layout-builders";
import { expectSameAsFresh } from "../support/layout-oracle";

const human = (text: string): HumanMessage => new HumanMessage(text);
const thinking = (): AIMessage => new AIMessage("thinking");


interface Case {
  build: () => BaseMessage[];
  expected: Omit<ConversationLayout, "systemEnd" | "notes">;
}

/** Each conversation with its layout worked out by hand (no system messages, no notes). */
const cases: Record<string, Case> = {
  "an id asked for twice in the task: the two steps are one, listed where the newer call stands": {
    build: () => [human("task"), call("x"), result("x"), thinking(), call("x"), result("x")],
    // The step of the thinking message (3) stays apart; the merged step takes the head of the newer call (4).
    expected: { task: 0, turns: [], steps: [step([3], 3), step([1, 2, 4, 5], 4)], loose: [] },
  },
  "an id asked for twice in history: the two turns are one": {
    build: () => [human("first"), call("x"), result("x"), human("second"), call("x"), result("x"), human("task")],
    expected: { task: 6, turns: [turn([0, 1, 2, 3, 4, 5], 3)], steps: [], loose: [] },
  },
  "a call before the first turn answered inside it: the result stays with its loose call": {
    build: () => [call("x"), human("first"), result("x"), human("task")],
    expected: { task: 3, turns: [turn([1], 1)], steps: [], loose: [0, 2] },
  },
  "a call before the first turn asked again inside it: the loose exchange joins the turn": {
    build: () => [call("x"), human("first"), call("x"), result("x"), human("task")],
    expected: { task: 4, turns: [turn([0, 1, 2, 3], 1)], steps: [], loose: [] },
  },
  "a turn of history asked again in the task: the turn joins the step": {
    build: () => [human("first"), call("x"), human("task"), call("x"), result("x")],
    expected: { task: 2, turns: [], steps: [step([0, 1, 3, 4], 3)], loose: [] },
  },
  "a result answering a call of a later turn, and a call of history answered in the task": {
    build: () => [human("first"), call("x"), result("y"), human("second"), call("y"), human("task"), call("x"), result("x")],
    expected: { task: 5, turns: [turn([2, 3, 4], 3)], steps: [step([0, 1, 6, 7], 6)], loose: [] },
  },
  "three owners of one id across history and the task: one step": {
    build: () => [human("first"), call("x"), result("x"), human("second"), call("x"), human("task"), thinking(), call("x"), result("x")],
    expected: { task: 5, turns: [], steps: [step([6], 6), step([0, 1, 2, 3, 4, 7, 8], 7)], loose: [] },
  },
};


describe("unions worked out by hand", () => {
  beforeEach(() => forgetRememberedLists());

  for (const [name, { build, expected }] of Object.entries(cases)) {
    test(`${name}: fresh, remembered, and grown one message at a time`, () => {
      const messages = build();
      expect(freshLayout(messages)).toEqual(layoutOf(expected));
      expect(layoutConversation(messages)).toEqual(layoutOf(expected));
      // Grown from nothing through remembered layouts (each prefix continues the last), then the whole list again.
      forgetRememberedLists();
      for (let length = 1; length < messages.length; length += 1) expectSameAsFresh(messages.slice(0, length), `grown to ${length}`);
      expect(layoutConversation([...messages])).toEqual(layoutOf(expected));
      // Cut back one message at a time, and grown again: each union is undone, then made again.
      for (let length = messages.length - 1; length >= 0; length -= 1) expectSameAsFresh(messages.slice(0, length), `cut back to ${length}`);
      for (let length = 1; length <= messages.length; length += 1) expectSameAsFresh(messages.slice(0, length), `grown again to ${length}`);
      expect(layoutConversation(messages)).toEqual(layoutOf(expected));
    });
  }
});

describe("a union undone by an edit of the task, worked out by hand", () => {
  beforeEach(() => forgetRememberedLists());

  test("the newer call replaced by one asking for another id: the steps come apart again", () => {
    const messages = cases["an id asked for twice in the task: the two steps are one, listed where the newer call stands"]!.build();
    layoutConversation(messages);
    const edited = messages.map((message, index) => (index === 4 ? call("y") : message));
    // The last result still answers x, so it joins the first call's step; the new call stands alone, unanswered.
    const expected = layoutOf({ task: 0, turns: [], steps: [step([1, 2, 5], 1), step([3], 3), step([4], 4)], loose: [] });
    expect(layoutConversation(edited)).toEqual(expected);
    expect(freshLayout(edited)).toEqual(expected);
    // And back: the union is made again on the remembered layout.
    expect(layoutConversation(messages)).toEqual(layoutOf(cases["an id asked for twice in the task: the two steps are one, listed where the newer call stands"]!.expected));
  });

  test("the call of the task that joined a turn of history cut off: the turn is history again", () => {
    const messages = cases["a turn of history asked again in the task: the turn joins the step"]!.build();
    layoutConversation(messages);
    expect(layoutConversation(messages.slice(0, 3))).toEqual(layoutOf({ task: 2, turns: [turn([0, 1], 0)], steps: [], loose: [] }));
    // Another step in its place: the turn stays apart.
    const other = [...messages.slice(0, 3), call("y"), result("y")];
    expect(layoutConversation(other)).toEqual(layoutOf({ task: 2, turns: [turn([0, 1], 0)], steps: [step([3, 4], 3)], loose: [] }));
  });

  test("the loose call's second owner cut off: the loose exchange is loose again", () => {
    const messages = cases["a call before the first turn asked again inside it: the loose exchange joins the turn"]!.build();
    layoutConversation(messages);
    // The task message and the second call removed: everything after the first human is the task now.
    const cut = [messages[0]!, messages[1]!, messages[3]!];
    expect(layoutConversation(cut)).toEqual(layoutOf({ task: 1, turns: [], steps: [], loose: [0, 2] }));
    expect(freshLayout(cut)).toEqual(layoutOf({ task: 1, turns: [], steps: [], loose: [0, 2] }));
  });

  test("a new user message after a union in the task: the merged step becomes one turn of history", () => {
    const messages = cases["an id asked for twice in the task: the two steps are one, listed where the newer call stands"]!.build();
    layoutConversation(messages);
    const next = [...messages, human("next task")];
    const expected = layoutOf({ task: 6, turns: [turn([0, 1, 2, 3, 4, 5], 0)], steps: [], loose: [] });
    expect(layoutConversation(next)).toEqual(expected);
    expect(freshLayout(next)).toEqual(expected);
    // Removing it again makes the old task the task again, with its steps as before.
    expect(layoutConversation(messages)).toEqual(layoutOf(cases["an id asked for twice in the task: the two steps are one, listed where the newer call stands"]!.expected));
  });
});
