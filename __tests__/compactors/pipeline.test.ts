/**
 * CompactionPipeline: stages in order on the previous output,
 * stopping at the first that reaches the target, with a report relative to
 * the pipeline's input.
 */
import { BaseMessage, ToolMessage } from "@langchain/core/messages";
import {
  CompactionPipeline,
  isCompactionMessage,
  isCompactor,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { CompactionReport, Compactor } from "../../src";
import { assertProviderValid, snapshotMessages } from "../support/conversations";
import { ScriptedSummaryModel } from "../support/summary-model";
import { abortedSignal, answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

/** A compactor that records the lists it was given and delegates. */
function spy(inner: Compactor): Compactor & { seen: BaseMessage[][] } {
  const seen: BaseMessage[][] = [];
  return {
    seen,
    compact: (messages, target, counter, options) => (seen.push(messages), inner.compact(messages, target, counter, options)),
    compactWithReport: (messages, target, counter, options) => (seen.push(messages), inner.compactWithReport(messages, target, counter, options)),
  };
}

/** system 10; three history turns each with a tool exchange (human 10, call 10, result 500, answer 10); task 10; one step (10 + 10). */
function conversation(): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let t = 0; t < 3; t += 1) messages.push(human(), calling([`h${t}`]), result(`h${t}`, 500), answer());
  messages.push(human(10, "TASK"), calling(["s0"]), result("s0", 10));
  return messages;
}

const pruning = () => new ToolResultPruningCompactor({ cache: null, minKeepResults: 1 });
const window = () => new SlidingWindowCompactor({ cache: null });

describe("CompactionPipeline", () => {
  test("stops at the first stage that reaches the target", async () => {
    const messages = conversation();
    const last = spy(window());
    const pipeline = new CompactionPipeline([pruning(), last], { cache: null });
    // Pruning two of the three old results is enough for this target.
    const report = await pipeline.compactWithReport(messages, tokens(messages) - 600, lengthCounter);
    expect(last.seen).toHaveLength(0);
    expect(report.strategy).toBe("pipeline");
    expect(report.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning"]);
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[3], messages[7]]);
    expect(report.removed).toEqual([]);
    expect(await pipeline.compact(messages, tokens(messages) - 600, lengthCounter)).toEqual(report.messages);
    expect(last.seen).toHaveLength(0);
  });

  test("a later stage works on the previous stage's output", async () => {
    const messages = conversation();
    const last = spy(window());
    const report = await new CompactionPipeline([pruning(), last], { cache: null }).compactWithReport(messages, 60, lengthCounter);
    expect(last.seen).toHaveLength(1);
    expect(last.seen[0]).toBe(report.stages[0]!.messages);
    expect(last.seen[0]!.filter(isCompactionMessage)).toHaveLength(3);
    expect(report.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning", "sliding_window"]);
    assertProviderValid(report.messages!);
  });

  test("the report is relative to the input: rewritten then removed is removed; added then removed is not added", async () => {
    const messages = conversation();
    const before = snapshotMessages(messages);
    const report: CompactionReport = await new CompactionPipeline([pruning(), window()], { cache: null }).compactWithReport(messages, 60, lengthCounter);
    expect(snapshotMessages(messages)).toStrictEqual(before);
    // The sliding window removed every history turn, pruned results included: they are removed, not rewritten.
    expect(report.removed).toEqual(messages.slice(1, 13));
    expect(report.rewritten).toEqual([]);
    expect(report.added).toEqual([report.note]);
    expect(report.note).not.toBeNull();
    expect(report.keptCount).toBe(messages.length - 12);
    expect(report.messages).toEqual([messages[0], report.note, ...messages.slice(13)]);
    expect(report.tokensBefore).toBe(tokens(messages));
    expect(report.tokensAfter).toBe(tokens(report.messages!));

    // A summary added by the first stage and removed by the second is not in `added`.
    const model = new ScriptedSummaryModel(() => "S".repeat(30));
    const summarizing = new SummarizationCompactor({ model, maxSummaryTokens: 10, cache: null });
    const twoStage = await new CompactionPipeline([summarizing, window()], { cache: null }).compactWithReport(messages, 25, lengthCounter);
    const summaries = twoStage.stages[0]!.added;
    expect(summaries.length).toBeGreaterThan(0);
    expect(twoStage.messages).not.toContain(summaries[0]);
    for (const summary of summaries) expect(twoStage.added).not.toContain(summary);
    expect(twoStage.removed).toEqual(expect.arrayContaining(messages.slice(1, 13)));
  });

  test("a rewritten message that stays is reported once, against the input's original", async () => {
    const messages = conversation();
    const report = await new CompactionPipeline([pruning(), pruning()], { cache: null }).compactWithReport(messages, 0, lengthCounter);
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[3], messages[7], messages[11]]);
    for (const { replacement } of report.rewritten) expect(report.messages).toContain(replacement);
    expect(report.stages).toHaveLength(2);
    expect(report.stages[1]!.messages).toBeNull();
  });

  test("a failed summary lets the next stage act; nothing is deleted without a summary", async () => {
    const messages = conversation();
    const failing = new SummarizationCompactor({ model: new ScriptedSummaryModel(() => new Error("down")), cache: null });
    const report = await new CompactionPipeline([failing, window()], { cache: null }).compactWithReport(messages, 60, lengthCounter);
    expect(report.stages.map((s) => [s.strategy, s.messages === null])).toEqual([["summarization", true], ["sliding_window", false]]);
    expect(report.messages!.some((m) => (m.response_metadata as { compaction?: { strategy?: string } }).compaction?.strategy === "summarization")).toBe(false);
  });

  test("null when the input fits (no stage runs) or no stage changed anything", async () => {
    const messages = conversation();
    const first = spy(pruning());
    const pipeline = new CompactionPipeline([first], { cache: null });
    expect(await pipeline.compact(messages, tokens(messages), lengthCounter)).toBeNull();
    expect(first.seen).toHaveLength(0);
    const small = [system(), human(), answer()];
    const report = await pipeline.compactWithReport(small, 0, lengthCounter);
    expect(report.messages).toBeNull();
    expect(report.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning"]);
  });

  test("is a Compactor itself, and nests", async () => {
    const messages = conversation();
    const inner = new CompactionPipeline([pruning()], { cache: null });
    expect(isCompactor(inner)).toBe(true);
    const report = await new CompactionPipeline([inner, window()], { cache: null }).compactWithReport(messages, 60, lengthCounter);
    expect(report.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning", "sliding_window"]);
  });

  test("rejects with the signal's reason before any stage runs; bad stages are typed errors", async () => {
    const first = spy(pruning());
    const reason = new Error("stop");
    await expect(new CompactionPipeline([first]).compact(conversation(), 0, lengthCounter, { signal: abortedSignal(reason) })).rejects.toBe(reason);
    expect(first.seen).toHaveLength(0);
    expect(() => new CompactionPipeline([])).toThrow(RangeError);
    expect(() => new CompactionPipeline([pruning(), { compact() {} } as never])).toThrow(/stage 1/);
    expect(() => new CompactionPipeline("window" as never)).toThrow(TypeError);
  });

  test("results pruned by the pipeline keep their call (provider-valid in between and after)", async () => {
    const messages = conversation();
    const report = await new CompactionPipeline([pruning(), window()], { cache: null }).compactWithReport(messages, tokens(messages) - 600, lengthCounter);
    for (const stage of report.stages) if (stage.messages) assertProviderValid(stage.messages);
    expect((report.messages![3] as ToolMessage).tool_call_id).toBe("h0");
  });
});
