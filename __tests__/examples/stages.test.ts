import { ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { OffloadedResultMetadata } from "../../src";
import { compactionMetadataOf, DEFAULT_OFFLOAD_NAMESPACE, isCompactionMessage, OFFLOAD_READER_TOOL_NAME } from "../../src";
import { main } from "../../examples/pipeline";
import { CONTEXT_WINDOW, INCIDENTS, incidentReport, main as offload } from "../../examples/offload";
import { main as summarization, TARGET } from "../../examples/summarization";
import { assertConvertsEverywhere } from "../support/providers";
import { importExamplesOffline } from "../support/run-example";

importExamplesOffline();

describe("examples/pipeline.ts", () => {
  it("prunes old tool output first, and drops turns only for the tighter target", async () => {
    const { history, gentle, tight } = await main();
    expect(gentle.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning"]);
    expect(gentle.removed).toEqual([]);
    expect(gentle.rewritten.length).toBeGreaterThan(0);
    expect(gentle.tokensAfter).toBeLessThanOrEqual(2_000);
    expect(gentle.messages!.length).toBe(history.length);
    expect(tight.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning", "sliding_window"]);
    expect(tight.removed.length).toBeGreaterThan(0);
    expect(tight.note).not.toBeNull();
    // The current task and its newest result are untouched.
    expect(tight.messages!.slice(-3)).toEqual(history.slice(-3));
    expect(tight.messages!.filter(isCompactionMessage).length).toBeGreaterThan(0);
  });
});

describe("examples/summarization.ts", () => {
  const references = (messages: readonly BaseMessage[]) => new Set(messages.flatMap((m) => m.text.match(/BK-\d+/g) ?? []));

  it("replaces the oldest turns by the model's summary, in their place, and keeps every booking reference in context", async () => {
    const { history, first, grown, second, summaryRequests } = await summarization();
    expect(first.stages.map((s) => s.strategy)).toEqual(["summarization"]);
    expect(first.added).toHaveLength(1);
    const summary = first.added[0]!;
    expect(summary.type).toBe("human");
    expect(isCompactionMessage(summary)).toBe(true);
    expect(compactionMetadataOf(summary)).toMatchObject({ strategy: "summarization", summarized_messages: first.removed.length, source: "historical_turns" });
    expect(summary.text).toMatch(/^<conversation_summary>[\s\S]*<\/conversation_summary>$/);
    // Instructions first, the summary where the removed turns stood, then the kept turns and the question, untouched.
    expect(first.messages![0]).toBe(history[0]);
    expect(first.messages![1]).toBe(summary);
    expect(first.messages!.slice(2)).toEqual(history.slice(1 + first.removed.length));
    expect(first.removed).toEqual(history.slice(1, 1 + first.removed.length));
    expect(first.tokensAfter).toBeLessThanOrEqual(TARGET);
    // The model was shown exactly the removed turns, not the current question.
    const asked = summaryRequests[0]!.map((m) => m.text).join("\n");
    for (const removed of first.removed) expect(asked).toContain(removed.text.slice(0, 60));
    expect(asked).not.toContain(history.at(-1)!.text);
    // Nothing left without a summary: every reference of the chat is still in the compacted context.
    expect(references(first.messages!)).toEqual(references(history));

    // The second compaction summarizes the next turns beside the first summary, which stays as it was.
    expect(summaryRequests).toHaveLength(2);
    expect(second.messages).toContain(summary);
    expect(second.added).toHaveLength(1);
    expect(second.messages!.indexOf(second.added[0]!)).toBe(second.messages!.indexOf(summary) + 1);
    expect(second.tokensAfter).toBeLessThanOrEqual(TARGET);
    expect(references(second.messages!)).toEqual(references(grown));
    expect(references(grown).size).toBe(24);
  });

  it("when the summary model fails, nothing is removed for it and the sliding window stands in", async () => {
    const { history, fallback } = await summarization();
    expect(fallback.stages.map((s) => [s.strategy, s.messages === null])).toEqual([
      ["summarization", true],
      ["sliding_window", false],
    ]);
    expect(fallback.note).not.toBeNull();
    expect(fallback.added).toEqual([fallback.note]);
    expect(fallback.messages!.some((m) => /summary service is down/.test(m.text))).toBe(false);
    expect(fallback.messages!.at(-1)).toBe(history.at(-1));
    expect(fallback.tokensAfter).toBeLessThanOrEqual(TARGET);
  });
});

describe("examples/offload.ts", () => {
  it("moves old reports to the store and the agent reads one back for a detail only the original holds", async () => {
    const { model, store, history, readBack, answer } = await offload();
    // The state (view mode) keeps every report whole.
    const reports = history.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.name === "fetch_incident");
    expect(reports.map((m) => m.text)).toEqual(Array.from({ length: INCIDENTS }, (_, id) => incidentReport(id)));
    // Every request is one a provider accepts, inside the window.
    for (const call of model.calls) {
      expect(() => assertConvertsEverywhere(call.messages)).not.toThrow();
      expect(model.requestTokens(call)!).toBeLessThan(CONTEXT_WINDOW);
    }
    // Before reading back, the model saw incident 0 only as a reference: no error code, a key into the store.
    const readCall = model.calls.findIndex((call) => call.messages.some((m) => m.type === "tool" && (m as ToolMessage).name === OFFLOAD_READER_TOOL_NAME));
    expect(readCall).toBeGreaterThan(0);
    const before = model.calls[readCall - 1]!.messages;
    const reference = before.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === reports[0]!.tool_call_id)!;
    expect(compactionMetadataOf(reference)).toMatchObject({ strategy: "tool_result_offloading" });
    expect(reference.text).not.toContain("E4000");
    expect(before.some((m) => m.text.includes("E4000"))).toBe(false);
    const key = (compactionMetadataOf(reference) as OffloadedResultMetadata).key;
    expect((await store.get([...DEFAULT_OFFLOAD_NAMESPACE], key))?.value.content).toBe(incidentReport(0));
    // The reader handed back the original text, and the answer comes from it.
    expect(readBack!.text).toContain(incidentReport(0).slice(0, 600));
    expect(answer).toBe("Incident 0 failed with error code E4000.");
  });
});
