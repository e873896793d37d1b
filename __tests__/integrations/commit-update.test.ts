/**
 * commitUpdate under LangGraph's real messages reducer: whatever a compactor
 * did (rewrite in place, add where it removed, remove), the update turns the
 * state into exactly the compacted list, touching only ids read from the
 * state and never all of them.
 */
import { AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { messagesStateReducer, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { approximateTokenCounter, isOmissionNote, SlidingWindowCompactor } from "../../src";
import type { CompactionReport, Compactor } from "../../src";
import { CompactionPipeline } from "../../src/compactors/pipeline";
import { commitUpdate } from "../../src/integrations/commit-update";
import { isTestSummary, ShrinkToolResults, SHRUNK, SummarizeOldTurns } from "../support/test-compactors";

function history(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage({ id: "sys", content: "Instructions." })];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `question ${turn} ${"words ".repeat(20)}` }));
    messages.push(new AIMessage({ id: `c${turn}`, content: "", tool_calls: [{ id: `t${turn}`, name: "lookup", args: { turn } }] }));
    messages.push(new ToolMessage({ id: `r${turn}`, tool_call_id: `t${turn}`, name: "lookup", content: `result ${"data ".repeat(60)}` }));
    messages.push(new AIMessage({ id: `a${turn}`, content: `answer ${turn}` }));
  }
  messages.push(new HumanMessage({ id: "task", content: "And now?" }));
  return messages;
}

const ids = (messages: readonly BaseMessage[]) => messages.map((message) => message.id);
const shape = (messages: readonly BaseMessage[]) => messages.map((message) => `${message.type}:${message.text}`);

/** Applies the update with the real reducer and checks the rules of commit mode. */
function commitAndCheck(input: BaseMessage[], report: CompactionReport): BaseMessage[] {
  const update = commitUpdate(input, report);
  const stateIds = new Set(ids(input));
  for (const message of update) {
    // Only ids read from the state, never all of them.
    expect(message.id).not.toBe(REMOVE_ALL_MESSAGES);
    expect(stateIds.has(message.id)).toBe(true);
  }
  const result = messagesStateReducer(input, update);
  // Exactly the compacted list: same kinds, same texts, same order.
  expect(shape(result)).toEqual(shape(report.messages!));
  // Kept messages are not re-sent: the state keeps the very objects.
  for (const message of report.messages!) if (input.includes(message)) expect(result).toContain(message);
  expect(update.some((message) => input.includes(message))).toBe(false);
  // Rewritten messages keep their id and their place.
  for (const { original, replacement } of report.rewritten) {
    const at = result.findIndex((message) => message.id === original.id);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(result[at]!.text).toBe(replacement.text);
  }
  expect(new Set(ids(result)).size).toBe(result.length);
  return result;
}

const target = (messages: BaseMessage[], share: number) => Math.floor(approximateTokenCounter(messages) * share);

describe("commitUpdate for every kind of change", () => {
  const cases: [string, () => Compactor, number][] = [
    ["a sliding window (removes, adds one note)", () => new SlidingWindowCompactor(), 0.3],
    ["a rewriting compactor (rewrites only)", () => new ShrinkToolResults(), 0.6],
    ["a summarizing compactor (removes, adds a summary where they stood)", () => new SummarizeOldTurns(2), 0.6],
    ["a pipeline of all three", () => new CompactionPipeline([new ShrinkToolResults(), new SummarizeOldTurns(3), new SlidingWindowCompactor()]), 0.15],
  ];

  it.each(cases)("%s: the reducer turns the state into the compacted list", async (_label, make, share) => {
    const input = history(8);
    const report = await make().compactWithReport(input, target(input, share));
    expect(report.messages).not.toBeNull();
    const result = commitAndCheck(input, report);
    expect(result.length).toBeLessThanOrEqual(input.length);
  });

  it("a rewrite is sent as the stand-in under the original's id, nothing else is sent", async () => {
    const input = history(6);
    const report = await new ShrinkToolResults().compactWithReport(input, target(input, 0.7));
    expect(report.rewritten.length).toBeGreaterThan(0);
    const update = commitUpdate(input, report);
    expect(update).toEqual(report.rewritten.map(({ replacement }) => replacement));
    expect(update.every((message) => message.text === SHRUNK)).toBe(true);
  });

  it("an added summary takes over the id of a removed message in its own slot, the others are removed", async () => {
    const input = history(6);
    const report = await new SummarizeOldTurns(2).compactWithReport(input, target(input, 0.8));
    const update = commitUpdate(input, report);
    const placed = update.filter((message) => !RemoveMessage.isInstance(message));
    expect(placed).toHaveLength(1);
    expect(isTestSummary(placed[0]!)).toBe(true);
    // The first removed message hosts it: the summary stands where the removed turns began.
    expect(placed[0]!.id).toBe(report.removed[0]!.id);
    const removals = update.filter((message) => RemoveMessage.isInstance(message)).map((message) => message.id);
    expect(removals).toEqual(ids(report.removed.slice(1)));
    const result = commitAndCheck(input, report);
    expect(result[1]!.id).toBe("h0");
    expect(isTestSummary(result[1]!)).toBe(true);
  });

  it("two added messages in one slot take the removed messages there in order", () => {
    const input = history(3);
    const first = new HumanMessage({ content: "summary A", response_metadata: { compaction: { strategy: "summarization" } } });
    const second = new HumanMessage({ content: "summary B", response_metadata: { compaction: { strategy: "summarization" } } });
    const kept = input.slice(9);
    const messages = [input[0]!, first, second, ...kept];
    const report = fakeReport(input, messages, [first, second]);
    const update = commitUpdate(input, report);
    const placed = update.filter((message) => !RemoveMessage.isInstance(message));
    expect(placed.map((message) => [message.text, message.id])).toEqual([
      ["summary A", "h0"],
      ["summary B", "c0"],
    ]);
    commitAndCheck(input, report);
  });

  it("a note with no removed message in its slot is left out; any other addition there means nothing is written", () => {
    const input = history(2);
    const note = new HumanMessage({ content: "note", response_metadata: { compaction: { strategy: "sliding_window", removed_messages: 4, kept_messages: 4 } } });
    expect(isOmissionNote(note)).toBe(true);
    // The note stands between two kept neighbours (sys and h0): no removed message stood there.
    const withNote = [input[0]!, note, ...input.slice(1, 5), ...input.slice(9)];
    const update = commitUpdate(input, fakeReport(input, withNote, [note]));
    expect(update.map((message) => message.id)).toEqual(ids(input.slice(5, 9)));
    expect(update.every((message) => RemoveMessage.isInstance(message))).toBe(true);

    const summary = new HumanMessage({ content: "summary", response_metadata: { compaction: { strategy: "summarization" } } });
    const withSummary = [input[0]!, summary, ...input.slice(1, 5), ...input.slice(9)];
    expect(commitUpdate(input, fakeReport(input, withSummary, [summary]))).toEqual([]);
  });

  it("a result that moves the state's messages is a TypeError, not a wrong state", () => {
    const input = history(2);
    const swapped = [input[0]!, input[2]!, input[1]!, ...input.slice(3)];
    expect(() => commitUpdate(input, fakeReport(input, swapped, []))).toThrow(/cannot write a result that moves the state's messages/);
  });

  it("nothing to write when the report changed nothing", async () => {
    const input = history(2);
    const report = await new SlidingWindowCompactor().compactWithReport(input, 1_000_000);
    expect(commitUpdate(input, report)).toEqual([]);
  });
});

/** A report for a hand-made result: what is not in it was removed. */
function fakeReport(input: BaseMessage[], messages: BaseMessage[], added: BaseMessage[]): CompactionReport {
  const removed = input.filter((message) => !messages.includes(message));
  return {
    strategy: "test",
    messages,
    removed,
    rewritten: [],
    added,
    tokensBefore: Number.NaN,
    tokensAfter: Number.NaN,
    keptCount: input.length - removed.length,
    note: null,
    stepsTrimmed: false,
    stages: [],
  };
}
