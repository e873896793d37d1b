/**
 * The hook's triggers and targets beyond a fraction of the window, forced runs with instructions, what an overflow
 * teaches it, and the duration and per-category breakdown on its report. One token per character (`lengthCounter`),
 * so every expectation is worked out by hand.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { CompactionHook, SlidingWindowCompactor } from "../../src";
import type { CompactionReport, CompactOptions, Compactor } from "../../src";
import { unchangedReport } from "../../src/compactors/stage-report";
import { lengthCounter } from "../support/stages";

/** System (10), then `turns` turns of a 20-token question and a 30-token answer, ids `q<i>`/`a<i>`. */
function chat(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage({ id: "s", content: "S".repeat(10) })];
  for (let i = 0; i < turns; i += 1) messages.push(new HumanMessage({ id: `q${i}`, content: "Q".repeat(20) }), new AIMessage({ id: `a${i}`, content: "A".repeat(30) }));
  return messages;
}
const window = (options: ConstructorParameters<typeof CompactionHook>[0]) => new CompactionHook({ tokenCounter: lengthCounter, compactor: new SlidingWindowCompactor({ cache: null, omissionNote: null }), ...options });
const ids = (messages: readonly BaseMessage[] | null | undefined) => messages?.map((m) => m.id) ?? null;

describe("triggers on messages and turns, combined", () => {
  test("{ messages }: fires at that many messages whatever their size", async () => {
    const hook = window({ contextWindow: 1_000_000, trigger: { messages: 9 }, target: { messages: 4 } });
    expect(await hook.run(chat(3))).toBeNull(); // 7 messages
    const report = await hook.run(chat(4)); // 9 messages
    // Keep the instructions and the newest 4 messages: the last two turns.
    expect(ids(report!.messages)).toEqual(["s", "q2", "a2", "q3", "a3"]);
  });

  test("{ turns }: counts real user messages only, not notes or summaries", async () => {
    const hook = window({ contextWindow: 1_000_000, trigger: { turns: 3 }, target: { turns: 1 } });
    expect(await hook.run(chat(2))).toBeNull();
    const report = await hook.run(chat(3));
    expect(ids(report!.messages)).toEqual(["s", "q2", "a2"]);
    // Once compacted with a note, the note is not a turn: two real turns do not fire it.
    const noted = await new CompactionHook({ contextWindow: 1_000_000, tokenCounter: lengthCounter, trigger: { turns: 3 }, target: { turns: 1 } }).run(chat(3));
    expect(noted!.messages!.length).toBe(4); // s, note, q2, a2
    expect(await new CompactionHook({ contextWindow: 1_000_000, tokenCounter: lengthCounter, trigger: { turns: 3 } }).shouldCompact([...noted!.messages!, new HumanMessage("again")])).toBe(false);
  });

  test("any/all combine conditions; the token estimate is one of them", async () => {
    const either = window({ contextWindow: 1_000, trigger: { any: [{ messages: 100 }, { fraction: 0.2 }] } });
    expect(await either.shouldCompact(chat(3))).toBe(false); // 160 tokens, 7 messages
    expect(await either.shouldCompact(chat(4))).toBe(true); // 210 tokens
    const both = window({ contextWindow: 1_000, trigger: { all: [{ messages: 9 }, { tokens: 300 }] } });
    expect(await both.shouldCompact(chat(4))).toBe(false); // 9 messages, 210 tokens
    expect(await both.shouldCompact(chat(6))).toBe(true); // 13 messages, 310 tokens
    expect(both.triggerTokens).toBe(300);
    expect(window({ contextWindow: 1_000, trigger: { messages: 5 } }).triggerTokens).toBe(Number.POSITIVE_INFINITY);
  });

  test("{ tokens } target: that many tokens for the whole request, the overhead included", async () => {
    const hook = window({ contextWindow: 1_000, trigger: { tokens: 200 }, target: { tokens: 120 } });
    expect(hook.targetTokens()).toBe(120);
    expect(hook.targetTokens(20)).toBe(100);
    const report = await hook.run(chat(4)); // 210 tokens: keep 10 + newest turns within 120
    expect(ids(report!.messages)).toEqual(["s", "q2", "a2", "q3", "a3"]);
  });

  test("trigger and target name their clashes and bad parts", () => {
    expect(() => window({ contextWindow: 100, trigger: { messages: 3 }, compactAt: 0.5 })).toThrow("give `trigger` or `compactAt`, not both");
    expect(() => window({ contextWindow: 100, target: { messages: 3 }, compactTo: 0.5 })).toThrow("give `target` or `compactTo`, not both");
    expect(() => window({ contextWindow: 100, trigger: { fraction: 0.5 }, target: { fraction: 0.6 } })).toThrow(RangeError);
    expect(() => window({ contextWindow: 100, trigger: { turns: 0 } })).toThrow(/^`trigger.turns` must be a whole number/);
    expect(() => window({ contextWindow: 100, target: { any: [] } as never })).toThrow(/^`target` must have exactly one of/);
  });
});

describe("forced runs", () => {
  test("force compacts below the trigger, and hands the instructions and the request to the compactor", async () => {
    const seen: (CompactOptions | undefined)[] = [];
    const spy: Compactor = {
      compact: async () => null,
      compactWithReport: async (input, _target, _counter, options): Promise<CompactionReport> => {
        seen.push(options);
        return unchangedReport("spy", input, 100);
      },
    };
    const hook = new CompactionHook({ contextWindow: 10_000, tokenCounter: lengthCounter, compactor: spy });
    expect(await hook.run(chat(2))).toBeNull();
    const report = await hook.run(chat(2), { systemMessage: "prompt" }, { force: true, instructions: "keep decisions" });
    expect(report!.forced).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.instructions).toBe("keep decisions");
    expect(seen[0]!.request!.systemMessage).toBe("prompt");
    await expect(hook.run(chat(2), {}, { force: "yes" as never })).rejects.toThrow("`force` must be a boolean, got \"yes\"");
  });
});

describe("what an overflow teaches the hook", () => {
  test("the provider's count scales later estimates and targets; its limit becomes the window", async () => {
    const hook = window({ contextWindow: 1_000 });
    const messages = chat(4); // 210 tokens
    expect(await hook.estimateTokens(messages)).toBe(210);
    hook.learnFromOverflow({ estimatedTokens: 200, requestTokens: 300, limitTokens: 800 });
    expect(hook.effectiveWindow).toBe(800);
    expect(await hook.estimateTokens(messages)).toBe(315); // 210 × 1.5
    expect(hook.triggerTokens).toBe(560); // 0.7 × 800
    expect(hook.targetTokens()).toBe(213); // floor(0.4 × 800 / 1.5)
    // A later, gentler lesson does not undo a harsher one.
    hook.learnFromOverflow({ estimatedTokens: 200, requestTokens: 210, limitTokens: 900 });
    expect(hook.effectiveWindow).toBe(800);
    expect(await hook.estimateTokens(messages)).toBe(315);
  });

  test("with no counts, the window shrinks to nine tenths of what was refused", () => {
    const hook = window({ contextWindow: 1_000 });
    hook.learnFromOverflow({ estimatedTokens: 600 });
    expect(hook.effectiveWindow).toBe(540);
    expect(hook.triggerTokens).toBeCloseTo(378);
  });

  test("provider-reported usage is trusted as it is; only the local count after it is scaled", async () => {
    const hook = window({ contextWindow: 10_000 });
    hook.learnFromOverflow({ estimatedTokens: 100, requestTokens: 200 });
    const withUsage = [...chat(1), new AIMessage({ content: "x", usage_metadata: { input_tokens: 500, output_tokens: 10, total_tokens: 510 } }), new HumanMessage("Q".repeat(20))];
    expect(await hook.estimateTokens(withUsage)).toBe(510 + 2 * 20);
  });
});

describe("the report: duration and breakdown", () => {
  test("every token in one category, before and after, the request's tools and system prompt included", async () => {
    const call = new AIMessage({ id: "c", content: "", tool_calls: [{ id: "t", name: "f", args: {}, type: "tool_call" }] });
    const messages: BaseMessage[] = [...chat(3), new HumanMessage({ id: "task", content: "T".repeat(10) }), call, new ToolMessage({ id: "r", tool_call_id: "t", content: "R".repeat(40) })];
    const hook = window({ contextWindow: 300, compactAt: 0.5, compactTo: 0.3 });
    const report = await hook.run(messages, { systemMessage: "P".repeat(7), extraTokens: 3 });
    const { before, after } = report!.breakdown;
    expect(before).toEqual({ system: 10 + 7, tools: 3, history: 150, summaries: 0, toolResults: 40, task: 10 });
    // Target 90 − 10 overhead = 80: instructions, task and the step (60) stay, the history goes.
    expect(after).toEqual({ system: 17, tools: 3, history: 0, summaries: 0, toolResults: 40, task: 10 });
    expect(report!.durationMs).toBeGreaterThanOrEqual(0);
    expect(report!.forced).toBe(false);
  });
});
