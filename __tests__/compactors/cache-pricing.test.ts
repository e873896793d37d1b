/**
 * The cache-aware minimum gain, checked against the rule written out as a
 * bill: the same calls priced without compacting (every call reads the
 * cached context) and with it (the first call reads the unchanged prefix and
 * writes the rest, the others read what is left). The helper's answer is the
 * smallest whole gain for which compacting costs no more; one token less
 * costs more. Then the hook is shown to take the value as its `minGainTokens`.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { CompactionHook, cacheAwareMinGain } from "../../src";
import type { CacheAwareMinGainOptions } from "../../src";
import { lengthCounter, x } from "../support/stages";

/** The input bill of `calls` calls, in uncached-token units, as the rule states it. */
function bill(options: Required<CacheAwareMinGainOptions>, gain: number | null): number {
  const { contextTokens: T, cacheWriteMultiplier: w, cacheReadMultiplier: r, expectedCallsBeforeNextCompaction: N, unchangedPrefixTokens: S } = options;
  if (gain === null) return N * T * r; // not compacting: every call reads the whole cached context
  const firstCall = S * r + (T - gain - S) * w;
  return firstCall + (N - 1) * (T - gain) * r;
}
const worthIt = (options: Required<CacheAwareMinGainOptions>, gain: number) => bill(options, gain) <= bill(options, null) * (1 + 1e-12);

const PRICES = [
  { name: "Anthropic", cacheWriteMultiplier: 1.25, cacheReadMultiplier: 0.1 },
  { name: "OpenAI, current models", cacheWriteMultiplier: 1, cacheReadMultiplier: 0.1 },
  { name: "OpenAI, older models", cacheWriteMultiplier: 1, cacheReadMultiplier: 0.5 },
];

describe("cacheAwareMinGain", () => {
  const cases = PRICES.flatMap((price) =>
    [1, 2, 5, 12.5, 40].flatMap((calls) =>
      [
        [140_000, 0],
        [140_000, 6_000],
        [8_000, 7_999],
        [1_000, 0],
      ].map(([contextTokens, unchangedPrefixTokens]) => ({
        ...price,
        contextTokens: contextTokens!,
        unchangedPrefixTokens: unchangedPrefixTokens!,
        expectedCallsBeforeNextCompaction: calls,
      })),
    ),
  );

  test.each(cases)("$name, $expectedCallsBeforeNextCompaction calls, context $contextTokens, unchanged $unchangedPrefixTokens: the smallest gain that pays", (c) => {
    const { name: _name, ...options } = c;
    const minGain = cacheAwareMinGain(options);
    expect(Number.isInteger(minGain)).toBe(true);
    expect(worthIt(options, minGain)).toBe(true);
    if (minGain > 0) expect(worthIt(options, minGain - 1)).toBe(false);
  });

  test("more calls before the next compaction, a longer unchanged prefix, or a cheaper write each lower the bar", () => {
    const base = { contextTokens: 100_000, cacheWriteMultiplier: 1.25, cacheReadMultiplier: 0.1, expectedCallsBeforeNextCompaction: 10 };
    const bar = cacheAwareMinGain(base);
    expect(cacheAwareMinGain({ ...base, expectedCallsBeforeNextCompaction: 30 })).toBeLessThan(bar);
    expect(cacheAwareMinGain({ ...base, unchangedPrefixTokens: 20_000 })).toBeLessThan(bar);
    expect(cacheAwareMinGain({ ...base, cacheWriteMultiplier: 1 })).toBeLessThan(bar);
  });

  test("without a read discount there is nothing to lose: every compaction pays", () => {
    expect(cacheAwareMinGain({ contextTokens: 50_000, cacheWriteMultiplier: 1, cacheReadMultiplier: 1, expectedCallsBeforeNextCompaction: 3 })).toBe(0);
    expect(cacheAwareMinGain({ contextTokens: 50_000, cacheWriteMultiplier: 0, cacheReadMultiplier: 0, expectedCallsBeforeNextCompaction: 3 })).toBe(0);
  });

  test("bad options are a typed error naming the value", () => {
    const good = { contextTokens: 1_000, cacheWriteMultiplier: 1.25, cacheReadMultiplier: 0.1, expectedCallsBeforeNextCompaction: 5 };
    expect(() => cacheAwareMinGain(null as never)).toThrow(new TypeError("cacheAwareMinGain options must be an object, got null"));
    expect(() => cacheAwareMinGain({ ...good, contextTokens: -1 })).toThrow(/^`contextTokens` must be .* got -1$/);
    expect(() => cacheAwareMinGain({ ...good, cacheWriteMultiplier: "1.25" as never })).toThrow(TypeError);
    expect(() => cacheAwareMinGain({ ...good, cacheReadMultiplier: Number.NaN })).toThrow(/^`cacheReadMultiplier` must be .* got NaN$/);
    expect(() => cacheAwareMinGain({ ...good, expectedCallsBeforeNextCompaction: 0.5 })).toThrow(RangeError);
    expect(() => cacheAwareMinGain({ ...good, expectedCallsBeforeNextCompaction: 0.5 })).toThrow(/got 0.5$/);
    expect(() => cacheAwareMinGain({ ...good, unchangedPrefixTokens: 1_001 })).toThrow(/^`unchangedPrefixTokens` \(1001\) must be at most `contextTokens` \(1000\)$/);
  });
});

describe("the hook takes it as its minGainTokens", () => {
  const messages = [new SystemMessage(x(50)), new HumanMessage(x(150, "old")), new AIMessage(x(150)), new HumanMessage(x(400, "task"))];
  const contextWindow = 1_000;
  const pricing = { contextTokens: 700, cacheWriteMultiplier: 1.25, cacheReadMultiplier: 0.1, unchangedPrefixTokens: 50 };

  test("a compaction that frees less than the bar is declined; with more calls to pay it back, the same one is applied", async () => {
    const few = cacheAwareMinGain({ ...pricing, expectedCallsBeforeNextCompaction: 1 });
    const many = cacheAwareMinGain({ ...pricing, expectedCallsBeforeNextCompaction: 50 });
    const run = (minGainTokens: number) => new CompactionHook({ contextWindow, compactAt: 0.7, compactTo: 0.4, tokenCounter: lengthCounter, minGainTokens }).run(messages);
    const declined = (await run(few))!;
    expect(declined.declined).toMatchObject({ reason: "min_gain", minGainTokens: few });
    expect(declined.declined!.gainTokens).toBeLessThan(few);
    const applied = (await run(many))!;
    expect(applied.declined).toBeUndefined();
    expect(applied.messages).not.toBeNull();
    expect(declined.declined!.gainTokens).toBeGreaterThanOrEqual(many);
  });
});
