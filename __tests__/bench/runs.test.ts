/**
 * The run benchmark's harness (bench/runs/) on one short run: 20 model calls
 * (two user turns of ten), one seed, a 12,000-token window, two strategies
 * (no compaction, and our sliding window on `createAgent`). It checks that
 * the harness records every request, that ours stays under the window and
 * valid where the baseline goes over, and that the cost from the common
 * prefix is what a hand count gives.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { runStrategy } from "../../bench/runs/harness";
import type { RunResult } from "../../bench/runs/harness";
import { billedInput, compareRequests, MessageTokens, PRICE_A, PRICE_B } from "../../bench/runs/metrics";
import { goals } from "../../bench/runs/report";
import { runScript } from "../../bench/runs/script";
import { STRATEGIES } from "../../bench/runs/strategies";
import { providerProblem } from "../../bench/runs/validity";
import type { TokenCounter } from "../../src";

const SHORT = { turns: 2, callsPerTurn: 10, contextWindow: 12_000 };
const strategy = (key: string) => STRATEGIES.find((entry) => entry.key === key)!;

describe("run benchmark harness, one short run", () => {
  let none: RunResult;
  let ours: RunResult;
  beforeAll(async () => {
    none = await runStrategy(strategy("none"), 1, SHORT);
    ours = await runStrategy(strategy("ours-sw-agent"), 1, SHORT);
  });

  test("every model call of the script is recorded and measured", () => {
    for (const run of [none, ours]) {
      expect(run.calls).toBe(20);
      expect(run.steps).toHaveLength(20);
      expect(run.cumulativeA).toHaveLength(20);
      expect(run.cumulativeA.at(-1)).toBeCloseTo(run.billedA, 6);
      expect(run.peakTokens).toBe(Math.max(...run.steps.map((step) => step.tokens)));
    }
    // Without compaction the requests only grow, each keeping the previous one as its prefix.
    for (let i = 1; i < none.steps.length; i += 1) {
      expect(none.steps[i]!.tokens).toBeGreaterThan(none.steps[i - 1]!.tokens);
      expect(none.steps[i]!.prefixBreak).toBe(false);
      expect(none.steps[i]!.commonPrefixTokens).toBe(none.steps[i - 1]!.tokens);
    }
  });

  test("the baseline goes over the window, ours stays under it and valid, breaking the prefix at most once per compaction", () => {
    expect(none.overWindow).toBeGreaterThan(0);
    expect(none.peakTokens).toBeGreaterThan(SHORT.contextWindow);
    expect(ours.overWindow).toBe(0);
    expect(ours.peakTokens).toBeLessThanOrEqual(SHORT.contextWindow);
    expect(ours.invalid).toBe(0);
    expect(ours.firstProblem).toBeNull();
    expect(ours.compactions).toBeGreaterThan(0);
    expect(ours.prefixBreaks).toBeGreaterThan(0);
    expect(ours.prefixBreaks).toBeLessThanOrEqual(ours.compactions!);
    expect(ours.inputTokens).toBeLessThan(none.inputTokens);
  });

  test("facts: the baseline's last request shows every planted fact; the model's own list is checked by the harness", () => {
    // The last answer's own fact is in no request; every earlier one is in the baseline's last request.
    const planted = runScript(1, SHORT).facts.filter((fact) => fact.call < 19).map((fact) => fact.id);
    expect(planted.length).toBeGreaterThan(5);
    expect(none.factsPlanted).toBe(planted.length);
    expect(none.factsVisible).toEqual(planted);
    expect(ours.factsVisible.length).toBeLessThan(planted.length);
    for (const id of ours.factsVisible) expect(planted).toContain(id);
  });

  test("the goals are judged on the results: a run over the window fails the first goal", () => {
    const ok = goals([{ strategy: strategy("ours-sw-agent"), runs: [ours] }]);
    expect(ok[0]!.met).toBe(true);
    expect(ok[2]!.met).toBe(true);
    const over = goals([{ strategy: strategy("ours-sw-agent"), runs: [{ ...ours, overWindow: 1 }] }]);
    expect(over[0]!.met).toBe(false);
    const breaks = goals([{ strategy: strategy("ours-sw-agent"), runs: [{ ...ours, prefixBreaks: ours.compactions! + 1 }] }]);
    expect(breaks[2]!.met).toBe(false);
  });
});

describe("cost from the longest common prefix", () => {
  // One token per character of content: easy to count by hand.
  const perChar: TokenCounter = (messages) => messages.reduce((sum, m) => sum + String(m.content).length, 0);

  test("a hand-checked pair of requests", () => {
    const tokens = new MessageTokens(perChar);
    const system = new SystemMessage("aaaa"); // 4
    const ask = new HumanMessage("bb"); // 2
    const first = { messages: [system, ask], toolSchemaText: "tt" }; // 2 + 4 + 2 = 8
    // The same prefix as copies (a checkpointer copies messages), plus a 3-token answer.
    const second = { messages: [new SystemMessage("aaaa"), new HumanMessage("bb"), new AIMessage("ccc")], toolSchemaText: "tt" };
    const a = compareRequests(tokens, null, first);
    const b = compareRequests(tokens, first, second);
    expect(a).toEqual({ tokens: 8, commonPrefixTokens: 0, prefixBreak: false });
    expect(b).toEqual({ tokens: 11, commonPrefixTokens: 8, prefixBreak: false });
    // A: 8 × 1.25 for the first; 8 × 0.1 + 3 × 1.25 for the second.
    expect(billedInput([a, b], PRICE_A)).toBeCloseTo(10 + 0.8 + 3.75, 10);
    // B: 8 × 1.0; then 8 × 0.5 + 3 × 1.0.
    expect(billedInput([a, b], PRICE_B)).toBeCloseTo(8 + 4 + 3, 10);

    // The second message edited: the prefix is the tool schemas and the system prompt only, and it is a break.
    const edited = { messages: [system, new HumanMessage("bX"), new AIMessage("ccc")], toolSchemaText: "tt" };
    expect(compareRequests(tokens, second, edited)).toEqual({ tokens: 11, commonPrefixTokens: 6, prefixBreak: true });
    // Other tools: nothing is reused, though the messages are the same.
    expect(compareRequests(tokens, second, { ...second, toolSchemaText: "uu" })).toEqual({ tokens: 11, commonPrefixTokens: 0, prefixBreak: true });
  });
});

describe("provider validity check", () => {
  const call = () => new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read_file", args: {}, type: "tool_call" }] });
  const result = () => new ToolMessage({ tool_call_id: "c1", content: "r" });
  const cases: [string, BaseMessage[]][] = [
    ["a result without its call", [new SystemMessage("s"), new HumanMessage("q"), result()]],
    ["a call not answered", [new SystemMessage("s"), new HumanMessage("q"), call(), new HumanMessage("again")]],
    ["no user message", [new SystemMessage("s")]],
    ["an assistant first", [new SystemMessage("s"), new AIMessage("hi")]],
  ];
  test.each(cases)("rejects %s", (_name, messages) => {
    expect(providerProblem(messages)).not.toBeNull();
  });
  test("accepts a well-formed request", () => {
    expect(providerProblem([new SystemMessage("s"), new HumanMessage("q"), call(), result(), new AIMessage("done")])).toBeNull();
  });
});
