/**
 * The pruning stage's boundaries and the fused pruning → window path, one
 * test each (survivors of the mutation run of
 * `src/compactors/tool-result-pruning.ts` and `rewrites-then-window.ts`). The fused
 * path must give what the two stages give one after the other: that is
 * checked here on the shapes where deciding only the groups the window reads
 * could go wrong (protected messages, newest steps the window keeps whatever
 * their size, an asynchronous counter, nothing prunable), against the same
 * stages run through subclasses, which the pipeline never fuses.
 */
import { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import {
  approximateTokenCounter,
  CompactionPipeline,
  SlidingWindowCompactor,
  TokenCountCache,
  ToolResultPruningCompactor,
} from "../../src";
import type { SlidingWindowCompactorOptions, ToolResultPruningCompactorOptions } from "../../src";
import { agentRun, answer, calling, human, lengthCounter, placeholderFor, result, system, tokens } from "../support/stages";

const contents = (messages: readonly BaseMessage[] | null) => messages?.map((message) => `${message.type}:${String(message.content)}`) ?? null;

describe("ToolResultPruningCompactor: arguments", () => {
  test.each([null, [], "fast"])("options %p are a TypeError naming them", (options) => {
    const make = () => new ToolResultPruningCompactor(options as unknown as ToolResultPruningCompactorOptions);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(/^ToolResultPruningCompactor options must be an object, got /);
  });

  test("a bad minTokens, placeholder or target names itself", async () => {
    expect(() => new ToolResultPruningCompactor({ minTokens: -1 })).toThrow(/`minTokens` must be/);
    expect(() => new ToolResultPruningCompactor({ placeholder: 7 as unknown as string })).toThrow(new TypeError("`placeholder` must be a string, got 7"));
    await expect(new ToolResultPruningCompactor().compact(agentRun(2), -1, lengthCounter)).rejects.toThrow(/`targetTokens` must be/);
  });
});

describe("ToolResultPruningCompactor: the replacement", () => {
  const stage = (options: ToolResultPruningCompactorOptions = {}) => new ToolResultPruningCompactor({ cache: null, minKeepResults: 1, ...options });

  test("a result without a name is named after its call; with neither, 'the tool'", async () => {
    const messages: BaseMessage[] = [
      system(),
      human(10, "TASK"),
      calling(["a"], 10, "search"),
      new ToolMessage({ tool_call_id: "a", content: "x".repeat(300), name: "" }),
      new AIMessage({ content: "C", tool_calls: [{ id: "b", name: "", args: {}, type: "tool_call" }] }),
      new ToolMessage({ tool_call_id: "b", content: "y".repeat(300) }),
      // A stored call whose name came back as no string at all names nothing either.
      new AIMessage({ content: "C", tool_calls: [{ id: "n", name: 42 as unknown as string, args: {}, type: "tool_call" }] }),
      new ToolMessage({ tool_call_id: "n", content: "n".repeat(300) }),
      calling(["z"]),
      result("z", 300),
      answer(),
    ];
    const out = await stage().compact(messages, 0, lengthCounter);
    expect(out![3]!.content).toBe(placeholderFor("search"));
    expect(out![5]!.content).toBe(placeholderFor("the tool"));
    expect(out![7]!.content).toBe(placeholderFor("the tool"));
  });

  test("a placeholder exactly as large as the result is not used; one token smaller is", async () => {
    const messages = agentRun(3);
    const same = await stage({ placeholder: "p".repeat(300), minTokens: 10 }).compact(messages, 0, lengthCounter);
    expect(same).toBeNull();
    const smaller = await stage({ placeholder: "p".repeat(299), minTokens: 10 }).compact(messages, 0, lengthCounter);
    expect(smaller![3]!.content).toBe("p".repeat(299));
  });

  test("the replacement keeps the result's additional_kwargs (a copy)", async () => {
    const messages = agentRun(3);
    const original = new ToolMessage({ tool_call_id: "c0", content: "x".repeat(300), name: "lookup", additional_kwargs: { trace: "t-1" } });
    messages[3] = original;
    const out = await stage().compact(messages, 0, lengthCounter);
    expect(out![3]!.additional_kwargs).toEqual({ trace: "t-1" });
    expect(out![3]!.additional_kwargs).not.toBe(original.additional_kwargs);
  });

  test("a replacement's count is remembered, for the estimate as for any counter", async () => {
    const messages = agentRun(3);
    const cache = new TokenCountCache();
    const counter = (list: BaseMessage[]) => lengthCounter(list);
    const out = await new ToolResultPruningCompactor({ cache, minKeepResults: 1 }).compact(messages, 0, counter);
    expect(cache.get(counter, out![3]!)).toBe(placeholderFor("lookup").length);
    const estimated = await new ToolResultPruningCompactor({ cache, minKeepResults: 1, minTokens: 10 }).compact(messages, 0, approximateTokenCounter);
    expect(estimated![3]!.type).toBe("tool");
    expect(estimated![3]!.content).toBe(placeholderFor("lookup"));
    expect(cache.get(approximateTokenCounter, estimated![3]!)).toBe(approximateTokenCounter([estimated![3]!]));
    // The input's counts were remembered under each counter.
    expect(cache.get(counter, messages[3]!)).toBe(lengthCounter([messages[3]!]));
    expect(cache.get(approximateTokenCounter, messages[3]!)).toBe(approximateTokenCounter([messages[3]!]));
  });
});

describe("pruning → window, fused: the same as the two stages one after the other", () => {
  /** A pruning stage that does not offer its rewrites lazily: the pipeline runs the stages one after the other. */
  class Pruning extends ToolResultPruningCompactor {
    override rewritesInPlace(): undefined {
      return undefined;
    }
  }
  class Window extends SlidingWindowCompactor {}

  async function bothWays(
    messages: BaseMessage[],
    target: number,
    pruning: ToolResultPruningCompactorOptions,
    window: SlidingWindowCompactorOptions,
    counter: (list: BaseMessage[]) => number | Promise<number> = lengthCounter,
  ) {
    const fused = new CompactionPipeline([new ToolResultPruningCompactor({ cache: null, ...pruning }), new SlidingWindowCompactor({ cache: null, ...window })], { cache: null });
    const staged = new CompactionPipeline([new Pruning({ cache: null, ...pruning }), new Window({ cache: null, ...window })], { cache: null });
    const [fusedReport, stagedReport] = [await fused.compactWithReport(messages, target, counter), await staged.compactWithReport(messages, target, counter)];
    const [fusedList, stagedList] = [await fused.compact(messages, target, counter), await staged.compact(messages, target, counter)];
    expect(contents(fusedList)).toEqual(contents(stagedList));
    expect(contents(fusedReport.messages)).toEqual(contents(stagedReport.messages));
    expect(fusedReport.removed).toEqual(stagedReport.removed);
    expect(fusedReport.rewritten.map(({ original }) => original)).toEqual(stagedReport.rewritten.map(({ original }) => original));
    expect(fusedReport.tokensAfter).toBe(stagedReport.tokensAfter);
    return { fusedReport, stagedReport, fusedList };
  }

  test("a result protected by the pruning stage stays as it is", async () => {
    const messages = agentRun(8);
    const kept = messages[15]!; // c6's result, in a step the window keeps
    const { fusedList } = await bothWays(messages, 700, { minKeepResults: 1, protect: (message) => message === kept }, {});
    expect(fusedList).toContain(kept);
  });

  test("a turn protected by the window keeps its result pruned, as pruning alone would have left it", async () => {
    const messages: BaseMessage[] = [system(), human(10, "Q1"), calling(["old"]), result("old", 300), answer(), ...agentRun(8).slice(1)];
    const old = messages[1]!;
    const { fusedList } = await bothWays(messages, 700, { minKeepResults: 1 }, { protect: (message) => message === old });
    expect(fusedList).toContain(old);
    expect(fusedList!.find((message) => message.type === "tool" && (message as ToolMessage).tool_call_id === "old")!.content).toBe(placeholderFor("lookup"));
  });

  test("the newest steps the window keeps whatever their size have their results pruned, also past the group that filled the target", async () => {
    // The newest step alone exceeds the target; the three before it (the answer a step too) are kept by minKeepSteps 4 all the same.
    const messages = agentRun(4);
    messages.push(calling(["big"]), result("big", 2_000));
    const { fusedReport } = await bothWays(messages, 500, { minKeepResults: 1 }, { minKeepSteps: 4 });
    expect(fusedReport.rewritten.map(({ original }) => (original as ToolMessage).tool_call_id)).toEqual(["c2", "c3"]);
  });

  test("a result decided twice (walked, then among the kept steps) is pruned and counted once", async () => {
    const messages = agentRun(6);
    const { fusedReport } = await bothWays(messages, 400, { minKeepResults: 1 }, { minKeepSteps: 3 });
    const [pruningEntry] = fusedReport.stages;
    expect(pruningEntry!.rewritten.length).toBeGreaterThan(0);
    expect(pruningEntry!.tokensAfter).toBe(tokens(pruningEntry!.messages!));
  });

  test("many steps: the window's newest steps are the ones decided", async () => {
    await bothWays(agentRun(20), 1_500, { minKeepResults: 1 }, {});
  });

  test("an asynchronous counter takes the stages one after the other, with the same result", async () => {
    const { fusedReport } = await bothWays(agentRun(8), 700, { minKeepResults: 1 }, {}, async (list) => lengthCounter(list));
    expect(fusedReport.stages[0]!.rewritten).toHaveLength(7);
  });

  test("nothing prunable (every result small): the pruning entry changed nothing", async () => {
    const { fusedReport } = await bothWays(agentRun(8, 100), 300, { minKeepResults: 1 }, {});
    expect(fusedReport.stages.map((entry) => [entry.strategy, entry.messages === null])).toEqual([
      ["tool_result_pruning", true],
      ["sliding_window", false],
    ]);
  });
});
