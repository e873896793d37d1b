/**
 * How much a remembered layout reads, exactly, for each kind of change to the
 * list it saw last (a continued history costs its new part, not the
 * whole list).
 *
 * Every result is also checked against a fresh layout, so what these tests add
 * is the cost: an undo that leaves something behind (an id still registered,
 * a result still waiting for its call) is repaired by laying the list out
 * again from the start, which gives the right layout and reads far more. The
 * counts are `layoutWork.messages` (messages read), worked out from the rule:
 * the engine reads from the first message that differs, after undoing the
 * stretches that hold it; a change that makes the task history (or history the
 * task) reads the task again; a change inside history reads the whole list.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { layoutConversation } from "../../src/messages/layout";
import { layoutWork } from "../../src/messages/layout-engine";
import { forgetRememberedLists } from "../../src/messages/prefix-memory";
import { call, result } from "../support/layout-builders";
import { expectSameAsFresh } from "../support/layout-oracle";


/** Lays `messages` out on the remembered layout; returns how many messages that read, after checking it against a fresh layout. */
function reads(messages: BaseMessage[], label: string): number {
  const before = layoutWork.messages;
  layoutConversation(messages);
  const read = layoutWork.messages - before;
  expectSameAsFresh(messages, label); // remembered again: the same list, nothing more to read
  return read;
}

beforeEach(() => forgetRememberedLists());

test("an agent's history: each change reads from where it is, the task again when the task changes", () => {
  const history = [new SystemMessage("instructions"), new HumanMessage("first"), call("a"), result("a"), new AIMessage("answer")];
  const task = [new HumanMessage("task"), call("b", "c"), result("c"), result("b"), call("d"), result("d")];
  const base = [...history, ...task]; // the task starts at 5, the list has 11
  expect(reads(base, "fresh")).toBe(11);
  expect(reads([...base], "the same messages in a new array")).toBe(0);
  const grown = [...base, call("z"), result("z")];
  expect(reads(grown, "a step appended")).toBe(2);
  // Only the last extension's stretch is undone.
  const retried = [...grown.slice(0, -1), result("z")];
  expect(reads(retried, "the last result replaced")).toBe(2);
  // A message inside the first stretch of the task: that stretch and the one after it, from the task on.
  const edited = retried.map((message, index) => (index === 9 ? call("q") : message));
  expect(reads(edited, "a call inside the task replaced")).toBe(13 - 5);
  // A new user message: 1 read to see it, then the task laid out again as history.
  const next = [...edited, new HumanMessage("next task")];
  expect(reads(next, "a new user message")).toBe(1 + 14 - 5);
  // A step of the new task, then a new call id in place of its call: only that stretch.
  const working = [...next, call("e"), result("e")];
  expect(reads(working, "a step of the new task")).toBe(2);
  expect(reads([...next, call("f"), result("e")], "its call asking for another id")).toBe(2);
  // The new user message removed: the old task is the task again, inside what was history: the whole list.
  expect(reads(edited, "the new user message removed")).toBe(13);
});

test("an id asked for twice: only what is new is read, the repeat included", () => {
  const base = [new HumanMessage("task"), call("x"), result("x")];
  expect(reads(base, "fresh")).toBe(3);
  // The second call asking for x is found as a repeat by the probe that would have added it: no relay of the list.
  const repeated = [...base, call("x"), result("x")];
  expect(reads(repeated, "a second call asking for x")).toBe(2);
  const retried = [...repeated.slice(0, -1), result("x")];
  expect(reads(retried, "the last result replaced")).toBe(2);
  const grown = [...retried, call("y"), result("y")];
  expect(reads(grown, "a step appended")).toBe(2);
  expect(reads([...retried, call("x"), result("x")], "that step asking for x instead")).toBe(2);
});

test("a result waiting for its call, undone with its stretch, leaves nothing to wait for", () => {
  const base = [new HumanMessage("task"), call("a"), result("a"), result("later")];
  expect(reads(base, "fresh")).toBe(4);
  // The waiting result replaced: what remembered it was undone with the stretch.
  const replaced = [...base.slice(0, -1), new AIMessage("done")];
  expect(reads(replaced, "the waiting result replaced")).toBe(4);
  // A call asking for the id it waited for: no earlier result answers it now, so only the new step is read.
  expect(reads([...replaced, call("later"), result("later")], "a call for that id")).toBe(2);
});

test("a task that placed a result of history, turned into history: the whole list again, once", () => {
  // The result at 2 answers the call at 4, which is in the task: the task's stretch decided where 2 goes, and
  // undoing it undoes that decision, inside history's stretch, which is not undone piecewise.
  const base = [new HumanMessage("first"), call("x"), result("y"), new HumanMessage("second"), call("y")];
  expect(reads(base, "fresh")).toBe(5);
  const next = [...base, new HumanMessage("task")];
  expect(reads(next, "a new user message")).toBe(1 + 6);
  expect(reads([...next, call("z"), result("z")], "a step of the new task")).toBe(2);
});

test("a task longer than the undo limit: its oldest stretch is forgotten, so an edit there lays the whole list out again", () => {
  // The engine keeps at most 200,000 undo entries (memory stays bounded); a step of one call and its result
  // takes 5. A task of 50,000 steps is past the limit on its own: the newest stretch is never forgotten, and the
  // older ones are once a newer one arrives.
  const history = [new SystemMessage("instructions"), new HumanMessage("first"), new AIMessage("answer")];
  const task: BaseMessage[] = [new HumanMessage("task")];
  for (let step = 0; step < 50_000; step += 1) task.push(call(`c${step}`), result(`c${step}`));
  const base = [...history, ...task];
  expect(reads(base, "fresh")).toBe(base.length);
  // The only stretch of the task is the newest: undone, and the task laid out again (not the history before it).
  const retried = [...base.slice(0, -1), result("c49999")];
  expect(reads(retried, "the last result replaced")).toBe(base.length - history.length);
  // A second stretch: the first is forgotten now. A third: the second, small, is kept.
  const grown = [...retried, call("z"), result("z")];
  expect(reads(grown, "a step appended")).toBe(2);
  const grownAgain = [...grown, call("y"), result("y")];
  expect(reads(grownAgain, "another step appended")).toBe(2);
  // An edit in the second stretch: it and the third are undone, and only they are read again.
  const inSecond = grownAgain.map((message, index) => (index === grown.length - 2 ? call("q") : message));
  expect(reads(inSecond, "a call of the second stretch replaced")).toBe(4);
  // An edit in the forgotten stretch (late enough in the list that the memory recalls it): everything, not
  // just the task (which would be the length less the 3 messages of history with the trail kept).
  const edited = inSecond.map((message, index) => (index === grown.length - 1_000 ? call("p") : message));
  expect(reads(edited, "a call inside the forgotten stretch replaced")).toBe(edited.length);
});
