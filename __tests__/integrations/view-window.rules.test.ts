/**
 * Reading a cut back from what the model was shown (`viewOfShown`), and
 * applying a cut that only hides (survivors of a mutation run of
 * `src/integrations/view-window.ts`). A shown message is a history message
 * when it is one of history's objects or carries one's id (a stand-in when it
 * differs by type, content, calls, provider fields or compaction metadata); history after the newest
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

  test("a stand-in that keeps the text (a call's input cleared, reasoning dropped beside the text) is a stand-in", () => {
    const call = { id: "c1", name: "write_file", args: { path: "a.ts", text: "x".repeat(500) }, type: "tool_call" as const };
    const original = new AIMessage({ id: "a1", content: "Writing.", tool_calls: [call], additional_kwargs: { reasoning_content: "think" } });
    const messages = [history()[0]!, original, history()[3]!];
    const readBack = new AIMessage({ id: "a1", content: "Writing.", tool_calls: [{ ...call, args: { ...call.args } }], additional_kwargs: { reasoning_content: "think" } });
    expect(viewOfShown(messages, [messages[0]!, readBack, messages[2]!]).rewritten).toEqual([]);
    const inputCleared = new AIMessage({ id: "a1", content: "Writing.", tool_calls: [{ ...call, args: { input_removed: "gone" } }], additional_kwargs: { reasoning_content: "think" } });
    expect(viewOfShown(messages, [messages[0]!, inputCleared, messages[2]!]).rewritten).toEqual([inputCleared]);
    const reasoningCleared = new AIMessage({ id: "a1", content: "Writing.", tool_calls: [call] });
    expect(viewOfShown(messages, [messages[0]!, reasoningCleared, messages[2]!]).rewritten).toEqual([reasoningCleared]);
    const invalidCleared = new AIMessage({ id: "a1", content: "Writing.", tool_calls: [call], additional_kwargs: { reasoning_content: "think" }, invalid_tool_calls: [{ id: "c2", name: "x", args: "{}", error: "bad", type: "invalid_tool_call" }] });
    expect(viewOfShown(messages, [messages[0]!, invalidCleared, messages[2]!]).rewritten).toEqual([invalidCleared]);
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

describe("applyCompactionView: cuts that hide nothing, and the old format", () => {
  const note = () => new HumanMessage({ id: "note", content: "[summary]" });

  test("a cut that only adds puts the addition after its anchor", () => {
    const view = { hiddenIds: [], added: [{ message: note(), afterId: "a1" }] };
    expect(ids(applyCompactionView(history(), view))).toEqual(["s1", "h1", "a1", "note", "task"]);
  });

  test("a cut that only rewrites shows the stand-in in the original's place", () => {
    const standIn = new AIMessage({ id: "a1", content: "[pruned]" });
    const shown = applyCompactionView(history(), { hiddenIds: [], rewritten: [standIn] });
    expect(ids(shown)).toEqual(["s1", "h1", "a1", "task"]);
    expect(shown[2]).toBe(standIn);
  });

  test("a view in the old format (one note and the id it follows) is still read", () => {
    const old = note();
    expect(applyCompactionView(history(), { hiddenIds: ["h1", "a1"], note: old, noteAfterId: "s1" })).toEqual([history()[0], old, history()[3]]);
    // No anchor: right after the leading system messages.
    expect(ids(applyCompactionView(history(), { hiddenIds: ["h1"], note: old }))).toEqual(["s1", "note", "a1", "task"]);
    expect(ids(applyCompactionView(history(), { hiddenIds: ["h1"], note: null }))).toEqual(["s1", "a1", "task"]);
  });
});

describe("viewOfShown: what counts as the same message", () => {
  test("a copy read back with content blocks is the same message; changed blocks make a stand-in", () => {
    const blocks = (text: string) => [{ type: "text" as const, text }, { type: "text" as const, text: "second" }];
    const messages = [new HumanMessage({ id: "task", content: "task" }), new AIMessage({ id: "b1", content: blocks("first") })];
    const readBack = new AIMessage({ id: "b1", content: blocks("first") });
    expect(readBack.content).not.toBe(messages[1]!.content);
    expect(viewOfShown(messages, [messages[0]!, readBack]).rewritten).toEqual([]);
    const changed = new AIMessage({ id: "b1", content: blocks("other") });
    expect(viewOfShown(messages, [messages[0]!, changed]).rewritten).toEqual([changed]);
  });

  test("compaction metadata is compared by value: equal is the same message, different is a stand-in", () => {
    const marked = (strategy: string) =>
      new AIMessage({ id: "a1", content: "old answer", response_metadata: { compaction: { strategy, original_tokens: 9 } } });
    const messages = [new HumanMessage({ id: "task", content: "task" }), marked("tool_result_pruning")];
    expect(viewOfShown(messages, [messages[0]!, marked("tool_result_pruning")]).rewritten).toEqual([]);
    const other = marked("tool_result_offloading");
    expect(viewOfShown(messages, [messages[0]!, other]).rewritten).toEqual([other]);
  });
});
