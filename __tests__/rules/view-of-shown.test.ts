/**
 * Reading a cut back from what the model was shown (`viewOfShown`), and
 * applying a cut that only hides (issue 12: survivors of a mutation run of
 * `src/integrations/view-window.ts`). A shown message is a history message
 * when it is one of history's objects or carries one's id (a stand-in when it
 * differs by type, content or compaction metadata); history after the newest
 * shown message is new, not hidden, once the history has grown since.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { applyCompactionView, viewOfShown } from "../../src/integrations/view-window";

const ids = (messages: readonly BaseMessage[]) => messages.map((m) => m.id ?? "(no id)");
const history = () => [
  new SystemMessage({ id: "s1", content: "rules" }),
  new HumanMessage({ id: "h1", content: "old question" }),
  new AIMessage({ id: "a1", content: "old answer" }),
  new HumanMessage({ id: "task", content: "task" }),
];

test("a cut that only hides drops exactly the hidden messages", () => {
  expect(ids(applyCompactionView(history(), { hiddenIds: ["h1", "a1"] }))).toEqual(["s1", "task"]);
  expect(ids(applyCompactionView(history(), { hiddenIds: [], added: [], rewritten: [] }))).toEqual(["s1", "h1", "a1", "task"]);
});

describe("viewOfShown", () => {
  test("history's own objects shown as they are: hidden ids only, nothing rewritten or added", () => {
    const messages = history();
    expect(viewOfShown(messages, [messages[0]!, messages[3]!])).toEqual({ hiddenIds: ["h1", "a1"], rewritten: [], added: [] });
  });

  test("a shown history message without an id is recognised by identity, not taken for an addition", () => {
    const messages = [new SystemMessage({ id: "s1", content: "rules" }), new HumanMessage({ content: "no id" }), new HumanMessage({ id: "task", content: "task" })];
    expect(viewOfShown(messages, [...messages])).toEqual({ hiddenIds: [], rewritten: [], added: [] });
  });

  test("a copy read back from a checkpoint is the same message; a changed one is a stand-in", () => {
    const messages = history();
    const readBack = new AIMessage({ id: "a1", content: "old answer" });
    expect(viewOfShown(messages, [messages[0]!, readBack, messages[3]!]).rewritten).toEqual([]);
    const pruned = new AIMessage({ id: "a1", content: "[pruned]" });
    expect(viewOfShown(messages, [messages[0]!, pruned, messages[3]!]).rewritten).toEqual([pruned]);
    const otherType = new HumanMessage({ id: "a1", content: "old answer" });
    expect(viewOfShown(messages, [messages[0]!, otherType, messages[3]!]).rewritten).toEqual([otherType]);
    const marked = new AIMessage({ id: "a1", content: "old answer", response_metadata: { compaction: { strategy: "x" } } });
    expect(viewOfShown(messages, [messages[0]!, marked, messages[3]!]).rewritten).toEqual([marked]);
  });

  test("grownSince: history after the newest message shown is new, not hidden", () => {
    const messages = [...history(), new AIMessage({ id: "new1", content: "reply" }), new HumanMessage({ id: "new2", content: "next" })];
    const note = new HumanMessage({ id: "note", content: "[omitted]" });
    const shown = [messages[0]!, note, messages[3]!];
    expect(viewOfShown(messages, shown, { grownSince: true }).hiddenIds).toEqual(["h1", "a1"]);
    // Without it (the default), everything not shown is hidden.
    expect(viewOfShown(messages, shown).hiddenIds).toEqual(["h1", "a1", "new1", "new2"]);
    // Nothing of history shown yet: all of it is new.
    expect(viewOfShown(messages, [note], { grownSince: true })).toEqual({ hiddenIds: [], rewritten: [], added: [{ message: note, afterId: null }] });
  });
});
