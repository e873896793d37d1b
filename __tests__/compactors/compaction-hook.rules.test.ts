/**
 * The hook's own rules, one test each (survivors and unreached
 * mutants of the mutation run over `src/compactors/compaction-hook.ts`):
 * the bounds of its options, which usage the estimate trusts, what counts
 * as overhead, the `minGainTokens` decision and its report, the fallback
 * when a compactor reports no counts, the cache it counts through, and
 * aborts. `hook.test.ts` runs the hook through agent loops; the
 * integrations' suites run `minGainTokens` end to end.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { CompactionHook, SlidingWindowCompactor, TokenCountCache } from "../../src";
import type { CompactionReport, CompactOptions, Compactor } from "../../src";
import { unchangedReport } from "../../src/compactors/stage-report";
import { answer, human, lengthCounter, system, x } from "../support/stages";

/** A system message of 10 tokens, `turns` question/answer turns of 100 + 100 tokens, then a task of 10, under lengthCounter. */
function conversation(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let i = 0; i < turns; i += 1) messages.push(human(100, `Q${i}`), answer(100, `A${i}`));
  messages.push(human(10, "TASK"));
  return messages;
}

describe("CompactionHook: option bounds", () => {
  test.each([Number.NaN, Number.POSITIVE_INFINITY, "0.5", 1.0001])("compactAt %p is a RangeError naming it", (compactAt) => {
    expect(() => new CompactionHook({ contextWindow: 100, compactAt: compactAt as number, compactTo: 0.1 })).toThrow(RangeError);
    expect(() => new CompactionHook({ contextWindow: 100, compactAt: compactAt as number, compactTo: 0.1 })).toThrow(/^`compactAt` must be a fraction/);
  });

  test("the smallest whole window and the smallest fractions are allowed; minGainTokens must be a budget", () => {
    expect(new CompactionHook({ contextWindow: 1, compactAt: 0.002, compactTo: 0.001 }).triggerTokens).toBe(0.002);
    expect(() => new CompactionHook({ contextWindow: 100, compactTo: 0 })).toThrow(/^`compactTo` must be a fraction/);
    expect(() => new CompactionHook({ contextWindow: 100, minGainTokens: -1 })).toThrow(RangeError);
    expect(() => new CompactionHook({ contextWindow: 100, minGainTokens: -1 })).toThrow(/^`minGainTokens` must be/);
    expect(() => new CompactionHook(null as never)).toThrow(new TypeError("CompactionHook options must be an object, got null"));
  });

  test("it keeps what it was given, and the default compactor is a sliding window", () => {
    const counter = (messages: BaseMessage[]) => messages.length;
    const hook = new CompactionHook({ contextWindow: 1000, compactAt: 0.8, compactTo: 0.5, tokenCounter: counter, minGainTokens: 12 });
    expect([hook.contextWindow, hook.compactAt, hook.compactTo, hook.tokenCounter, hook.minGainTokens]).toEqual([1000, 0.8, 0.5, counter, 12]);
    expect(hook.compactor).toBeInstanceOf(SlidingWindowCompactor);
    expect(new CompactionHook({ contextWindow: 1000 }).minGainTokens).toBe(0);
  });
});

describe("CompactionHook: the estimate and the overhead", () => {
  const hook = new CompactionHook({ contextWindow: 10_000, tokenCounter: lengthCounter });

  test("usage counts only on an AI message, only when finite, and when input plus output is more than 0", async () => {
    const usage = (input_tokens: number, output_tokens: number) =>
      new AIMessage({ content: x(5, "U"), usage_metadata: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens } });
    const tail = human(7);
    expect(await hook.estimateTokens([human(20), usage(100, 1), tail])).toBe(101 + 7);
    // Usage on the very first message counts too.
    expect(await hook.estimateTokens([usage(100, 1), tail])).toBe(101 + 7);
    // Output alone is usage too.
    expect(await hook.estimateTokens([human(20), usage(0, 3), tail])).toBe(3 + 7);
    // Non-finite usage is no anchor: the older one is used.
    expect(await hook.estimateTokens([usage(40, 2), human(20), usage(Number.POSITIVE_INFINITY, 1), tail])).toBe(42 + 20 + 5 + 7);
    expect(await hook.estimateTokens([usage(40, 2), human(20), usage(1, Number.POSITIVE_INFINITY), tail])).toBe(42 + 20 + 5 + 7);
    expect(await hook.estimateTokens([usage(40, 2), human(20), usage(Number.NaN, 1), tail])).toBe(42 + 20 + 5 + 7);
    // A field the provider left out counts as 0.
    const inputOnly = new AIMessage({ content: x(5, "U"), usage_metadata: { input_tokens: 0 } as never });
    expect(await hook.estimateTokens([usage(40, 2), human(20), inputOnly, tail])).toBe(42 + 20 + 5 + 7);
    const outputOnly = new AIMessage({ content: x(5, "U"), usage_metadata: { output_tokens: 0 } as never });
    expect(await hook.estimateTokens([usage(40, 2), human(20), outputOnly, tail])).toBe(42 + 20 + 5 + 7);
    // Usage adding up to nothing is no anchor either.
    expect(await hook.estimateTokens([usage(40, 2), human(20), usage(5, -5), tail])).toBe(42 + 20 + 5 + 7);
    // A human message carrying usage-like fields is not read.
    const humanWithUsage = new HumanMessage({ content: x(9) });
    (humanWithUsage as unknown as { usage_metadata: unknown }).usage_metadata = { input_tokens: 500, output_tokens: 0, total_tokens: 500 };
    expect(await hook.estimateTokens([humanWithUsage, tail])).toBe(9 + 7);
  });

  test("overhead must be an object; an explicit null system prompt adds nothing", async () => {
    for (const bad of [null, [], "tools"]) {
      await expect(hook.overheadTokens(bad as never)).rejects.toThrow(TypeError);
      await expect(hook.overheadTokens(bad as never)).rejects.toThrow(/^`overhead` must be an object \(\{ tools, systemMessage, extraTokens \}\), got /);
    }
    expect(await hook.overheadTokens({ systemMessage: null, extraTokens: 3 })).toBe(3);
    expect(await hook.overheadTokens({ systemMessage: "" })).toBe(0);
    expect(await hook.overheadTokens({ systemMessage: new SystemMessage(x(11)) })).toBe(11);
    expect(await hook.overheadTokens({ tools: [] })).toBe(0);
  });
});

describe("CompactionHook: minGainTokens", () => {
  // Window 1,000: fires at 700, compacts to 400.
  const options = { contextWindow: 1000, compactAt: 0.7, compactTo: 0.4, tokenCounter: lengthCounter };
  const messages = conversation(4); // 10 + 800 + 10 = 820 tokens

  test("a compaction freeing at least minGainTokens is applied", async () => {
    const plain = (await new CompactionHook(options).run(messages))!;
    const gain = plain.tokensBefore - plain.tokensAfter;
    expect(gain).toBeGreaterThan(0);
    const exactly = (await new CompactionHook({ ...options, minGainTokens: gain }).run(messages))!;
    expect(exactly.messages).toEqual(plain.messages);
    expect(exactly.declined).toBeUndefined();
  });

  test("one that frees less is declined: nothing is applied, and the report says what was proposed", async () => {
    const plain = (await new CompactionHook(options).run(messages))!;
    const gain = plain.tokensBefore - plain.tokensAfter;
    const report = (await new CompactionHook({ ...options, minGainTokens: gain + 1 }).run(messages))!;
    // Nothing applied: the input as it was, at its own size, and nothing listed as removed, rewritten or added.
    expect(report).toMatchObject({ strategy: plain.strategy, messages: null, note: null, stepsTrimmed: false });
    expect([report.removed, report.rewritten, report.added]).toEqual([[], [], []]);
    expect([report.keptCount, report.tokensBefore, report.tokensAfter]).toEqual([messages.length, plain.tokensBefore, plain.tokensBefore]);
    expect(report.declined).toMatchObject({ reason: "min_gain", gainTokens: gain, minGainTokens: gain + 1 });
    expect(report.declined!.proposed.messages).toEqual(plain.messages);
    expect(report.declined!.proposed.tokensAfter).toBe(plain.tokensAfter);
  });

  test("a compactor that reports no counts has its gain counted by the hook", async () => {
    const fixed = conversation(1);
    // Reports NaN tokens: the hook counts the lists itself (820 before, 21 after: system, task, and one answer of 1).
    const uncounted: Compactor = {
      compact: async () => fixed,
      compactWithReport: async (input): Promise<CompactionReport> => ({
        ...unchangedReport("uncounted", input, Number.NaN),
        messages: [input[0]!, new AIMessage("a"), input[input.length - 1]!],
      }),
    };
    const applied = (await new CompactionHook({ ...options, compactor: uncounted, minGainTokens: 799 }).run(messages))!;
    expect(applied.declined).toBeUndefined();
    const declined = (await new CompactionHook({ ...options, compactor: uncounted, minGainTokens: 800 }).run(messages))!;
    expect(declined.declined?.gainTokens).toBe(799);
    // With only one count missing, the hook counts too.
    const halfCounted: Compactor = {
      ...uncounted,
      compactWithReport: async (input) => ({ ...(await uncounted.compactWithReport(input, 0)), tokensBefore: 820 }),
    };
    expect((await new CompactionHook({ ...options, compactor: halfCounted, minGainTokens: 800 }).run(messages))!.declined?.gainTokens).toBe(799);
    const otherHalf: Compactor = {
      ...uncounted,
      compactWithReport: async (input) => ({ ...(await uncounted.compactWithReport(input, 0)), tokensAfter: 21 }),
    };
    expect((await new CompactionHook({ ...options, compactor: otherHalf, minGainTokens: 800 }).run(messages))!.declined?.gainTokens).toBe(799);
  });

  test("a compactor that reports its counts is trusted for the gain, not recounted", async () => {
    // The report claims 1,000 → 100 (a gain of 900) where the hook's counter would see 820 → 21 (799).
    const counted: Compactor = {
      compact: async () => null,
      compactWithReport: async (input): Promise<CompactionReport> => ({
        ...unchangedReport("counted", input, 1_000),
        messages: [input[0]!, new AIMessage("a"), input[input.length - 1]!],
        tokensAfter: 100,
      }),
    };
    const applied = (await new CompactionHook({ ...options, compactor: counted, minGainTokens: 850 }).run(messages))!;
    expect(applied.declined).toBeUndefined();
    expect(applied.messages).toHaveLength(3);
    const declined = (await new CompactionHook({ ...options, compactor: counted, minGainTokens: 901 }).run(messages))!;
    expect(declined.declined?.gainTokens).toBe(900);
  });

  test("with the default threshold (0) even a compaction that frees nothing, or grows the list, is applied", async () => {
    const growing: Compactor = {
      compact: async () => null,
      compactWithReport: async (input) => ({ ...unchangedReport("grow", input, 820), messages: [...input, new AIMessage("more")], tokensAfter: 824 }),
    };
    const report = (await new CompactionHook({ ...options, compactor: growing }).run(messages))!;
    expect(report.messages).toHaveLength(messages.length + 1);
    expect(report.declined).toBeUndefined();
  });

  test("a compaction that changed nothing is returned as it is, whatever the threshold", async () => {
    const nothing: Compactor = { compact: async () => null, compactWithReport: async (input) => unchangedReport("none", input, 100) };
    const report = (await new CompactionHook({ ...options, compactor: nothing, minGainTokens: 50 }).run(messages))!;
    expect(report.messages).toBeNull();
    expect(report.declined).toBeUndefined();
  });
});

describe("CompactionHook: the compactor's cache and the signal", () => {
  test("the hook counts through the compactor's own cache, none when it has none, else the shared one", async () => {
    let calls = 0;
    const counter = (list: BaseMessage[]) => {
      calls += 1;
      return lengthCounter(list);
    };
    const messages = conversation(1);
    // A cache that records what is stored in it, to tell it from the shared one.
    const stored: BaseMessage[] = [];
    const cache = new (class extends TokenCountCache {
      override set(counterKey: object, message: BaseMessage, count: number): void {
        stored.push(message);
        super.set(counterKey, message, count);
      }
    })();
    const own = new CompactionHook({ contextWindow: 10_000, tokenCounter: counter, compactor: new SlidingWindowCompactor({ cache }) });
    await own.estimateTokens(messages);
    expect(calls).toBe(messages.length);
    expect(stored).toEqual(messages);
    await own.estimateTokens(messages);
    expect(calls).toBe(messages.length); // remembered in that cache
    const fresh = new CompactionHook({ contextWindow: 10_000, tokenCounter: counter, compactor: new SlidingWindowCompactor({ cache: null }) });
    await fresh.estimateTokens(messages);
    await fresh.estimateTokens(messages);
    expect(calls).toBe(3 * messages.length); // counted afresh each time
    // A compactor without a cache of its own (or with something else under that name): the shared cache.
    const noop = () => undefined;
    for (const oddCache of [{ get: 1 }, { get: noop }, { set: noop }, "cache"]) {
      const odd: Compactor & { cache: unknown } = { compact: async () => null, compactWithReport: async (input) => unchangedReport("odd", input, 0), cache: oddCache };
      const shared = new CompactionHook({ contextWindow: 10_000, tokenCounter: counter, compactor: odd });
      await shared.estimateTokens(messages);
      const afterFirst = calls;
      await shared.estimateTokens(messages);
      expect(calls).toBe(afterFirst);
    }
  });

  test("the compactor gets the run's signal (none when none was given), its instructions, and what the request carries", async () => {
    const seen: (CompactOptions | undefined)[] = [];
    const spy: Compactor = {
      compact: async () => null,
      compactWithReport: async (input, _target, _counter, callOptions) => {
        seen.push(callOptions);
        return unchangedReport("spy", input, 100);
      },
    };
    const hook = new CompactionHook({ contextWindow: 100, tokenCounter: lengthCounter, compactor: spy });
    const controller = new AbortController();
    const systemMessage = new SystemMessage("prompt");
    await hook.run(conversation(4), { systemMessage }, { signal: controller.signal, instructions: "keep the ids" });
    await hook.run(conversation(4));
    expect(seen).toEqual([
      { signal: controller.signal, instructions: "keep the ids", request: { tools: [], systemMessage } },
      { request: { tools: [], systemMessage: null } },
    ]);
  });

  test("an abort while the compactor works rejects the run with the reason, even when the compactor ignores it", async () => {
    const controller = new AbortController();
    const reason = new Error("user left");
    const deaf: Compactor = {
      compact: async () => null,
      compactWithReport: (input) => {
        controller.abort(reason);
        return Promise.resolve(unchangedReport("deaf", input, 100));
      },
    };
    const hook = new CompactionHook({ contextWindow: 100, tokenCounter: lengthCounter, compactor: deaf });
    await expect(hook.run(conversation(4), {}, { signal: controller.signal })).rejects.toBe(reason);
  });

  test("an abort while the gain is counted rejects the run too", async () => {
    const controller = new AbortController();
    const reason = new Error("stop counting");
    let armed = false;
    const counter = async (list: BaseMessage[]) => {
      if (armed) controller.abort(reason);
      return lengthCounter(list);
    };
    const uncounted: Compactor = {
      compact: async () => null,
      compactWithReport: async (input) => {
        armed = true;
        // A message not counted before, so that counting the gain calls the counter.
        return { ...unchangedReport("uncounted", input, Number.NaN), messages: [input[0]!, new AIMessage("fresh"), input[input.length - 1]!] };
      },
    };
    const hook = new CompactionHook({ contextWindow: 100, tokenCounter: counter, compactor: uncounted, minGainTokens: 1 });
    await expect(hook.run(conversation(4), {}, { signal: controller.signal })).rejects.toBe(reason);
  });

  test("bad run options are a TypeError, and an aborted signal rejects before anything is counted", async () => {
    let calls = 0;
    const hook = new CompactionHook({ contextWindow: 100, tokenCounter: (list: BaseMessage[]) => ((calls += 1), lengthCounter(list)) });
    await expect(hook.run(conversation(4), {}, null as never)).rejects.toThrow(new TypeError("compaction options must be an object, got null"));
    const reason = new Error("gone");
    // The overhead holds a system prompt to count: nothing of it is counted either.
    await expect(hook.run(conversation(4), { systemMessage: "Be brief." }, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls).toBe(0);
  });
});
