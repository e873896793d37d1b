/**
 * Where a remembered cut puts what it added (found by a mutation run
 * of `src/messages/turns.ts`): an addition whose anchor left the history, or
 * that has none, stands right after the leading run of system messages; with
 * only system messages left it comes last. Exact ids.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { applyCompactionView } from "../../src";

const ids = (messages: readonly BaseMessage[]) => messages.map((m) => m.id);
const note = () => new HumanMessage({ id: "note", content: "[earlier messages omitted]" });
const history = () => [
  new SystemMessage({ id: "s1", content: "rules" }),
  new SystemMessage({ id: "s2", content: "more rules" }),
  new HumanMessage({ id: "h1", content: "old question" }),
  new AIMessage({ id: "a1", content: "old answer" }),
  new HumanMessage({ id: "task", content: "task" }),
];

describe("an addition without a present anchor stands after the leading system messages", () => {
  test("its anchor was hidden: after both system messages, before the task", () => {
    const view = { hiddenIds: ["h1", "a1"], added: [{ message: note(), afterId: "a1" }] };
    expect(ids(applyCompactionView(history(), view))).toEqual(["s1", "s2", "note", "task"]);
  });

  test("no anchor (null), and no system message: first", () => {
    const messages = history().slice(2);
    const view = { hiddenIds: ["h1"], added: [{ message: note(), afterId: null }] };
    expect(ids(applyCompactionView(messages, view))).toEqual(["note", "a1", "task"]);
  });

  test("only system messages visible: last", () => {
    const view = { hiddenIds: ["h1", "a1", "task"], added: [{ message: note(), afterId: null }] };
    expect(ids(applyCompactionView(history(), view))).toEqual(["s1", "s2", "note"]);
  });

  test("an anchor still present keeps its place", () => {
    const view = { hiddenIds: ["h1"], added: [{ message: note(), afterId: "s2" }, { message: new HumanMessage({ id: "n2", content: "x" }), afterId: "a1" }] };
    expect(ids(applyCompactionView(history(), view))).toEqual(["s1", "s2", "note", "a1", "n2", "task"]);
  });
});
