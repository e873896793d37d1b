/**
 * Summaries that fail well and scale: transient errors retried with a growing pause within the signal, a circuit
 * breaker that stops calling a failing model and lets the next stage work, failures reported on the stage, and
 * stretches longer than `maxSummaryInputTokens` summarized in rolling chunks that never drop an early message.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { CompactionPipeline, SlidingWindowCompactor, SummarizationCompactor, SummarizationError, isSummaryMessage } from "../../src";
import { isTransientError } from "../../src/compactors/transient-errors";
import { lengthCounter } from "../support/stages";
import { ScriptedSummaryModel } from "../support/summary-model";

/** A chat of `turns` turns of ~200 tokens each (one token per character), then the task. */
function chat(turns: number, fact = (turn: number) => `FACT-${turn}`): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("S".repeat(10))];
  for (let turn = 0; turn < turns; turn += 1) messages.push(new HumanMessage(`${fact(turn)} ${"q".repeat(90)}`), new AIMessage("a".repeat(100)));
  messages.push(new HumanMessage("task"));
  return messages;
}

const rateLimited = () => Object.assign(new Error("429 Rate limit reached"), { status: 429 });
const badRequest = () => Object.assign(new Error("400 invalid request"), { status: 400 });

describe("which errors are transient", () => {
  test("rate limits, timeouts, server errors, dropped connections, core's mark; not refusals, aborts or marked-not-retryable", () => {
    for (const error of [rateLimited(), Object.assign(new Error("x"), { status: 503 }), Object.assign(new Error("x"), { status: 529 }), Object.assign(new Error("x"), { code: "ECONNRESET" }), Object.assign(new Error("x"), { name: "APIConnectionTimeoutError" }), Object.assign(new Error("x"), { $metadata: { httpStatusCode: 500 } })]) {
      expect(isTransientError(error)).toBe(true);
    }
    const marked = Object.defineProperty(new Error("x"), Symbol.for("langchain.errors.retryable"), { value: false });
    const wrapped = new Error("wrapper", { cause: rateLimited() });
    expect(isTransientError(wrapped)).toBe(true);
    for (const error of [badRequest(), marked, Object.assign(new Error("x"), { name: "AbortError" }), new SummarizationError("no text", "empty"), null, "429"]) {
      expect(isTransientError(error)).toBe(false);
    }
  });
});

describe("retries", () => {
  afterEach(() => jest.useRealTimers());

  test("a transient error is retried after 1 s, then 2 s, and the summary is used", async () => {
    jest.useFakeTimers();
    const model = new ScriptedSummaryModel((call) => (call < 2 ? rateLimited() : "the summary"));
    const pending = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 20, circuitBreaker: null }).compactWithReport(chat(6), 500, lengthCounter);
    await jest.advanceTimersByTimeAsync(999);
    expect(model.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(300); // the first pause is 1 s plus up to a quarter
    expect(model.calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(2_600);
    const report = await pending;
    expect(model.calls).toHaveLength(3);
    expect(report.messages!.some((message) => isSummaryMessage(message))).toBe(true);
    expect(report.stages[0]!.failures).toBeUndefined();
  });

  test("an error that is not transient, or the last retry's, ends the summary as a failure in the report", async () => {
    const refusing = new ScriptedSummaryModel(() => badRequest());
    const report = await new SummarizationCompactor({ model: refusing, cache: null, maxSummaryTokens: 20, circuitBreaker: null }).compactWithReport(chat(6), 500, lengthCounter);
    expect(refusing.calls).toHaveLength(1);
    expect(report.messages).toBeNull();
    expect(report.stages[0]!.failures).toEqual([{ strategy: "summarization", reason: "model_error", error: expect.objectContaining({ status: 400 }) }]);

    const none = new ScriptedSummaryModel(() => rateLimited());
    await new SummarizationCompactor({ model: none, cache: null, maxSummaryTokens: 20, retries: 0, circuitBreaker: null }).compactWithReport(chat(6), 500, lengthCounter);
    expect(none.calls).toHaveLength(1);
  });

  test("an abort during the pause rejects with the signal's reason at once", async () => {
    const model = new ScriptedSummaryModel(() => rateLimited());
    const controller = new AbortController();
    const pending = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 20, retries: 5 }).compactWithReport(chat(6), 500, lengthCounter, { signal: controller.signal });
    // "At once" without a clock: timers fire in the order of their deadlines, however loaded the machine, so a
    // rejection that waited for the pause (at least 750 ms) would come after this sentinel (100 ms after the abort).
    let sentinelFired = false;
    setTimeout(() => {
      controller.abort(new Error("stop now"));
      setTimeout(() => (sentinelFired = true), 100);
    }, 50);
    await expect(pending).rejects.toThrow("stop now");
    expect(sentinelFired).toBe(false);
    expect(model.calls).toHaveLength(1);
  });
});

describe("the circuit breaker", () => {
  test("after `failures` failed summaries in a row the model is not called; the next stage does the work; after the cool-down one call goes through", async () => {
    let healthy = false;
    const model = new ScriptedSummaryModel(() => (healthy ? "recovered summary" : badRequest()));
    const summarization = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 20, circuitBreaker: { failures: 2, coolDownMs: 200 } });
    const pipeline = new CompactionPipeline([summarization, new SlidingWindowCompactor({ cache: null })], { cache: null });
    for (let run = 0; run < 2; run += 1) await pipeline.compactWithReport(chat(6), 500, lengthCounter);
    expect(model.calls).toHaveLength(2);

    const skipped = await pipeline.compactWithReport(chat(6), 500, lengthCounter);
    expect(model.calls).toHaveLength(2); // open: not called
    expect(skipped.stages[0]!.failures![0]!.reason).toBe("circuit_open");
    expect(skipped.stages[1]!.strategy).toBe("sliding_window");
    expect(skipped.messages).not.toBeNull(); // the window did the work

    await new Promise((resolve) => setTimeout(resolve, 250));
    healthy = true;
    const recovered = await pipeline.compactWithReport(chat(6), 500, lengthCounter);
    expect(model.calls).toHaveLength(3);
    expect(recovered.messages!.some((message) => isSummaryMessage(message))).toBe(true);
    // Closed again: a later failure starts counting from zero.
    healthy = false;
    await pipeline.compactWithReport(chat(6), 500, lengthCounter);
    expect(model.calls).toHaveLength(4);
  });

  test("with raiseOnFailure an open breaker rejects with a SummarizationError, reason circuit_open", async () => {
    const model = new ScriptedSummaryModel(() => badRequest());
    const stage = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 20, raiseOnFailure: true, circuitBreaker: { failures: 1, coolDownMs: 60_000 } });
    await expect(stage.compact(chat(6), 500, lengthCounter)).rejects.toMatchObject({ status: 400 });
    await expect(stage.compact(chat(6), 500, lengthCounter)).rejects.toMatchObject({ name: "SummarizationError", reason: "circuit_open" });
  });

  test("options are checked", () => {
    const model = new ScriptedSummaryModel(() => "x");
    expect(() => new SummarizationCompactor({ model, retries: -1 })).toThrow(/`retries` must be a whole number/);
    expect(() => new SummarizationCompactor({ model, circuitBreaker: { failures: 0, coolDownMs: 10 } })).toThrow(/`circuitBreaker.failures`/);
    expect(() => new SummarizationCompactor({ model, circuitBreaker: "off" as never })).toThrow(/`circuitBreaker` must be \{ failures, coolDownMs \} or null/);
    expect(() => new SummarizationCompactor({ model, maxSummaryTokens: 100, maxSummaryInputTokens: 150 })).toThrow(/must be at least twice `maxSummaryTokens`/);
  });
});

describe("maxSummaryInputTokens: rolling chunks", () => {
  /** A summarizer that keeps every FACT id it is shown, the summary so far included, as a real one keeps identifiers. */
  const keepsFacts = () => new ScriptedSummaryModel((_call, messages) => [...new Set(String(messages.at(-1)!.content).match(/FACT-\d+/g) ?? [])].join(" ") || "nothing");

  test("a long stretch goes in several calls, each within the limit, and the summary holds the first message's facts", async () => {
    const model = keepsFacts();
    const stage = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 200, maxSummaryInputTokens: 3_000, circuitBreaker: null });
    const input = chat(40);
    const report = await stage.compactWithReport(input, 1_000, lengthCounter);
    expect(model.calls.length).toBeGreaterThan(2);
    for (const call of model.calls) expect(lengthCounter(call.messages)).toBeLessThanOrEqual(3_000);
    const summary = report.messages!.find((message) => isSummaryMessage(message))!;
    const summarized = report.standsFor![0]!.originals.filter((message) => message.type === "human").length;
    for (let turn = 0; turn < summarized; turn += 1) expect(String(summary.content)).toContain(`FACT-${turn} `.trim());
    // Each later call is shown the summary so far.
    for (const call of model.calls.slice(1)) expect(String(call.messages.at(-1)!.content)).toMatch(/^<conversation_summary>/);
  });

  test("a message longer than a whole call is cut into pieces, none over the limit, none lost", async () => {
    const model = keepsFacts();
    const huge = new HumanMessage(Array.from({ length: 60 }, (_, i) => `FACT-${i} ${"z".repeat(90)}`).join("\n"));
    const input = [new SystemMessage("S"), huge, new AIMessage("ok"), new HumanMessage("task")];
    const stage = new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 300, maxSummaryInputTokens: 3_000, circuitBreaker: null });
    const report = await stage.compactWithReport(input, 400, lengthCounter);
    expect(model.calls.length).toBeGreaterThan(3); // about 6,000 tokens in calls of at most 3,000 with a 1,900-token instruction
    for (const call of model.calls) expect(lengthCounter(call.messages)).toBeLessThanOrEqual(3_000);
    const summary = String(report.messages!.find((message) => isSummaryMessage(message))!.content);
    for (let i = 0; i < 60; i += 1) expect(summary).toContain(`FACT-${i}`);
  });

  test("without the limit a stretch is one call", async () => {
    const model = keepsFacts();
    await new SummarizationCompactor({ model, cache: null, maxSummaryTokens: 200, circuitBreaker: null }).compact(chat(40), 1_000, lengthCounter);
    expect(model.calls).toHaveLength(1);
  });
});
