/**
 * The small parts every compactor and integration shares (survivors of the mutation run over `compactor.ts`, `stage-report.ts`,
 * `abort.ts` and the hook's `resolveCompactor`): what counts as a compactor,
 * what an integration's `compactor` option becomes, the report of a stage,
 * and the per-call options.
 */
import { BaseMessage } from "@langchain/core/messages";
import { CompactionPipeline, isCompactor, SlidingWindowCompactor } from "../../src";
import type { Compactor } from "../../src";
import { TokenCountCache } from "../../src";
import { assertCompactOptions, throwIfAborted } from "../../src/compactors/abort";
import { countOne } from "../../src/compactors/count-one";
import { resolveTokenCounter } from "../../src/counting/message-counts";
import { resolveCompactor } from "../../src/compactors/resolve-compactor";
import { stageReport, unchangedReport } from "../../src/compactors/stage-report";
import { answer, human, system } from "../support/stages";

const own: Compactor = {
  compact: async () => null,
  compactWithReport: async () => unchangedReport("own", [], 0),
};

describe("isCompactor", () => {
  test("an object with both methods is one, whatever its class; anything short of that is not", () => {
    expect(isCompactor(own)).toBe(true);
    expect(isCompactor(new SlidingWindowCompactor())).toBe(true);
    expect(isCompactor(Object.assign(Object.create(null), own))).toBe(true);
    for (const value of [
      null,
      undefined,
      "compactor",
      { compact: own.compact },
      { compactWithReport: own.compactWithReport },
      { compact: own.compact, compactWithReport: "yes" },
      { compact: 1, compactWithReport: own.compactWithReport },
      // A function carrying the methods is not an options-free compactor object either.
      Object.assign(() => null, own),
    ]) {
      expect(isCompactor(value)).toBe(false);
    }
  });
});

describe("resolveCompactor (the integrations' `compactor` option)", () => {
  test("nothing means a fresh sliding window; a compactor is taken as it is; an array is a pipeline of it", () => {
    expect(resolveCompactor(undefined)).toBeInstanceOf(SlidingWindowCompactor);
    expect(resolveCompactor(undefined)).not.toBe(resolveCompactor(undefined));
    expect(resolveCompactor(own)).toBe(own);
    const window = new SlidingWindowCompactor();
    const pipeline = resolveCompactor([own, window]);
    expect(pipeline).toBeInstanceOf(CompactionPipeline);
    expect((pipeline as CompactionPipeline).stages).toEqual([own, window]);
  });

  test("a bad value or array entry is a TypeError naming the option, the position and the value", () => {
    expect(() => resolveCompactor(null)).toThrow(
      new TypeError("`compactor` must be a compactor (an object with compact and compactWithReport) or an array of them, got null"),
    );
    expect(() => resolveCompactor("window", "strategy")).toThrow(/^`strategy` must be a compactor/);
    expect(() => resolveCompactor([own, 7], "stages")).toThrow(
      new TypeError("`stages[1]` must be a compactor (an object with compact and compactWithReport), got 7"),
    );
    expect(() => resolveCompactor([{ compact: own.compact }])).toThrow(/^`compactor\[0\]` must be/);
  });
});

describe("stageReport", () => {
  const input: BaseMessage[] = [system(), human(), answer(), answer(20, "B")];

  test("it counts what was kept, writes no note, trims no steps, and lists itself as the one stage", () => {
    const output = [input[0]!, input[1]!, input[3]!];
    const report = stageReport({
      strategy: "mine", input, messages: output, removed: [input[2]!], rewritten: [], added: [], tokensBefore: 50, tokensAfter: 40,
    });
    expect(report).toEqual({
      strategy: "mine", messages: output, removed: [input[2]], rewritten: [], added: [], standsFor: [], tokensBefore: 50, tokensAfter: 40,
      keptCount: 3, note: null, stepsTrimmed: false,
      stages: [{ strategy: "mine", messages: output, removed: [input[2]], rewritten: [], added: [], standsFor: [], tokensBefore: 50, tokensAfter: 40 }],
    });
    // The stage entry is its own object: a caller that edits the report's top level does not edit its stage.
    report.tokensAfter = 0;
    expect(report.stages[0]!.tokensAfter).toBe(40);
  });

  test("the unchanged report: no messages, nothing done, every message kept, the same count before and after", () => {
    expect(unchangedReport("mine", input, 33)).toEqual({
      strategy: "mine", messages: null, removed: [], rewritten: [], added: [], standsFor: [], tokensBefore: 33, tokensAfter: 33,
      keptCount: 4, note: null, stepsTrimmed: false,
      stages: [{ strategy: "mine", messages: null, removed: [], rewritten: [], added: [], standsFor: [], tokensBefore: 33, tokensAfter: 33 }],
    });
  });
});

describe("the per-call options", () => {
  test("undefined, {} and { signal } are accepted; anything else is a TypeError naming it", () => {
    const signal = new AbortController().signal;
    for (const ok of [undefined, {}, { signal: undefined }, { signal }]) expect(() => assertCompactOptions(ok)).not.toThrow();
    expect(() => assertCompactOptions(null)).toThrow(new TypeError("compaction options must be an object, got null"));
    expect(() => assertCompactOptions([])).toThrow(TypeError);
    expect(() => assertCompactOptions(5)).toThrow(TypeError);
    expect(() => assertCompactOptions({ signal: null })).toThrow(new TypeError("`signal` must be an AbortSignal, got null"));
    expect(() => assertCompactOptions({ signal: "stop" })).toThrow(TypeError);
    expect(() => assertCompactOptions({ signal: { aborted: "no", addEventListener() {} } })).toThrow(TypeError);
    expect(() => assertCompactOptions({ signal: { aborted: false } })).toThrow(TypeError);
    expect(() => assertCompactOptions({ signal: Object.assign(() => undefined, { aborted: false, addEventListener() {} }) })).toThrow(TypeError);
    // Anything shaped like a signal (another realm's, a polyfill's) is accepted.
    expect(() => assertCompactOptions({ signal: { aborted: false, addEventListener() {} } })).not.toThrow();
  });

  test("throwIfAborted throws the signal's own reason, and nothing for a live or missing signal", () => {
    const reason = { why: "user" };
    const controller = new AbortController();
    expect(() => throwIfAborted(undefined)).not.toThrow();
    expect(() => throwIfAborted(controller.signal)).not.toThrow();
    controller.abort(reason);
    let thrown: unknown;
    try {
      throwIfAborted(controller.signal);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(reason);
  });
});

describe("countOne (one replacement counted through the cache)", () => {
  const message = answer(12);

  test("a synchronous counter gives a number at once, remembered in the cache", () => {
    let calls = 0;
    const counter = resolveTokenCounter((list: BaseMessage[]) => {
      calls += 1;
      return list.length * 5;
    });
    const cache = new TokenCountCache();
    expect(countOne(message, counter, cache)).toBe(5);
    expect(countOne(message, counter, cache)).toBe(5);
    expect(calls).toBe(1);
    expect(countOne(message, counter, null)).toBe(5);
    expect(calls).toBe(2);
  });

  test("an asynchronous counter gives a promise of the count", async () => {
    const counter = resolveTokenCounter(async (list: BaseMessage[]) => list.length * 7);
    const counted = countOne(message, counter, null);
    expect(counted).toBeInstanceOf(Promise);
    await expect(counted).resolves.toBe(7);
  });

  test("a counter's own error comes through as it is (typed), not as a request for an asynchronous pass", async () => {
    const counter = resolveTokenCounter(() => {
      throw new RangeError("counter broke");
    });
    const attempt = () => {
      const value = countOne(message, counter, null);
      if (value instanceof Promise) value.catch(() => undefined); // a wrongly deferred error must fail below, not crash jest
      return value;
    };
    expect(attempt).toThrow(/counter broke/);
    const rejecting = resolveTokenCounter(async () => {
      throw new RangeError("async counter broke");
    });
    await expect(countOne(message, rejecting, null)).rejects.toThrow(/async counter broke/);
  });
});
