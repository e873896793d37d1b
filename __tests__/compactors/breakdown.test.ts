/**
 * The per-category breakdown of a request (`src/compactors/breakdown.ts`): each message in exactly one category,
 * worked out by hand, and the overhead beside the list.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { createOmissionNote } from "../../src/messages/omission-note";
import { breakdownOf, breakdownTotal, categoriesOf } from "../../src/compactors/breakdown";
import { SlidingWindowCompactor } from "../../src";

const call = (id: string) => new AIMessage({ content: "", tool_calls: [{ id, name: "f", args: {}, type: "tool_call" }] });
const result = (id: string) => new ToolMessage({ tool_call_id: id, content: "r" });

describe("categoriesOf", () => {
  test("instructions, history, compaction messages, tool results anywhere, and the task with its steps", () => {
    const note = createOmissionNote("[{num_removed} removed]", 4, 3);
    const messages = [
      new SystemMessage("s1"), new SystemMessage("s2"),
      note,
      new HumanMessage("old"), call("a"), result("a"), new AIMessage("old answer"),
      new HumanMessage("task"), call("b"), result("b"), new AIMessage("step"), new SystemMessage("late system"),
    ];
    expect(categoriesOf(messages)).toEqual([
      "system", "system",
      "summaries",
      "history", "history", "toolResults", "history",
      "task", "task", "toolResults", "task", "task",
    ]);
  });

  test("a summary or a note is never the task; with no user message, nothing is", async () => {
    const summaryLike = await new SlidingWindowCompactor().compact([new HumanMessage("a ".repeat(400)), new AIMessage("b ".repeat(400)), new HumanMessage("task")], 20);
    const note = summaryLike![0]!;
    expect(categoriesOf([new SystemMessage("s"), new AIMessage("x"), note])).toEqual(["system", "history", "summaries"]);
  });
});

describe("breakdownOf", () => {
  test("sums each message's count into its category, plus the overhead, and the categories add up to the whole", () => {
    const messages = [new SystemMessage("s"), new HumanMessage("old"), new HumanMessage("task"), call("c"), result("c")];
    const counts = [10, 20, 5, 7, 100];
    const breakdown = breakdownOf(messages, counts, { system: 3, tools: 40 });
    expect(breakdown).toEqual({ system: 13, tools: 40, history: 20, summaries: 0, toolResults: 100, task: 12 });
    expect(breakdownTotal(breakdown)).toBe(counts.reduce((a, b) => a + b, 0) + 43);
  });
});
