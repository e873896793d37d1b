import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { CompactionHook, isOmissionNote } from "../../src";
import { advanceCompactionView, applyCompactionView } from "../../src/integrations/view-window";

/** A long chat whose messages carry ids, as graph state does. */
function history(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage({ content: "Be brief.", id: "sys" })];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage({ content: `question ${turn} ${"x".repeat(200)}`, id: `h${turn}` }));
    messages.push(new AIMessage({ content: `answer ${turn} ${"y".repeat(200)}`, id: `a${turn}` }));
  }
  messages.push(new HumanMessage({ content: "the task", id: "task" }));
  return messages;
}

describe("the remembered cut of view mode", () => {
  const hook = new CompactionHook({ contextWindow: 1_000, compactAt: 0.7, compactTo: 0.4 });

  test("applying the view that a compaction returned reproduces exactly what the model was sent", async () => {
    const messages = history(12);
    const advance = await advanceCompactionView(hook, messages, null);
    expect(advance.report).not.toBeNull();
    const replayed = applyCompactionView(messages, advance.view);
    expect(replayed).toHaveLength(advance.messages.length);
    replayed.forEach((message, index) => expect(message).toBe(advance.messages[index]));
    expect(replayed.filter((message) => isOmissionNote(message))).toHaveLength(1);
  });

  test("below the trigger the cut stays put: same view, no report", async () => {
    const messages = history(12);
    const first = await advanceCompactionView(hook, messages, null);
    const again = await advanceCompactionView(hook, messages, first.view);
    expect(again.report).toBeNull();
    expect(again.view).toBe(first.view);
    expect(again.messages).toHaveLength(first.messages.length);
    again.messages.forEach((message, index) => expect(message).toBe(first.messages[index]));
  });

  test("ids that are no longer in the history are dropped from the cut when it moves", async () => {
    const messages = history(12);
    const stale = { hiddenIds: ["gone-1", "gone-2"], note: null, noteAfterId: null };
    const advance = await advanceCompactionView(hook, messages, stale);
    expect(advance.report).not.toBeNull();
    expect(advance.view!.hiddenIds).not.toContain("gone-1");
    expect(advance.view!.hiddenIds).not.toContain("gone-2");
    const removedIds = advance.report!.removed.map((message) => message.id);
    expect([...advance.view!.hiddenIds].sort()).toEqual([...removedIds].sort());
  });
});
