/**
 * Every bad value in the public core API: a `TypeError` or
 * `RangeError` (or `TokenCounterError` for a counter that throws) whose
 * message names the bad value, raised where it enters and before anything is
 * changed: the input list and its messages are deep-equal to before, no bad
 * count reaches a cache, and no bad message reaches a store (in memory and
 * on the real Redis server, REDIS_URL).
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { RedisChatMessageHistory } from "@langchain/redis";
import { createClient } from "redis";
import {
  applyCompactionView,
  approximateTokenCounter,
  CompactingChatMessageHistory,
  CompactionHook,
  isOmissionNote,
  SlidingWindowCompactor,
  tiktokenCounter,
  TokenCountCache,
  TokenCounterError,
} from "../src";
import type { CompactionHookOptions, CompactionView, SlidingWindowCompactorOptions, TiktokenEncodingName, TokenCounter, TokenCounterLike } from "../src";
import { comparableForm } from "../src/integrations/store-rewrite";
import { viewOfShown } from "../src/integrations/view-window";
import { snapshotMessages } from "./support/conversations";
import { REDIS_URL, requireServer } from "./support/servers";

/** A conversation that needs compacting at small targets: history, a task, and two steps. */
function conversation(): BaseMessage[] {
  return [
    new SystemMessage("You are a helpful agent."),
    new HumanMessage("first question, with some words in it"),
    new AIMessage("first answer, with some words in it"),
    new HumanMessage("the task: look up the weather"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "weather", args: { city: "Oslo" }, type: "tool_call" }] }),
    new ToolMessage({ tool_call_id: "c1", content: "rain, 8 C" }),
    new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "weather", args: { city: "Riga" }, type: "tool_call" }] }),
    new ToolMessage({ tool_call_id: "c2", content: "sun, 18 C" }),
  ];
}

/** Runs `act`, expects it to reject with `type` and a message containing every `fragment`, and the input untouched. */
async function expectRejects(
  messages: BaseMessage[],
  act: () => Promise<unknown>,
  type: new (...args: never[]) => Error,
  ...fragments: string[]
): Promise<Error> {
  const elements = [...messages];
  const before = snapshotMessages(messages);
  let caught: unknown;
  try {
    await act();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(type);
  for (const fragment of fragments) expect((caught as Error).message).toContain(fragment);
  expect(messages).toHaveLength(elements.length);
  messages.forEach((m, i) => expect(m).toBe(elements[i]));
  expect(snapshotMessages(messages)).toStrictEqual(before);
  return caught as Error;
}

function expectThrows(act: () => unknown, type: new (...args: never[]) => Error, ...fragments: string[]): void {
  let caught: unknown;
  try {
    act();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(type);
  for (const fragment of fragments) expect((caught as Error).message).toContain(fragment);
}

describe("SlidingWindowCompactor options", () => {
  test.each<[unknown, string]>([
    [null, "null"],
    ["fast", '"fast"'],
    [3, "3"],
    [[], "an array of 0"],
    [() => 1, "function"],
  ])("options %p: TypeError naming it", (options, shown) => {
    expectThrows(() => new SlidingWindowCompactor(options as SlidingWindowCompactorOptions), TypeError, "options must be an object", shown);
  });

  test.each<[unknown, string]>([
    [-1, "-1"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
  ])("minKeepSteps %p: RangeError naming it", (minKeepSteps, shown) => {
    expectThrows(() => new SlidingWindowCompactor({ minKeepSteps: minKeepSteps as number }), RangeError, "`minKeepSteps`", `got ${shown}`);
  });

  test.each<[unknown, string]>([
    ["2", '"2"'],
    [null, "null"],
    [true, "true"],
    [{}, "an object"],
    [2n, "2n"],
  ])("minKeepSteps %p (not a number): TypeError naming it", (minKeepSteps, shown) => {
    expectThrows(() => new SlidingWindowCompactor({ minKeepSteps: minKeepSteps as number }), TypeError, "`minKeepSteps`", `got ${shown}`);
  });

  test.each<[unknown, string]>([
    [42, "42"],
    [{ text: "x" }, "an object"],
    [["a"], "an array of 1"],
    [false, "false"],
  ])("omissionNote %p: TypeError naming it", (omissionNote, shown) => {
    expectThrows(() => new SlidingWindowCompactor({ omissionNote: omissionNote as string }), TypeError, "`omissionNote`", `got ${shown}`);
  });

  test.each<[unknown, string]>([
    [new Map(), "a Map"],
    [{}, "an object"],
    ["shared", '"shared"'],
    [new WeakMap(), "a WeakMap"],
  ])("cache %p: TypeError naming it", (cache, shown) => {
    expectThrows(() => new SlidingWindowCompactor({ cache: cache as TokenCountCache }), TypeError, "`cache`", `got ${shown}`);
  });

  test("lazy counting: compact does not call the counter on history its rules never read", async () => {
    const messages = conversation();
    let badCalls = 0;
    const counter: TokenCounter = (list) => {
      if (list.some((m) => m.type === "tool" && m.content === "rain, 8 C")) badCalls += 1;
      return approximateTokenCounter(list);
    };
    // Target 0: the newest step already exceeds it, so the older step is never counted.
    await new SlidingWindowCompactor({ cache: null }).compact(messages, 0, counter);
    expect(badCalls).toBe(0);
  });

  test("undefined fields take their defaults; null and empty note disable the note", () => {
    const compactor = new SlidingWindowCompactor({ minKeepSteps: undefined, omissionNote: undefined, cache: undefined });
    expect(compactor.minKeepSteps).toBe(1);
    // The default note, as the README's options table states it.
    expect(compactor.omissionNote).toBe("[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]");
    expect(new SlidingWindowCompactor({ omissionNote: "" }).omissionNote).toBeNull();
    expect(new SlidingWindowCompactor({ cache: null }).cache).toBeNull();
  });
});

describe("compact and compactWithReport arguments", () => {
  const methods = ["compact", "compactWithReport"] as const;

  test.each(methods)("%s: messages not an array is a TypeError naming the value", async (method) => {
    const compactor = new SlidingWindowCompactor();
    const cases: [unknown, string][] = [
      ["hello", '"hello"'],
      [null, "null"],
      [undefined, "undefined"],
      [{ length: 1, 0: new HumanMessage("hi") }, "an object"],
      [new HumanMessage("one message"), "a HumanMessage"],
      [new Set([new HumanMessage("hi")]), "a Set"],
    ];
    for (const [value, shown] of cases) {
      await expectRejects([], () => compactor[method](value as BaseMessage[], 10), TypeError, "`messages`", `got ${shown}`);
    }
  });

  test.each(methods)("%s: an element that is not a BaseMessage is a TypeError naming its index and value", async (method) => {
    const bad: [unknown, string][] = [
      [null, "null"],
      [undefined, "undefined"],
      ["hi", '"hi"'],
      [7, "7"],
      [{ role: "user", content: "hi" }, "an object"],
      [{ type: "human", content: "hi", lc_serializable: true }, "an object"],
      [[new HumanMessage("nested")], "an array of 1"],
    ];
    const compactor = new SlidingWindowCompactor();
    for (const [value, shown] of bad) {
      for (const index of [0, 3, 8]) {
        const messages = conversation();
        messages.splice(index, 0, value as BaseMessage);
        const counted: BaseMessage[] = [];
        const spy: TokenCounter = (list) => {
          counted.push(...list);
          return approximateTokenCounter(list);
        };
        await expectRejects(messages, () => compactor[method](messages, 0, spy), TypeError, `\`messages[${index}]\``, `got ${shown}`);
        // Rejected before a single message was counted.
        expect(counted).toEqual([]);
      }
    }
  });

  test.each(methods)("%s: a targetTokens out of range is a RangeError, one that is not a number a TypeError, naming it, before any counting", async (method) => {
    const bad: [unknown, string, typeof RangeError | typeof TypeError][] = [
      [Number.NaN, "NaN", RangeError],
      [Number.POSITIVE_INFINITY, "Infinity", RangeError],
      [Number.NEGATIVE_INFINITY, "-Infinity", RangeError],
      [-1, "-1", RangeError],
      [-0.5, "-0.5", RangeError],
      ["100", '"100"', TypeError],
      [null, "null", TypeError],
      [undefined, "undefined", TypeError],
      [{}, "an object", TypeError],
      [[100], "an array of 1", TypeError],
      // Shown as written: "got 100" would read like a number that should have been accepted.
      [100n, "100n", TypeError],
    ];
    for (const [target, shown, type] of bad) {
      const messages = conversation();
      let calls = 0;
      const spy: TokenCounter = (list) => {
        calls += 1;
        return approximateTokenCounter(list);
      };
      const error = await expectRejects(messages, () => new SlidingWindowCompactor()[method](messages, target as number, spy), type, "`targetTokens`", `got ${shown}`);
      // toBeInstanceOf(RangeError) would also pass for a subclass; the constructor itself must be the one named.
      expect(error.constructor).toBe(type);
      expect(calls).toBe(0);
    }
  });

  test.each(methods)("%s: a message whose getters throw is a TypeError naming its index, not an unexplained crash", async (method) => {
    // Each field where the rules read it: every message's type and content, an AI message's calls, a human
    // message's metadata (is it a note?), a tool result's id.
    const cases: [string, number[]][] = [
      ["type", [1, 4, 7]],
      ["content", [0, 4, 7]],
      ["tool_calls", [4, 6]],
      ["response_metadata", [1, 3]],
      ["tool_call_id", [5, 7]],
    ];
    for (const [field, indices] of cases) {
      for (const index of indices) {
        const messages = conversation();
        const broken = messages[index]!;
        Object.defineProperty(broken, field, {
          get() {
            throw new Error(`${field} is gone`);
          },
        });
        const counted: BaseMessage[] = [];
        const spy: TokenCounter = (list) => {
          counted.push(...list);
          return 1;
        };
        let caught: unknown;
        try {
          await new SlidingWindowCompactor({ cache: null })[method](messages, 0, spy);
        } catch (error) {
          caught = error;
        }
        // Either the input check or the layout names it: a TypeError, with the index and the getter's own message.
        expect(caught).toBeInstanceOf(TypeError);
        expect((caught as Error).message).toContain(`\`messages[${index}]\``);
        expect((caught as Error).message).toContain(`${field} is gone`);
        expect((caught as Error).message).not.toMatch(/Cannot read properties/);
      }
    }
  });

  test.each(methods)("%s: a tokenCounter that is neither a function nor a model is a TypeError naming it", async (method) => {
    const bad: [unknown, string][] = [
      ["tiktoken", '"tiktoken"'],
      [{}, "an object"],
      [{ getNumTokens: 5 }, "an object"],
      [42, "42"],
      [true, "true"],
    ];
    for (const [counter, shown] of bad) {
      const messages = conversation();
      await expectRejects(messages, () => new SlidingWindowCompactor()[method](messages, 10, counter as TokenCounterLike), TypeError, "`tokenCounter`", `got ${shown}`);
    }
  });
});

describe("counters that fail", () => {
  const BAD_INDEX = 5; // the first tool result
  const isBad = (message: BaseMessage) => message.type === "tool" && message.content === "rain, 8 C";
  /**
   * `compact` counts only what its rules read: at a target the list fits,
   * that is every message. `compactWithReport` counts every message anyway.
   */
  const readsAll = (method: "compact" | "compactWithReport") => (method === "compact" ? Number.MAX_SAFE_INTEGER : 0);

  test.each(["compact", "compactWithReport"] as const)("%s: a counter that throws gives a TokenCounterError with the index and the cause", async (method) => {
    const cause = new Error("tokenizer exploded");
    const counter: TokenCounter = (list) => {
      if (list.some(isBad)) throw cause;
      return approximateTokenCounter(list);
    };
    const messages = conversation();
    const cache = new TokenCountCache();
    const error = await expectRejects(messages, () => new SlidingWindowCompactor({ cache })[method](messages, readsAll(method), counter), TokenCounterError, `index ${BAD_INDEX}`, "tokenizer exploded");
    expect((error as TokenCounterError).index).toBe(BAD_INDEX);
    expect(error.cause).toBe(cause);
    expect(cache.get(counter, messages[BAD_INDEX]!)).toBeUndefined();
  });

  test("a counter that throws a non-Error value is wrapped too, naming the value", async () => {
    const counter: TokenCounter = (list) => {
      if (list.some(isBad)) throw "no tokens today";
      return approximateTokenCounter(list);
    };
    const messages = conversation();
    const error = await expectRejects(messages, () => new SlidingWindowCompactor().compactWithReport(messages, 0, counter), TokenCounterError, '"no tokens today"');
    expect(error.cause).toBe("no tokens today");
  });

  test("an async counter that rejects gives a TokenCounterError with the index and the cause", async () => {
    const cause = new Error("remote tokenizer down");
    const counter: TokenCounter = async (list) => {
      if (list.some(isBad)) throw cause;
      return approximateTokenCounter(list);
    };
    const messages = conversation();
    for (const method of ["compact", "compactWithReport"] as const) {
      const error = await expectRejects(messages, () => new SlidingWindowCompactor({ cache: null })[method](messages, readsAll(method), counter), TokenCounterError, `index ${BAD_INDEX}`, "remote tokenizer down");
      expect((error as TokenCounterError).index).toBe(BAD_INDEX);
      expect(error.cause).toBe(cause);
    }
  });

  test("a model whose getNumTokens throws is wrapped, naming the model", async () => {
    const model = {
      getNumTokens(content: unknown): number {
        if (content === "rain, 8 C") throw new RangeError("bad content");
        return 3;
      },
    };
    const messages = conversation();
    const error = await expectRejects(messages, () => new SlidingWindowCompactor().compactWithReport(messages, 0, model), TokenCounterError, "getNumTokens", `index ${BAD_INDEX}`);
    expect(error.cause).toBeInstanceOf(RangeError);
  });

  test.each(["compact", "compactWithReport"] as const)("%s: counts that are each finite but sum to Infinity are a TokenCounterError naming the message", async (method) => {
    // Half of the largest double: two of them overflow, one does not.
    const huge = Number.MAX_VALUE / 1.5;
    for (const candidate of [
      ((list: BaseMessage[]) => (list.some((m) => m.type === "tool") ? huge : 1)) as TokenCounter,
      (async (list: BaseMessage[]) => (list.some((m) => m.type === "tool") ? huge : 1)) as TokenCounter,
    ]) {
      const messages = conversation();
      // The largest finite target: the newest step fits it, so the rules go on to add the next one.
      const error = await expectRejects(messages, () => new SlidingWindowCompactor({ cache: null })[method](messages, Number.MAX_VALUE, candidate), TokenCounterError, "sum to Infinity");
      expect([5, 7]).toContain((error as TokenCounterError).index);
    }
    // The same counts served from a cache are summed the same way.
    const cache = new TokenCountCache();
    const counter: TokenCounter = (list) => (list.some((m) => m.type === "tool") ? huge : 1);
    const messages = conversation();
    cache.set(counter, messages[5]!, huge);
    cache.set(counter, messages[7]!, huge);
    await expectRejects(messages, () => new SlidingWindowCompactor({ cache })[method](messages, Number.MAX_VALUE, counter), TokenCounterError, "sum to Infinity");
    // One huge count alone is accepted: only the sum is out of range.
    const single = conversation().slice(0, 6);
    await expect(new SlidingWindowCompactor({ cache: null })[method](single, Number.MAX_VALUE, counter)).resolves.toBeDefined();
  });

  test.each<[unknown, new (...args: never[]) => Error, string]>([
    [Number.NaN, RangeError, "NaN"],
    [-1, RangeError, "-1"],
    [Number.POSITIVE_INFINITY, RangeError, "Infinity"],
    ["5", TypeError, '"5"'],
    [undefined, TypeError, "undefined"],
    [null, TypeError, "null"],
    [{ tokens: 5 }, TypeError, "an object"],
  ])("a counter returning %p: %p naming the value and the message, nothing cached", async (value, type, shown) => {
    const counter = ((list: BaseMessage[]) => (list.some(isBad) ? value : approximateTokenCounter(list))) as TokenCounter;
    const asyncCounter = (async (list: BaseMessage[]) => counter(list)) as TokenCounter;
    const model = { getNumTokens: (content: unknown) => (content === "rain, 8 C" ? value : 2) } as TokenCounterLike;
    for (const candidate of [counter, asyncCounter, model]) {
      for (const method of ["compact", "compactWithReport"] as const) {
        const messages = conversation();
        const cache = new TokenCountCache();
        await expectRejects(messages, () => new SlidingWindowCompactor({ cache })[method](messages, readsAll(method), candidate), type, `returned ${shown}`, `index ${BAD_INDEX}`);
        expect(cache.get(candidate as object, messages[BAD_INDEX]!)).toBeUndefined();
        // The same compactor and cache work normally afterwards.
        const report = await new SlidingWindowCompactor({ cache }).compactWithReport(messages, 0);
        expect(report.messages).not.toBeNull();
      }
    }
  });
});

describe("tiktokenCounter", () => {
  test.each<[unknown, string]>([
    ["gpt2", '"gpt2"'],
    ["", '""'],
    ["O200K_BASE", '"O200K_BASE"'],
    ["p50k_base", '"p50k_base"'],
    [42, "42"],
    [null, "null"],
  ])("encoding %p: RangeError naming it", (encoding, shown) => {
    expectThrows(() => tiktokenCounter(encoding as TiktokenEncodingName), RangeError, "encoding", `got ${shown}`);
  });

  test("the default and both shipped encodings work", () => {
    expect(tiktokenCounter()).toBe(tiktokenCounter("o200k_base"));
    // "hello world" is two cl100k tokens ("hello", " world"), plus OpenAI's framing of 4 per message (3 + 1 for the reply).
    expect(tiktokenCounter("cl100k_base")([new HumanMessage("hello world")])).toBe(2 + 4);
    expect(tiktokenCounter()([new HumanMessage("hello world")])).toBe(2 + 4);
  });
});

describe("CompactionHook options", () => {
  test.each<[unknown, string]>([
    [undefined, "undefined"],
    [null, "null"],
    ["8000", '"8000"'],
    [8000, "8000"],
  ])("options %p: TypeError naming it", (options, shown) => {
    expectThrows(() => new CompactionHook(options as CompactionHookOptions), TypeError, "options must be an object", `got ${shown}`);
  });

  test.each<[unknown, string]>([
    [0, "0"],
    [-1, "-1"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    ["8000", '"8000"'],
    [undefined, "undefined"],
  ])("contextWindow %p: RangeError naming it", (contextWindow, shown) => {
    expectThrows(() => new CompactionHook({ contextWindow: contextWindow as number }), RangeError, "`contextWindow`", `got ${shown}`);
  });

  test.each(["compactAt", "compactTo"] as const)("%s outside (0, 1]: RangeError naming it", (name) => {
    for (const [value, shown] of [
      [0, "0"],
      [-0.1, "-0.1"],
      [1.01, "1.01"],
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      ["0.5", '"0.5"'],
      [null, "null"],
    ] as [unknown, string][]) {
      // The other fraction is set so that only `name` is wrong.
      const options = name === "compactAt" ? { compactTo: 0.01, compactAt: value } : { compactAt: 1, compactTo: value };
      expectThrows(() => new CompactionHook({ contextWindow: 1000, ...(options as object) }), RangeError, `\`${name}\``, "(0, 1]", `got ${shown}`);
    }
  });

  test.each([
    [0.5, 0.5],
    [0.5, 0.9],
    [0.3, 0.4],
    [1, 1],
  ])("compactAt %p with compactTo %p: RangeError explaining that it would compact every step", (compactAt, compactTo) => {
    expectThrows(
      () => new CompactionHook({ contextWindow: 1000, compactAt, compactTo }),
      RangeError,
      `\`compactTo\` (${compactTo}) must be below \`compactAt\` (${compactAt})`,
      "would compact on every step",
    );
  });

  test("a compactor or tokenCounter of the wrong type: TypeError naming it", () => {
    expectThrows(() => new CompactionHook({ contextWindow: 100, compactor: {} as SlidingWindowCompactor }), TypeError, "`compactor`", "got an object");
    expectThrows(() => new CompactionHook({ contextWindow: 100, tokenCounter: "tiktoken" as unknown as TokenCounter }), TypeError, "`tokenCounter`", '"tiktoken"');
  });
});

describe("CompactionHook methods", () => {
  const hook = () => new CompactionHook({ contextWindow: 200, compactAt: 0.5, compactTo: 0.25 });

  test.each<[unknown, string, typeof RangeError | typeof TypeError]>([
    [-1, "-1", RangeError],
    [Number.NaN, "NaN", RangeError],
    [Number.POSITIVE_INFINITY, "Infinity", RangeError],
    ["5", '"5"', TypeError],
    [null, "null", TypeError],
    [5n, "5n", TypeError],
  ])("overhead tokens %p: a typed error naming it in targetTokens, estimateTokens, shouldCompact", async (overhead, shown, type) => {
    expectThrows(() => hook().targetTokens(overhead as number), type, "`overheadTokens`", `got ${shown}`);
    const messages = conversation();
    await expectRejects(messages, () => hook().estimateTokens(messages, overhead as number), type, "`overheadTokens`", `got ${shown}`);
    await expectRejects(messages, () => hook().shouldCompact(messages, overhead as number), type, "`overheadTokens`", `got ${shown}`);
  });

  test.each<[unknown, string, typeof RangeError | typeof TypeError]>([
    [-1, "-1", RangeError],
    [Number.NaN, "NaN", RangeError],
    ["5", '"5"', TypeError],
    [{}, "an object", TypeError],
  ])("extraTokens %p: a typed error naming it in overheadTokens and run", async (extraTokens, shown, type) => {
    const messages = conversation();
    await expectRejects(messages, () => hook().overheadTokens({ extraTokens: extraTokens as number }), type, "`extraTokens`", `got ${shown}`);
    await expectRejects(messages, () => hook().run(messages, { extraTokens: extraTokens as number }), type, "`extraTokens`", `got ${shown}`);
  });

  test.each<[unknown, string]>([
    [null, "null"],
    ["tools", '"tools"'],
    [[{ name: "x" }], "an array of 1"],
    [7, "7"],
  ])("run(messages, %p): the overhead argument itself is a TypeError naming it", async (overhead, shown) => {
    const messages = conversation();
    await expectRejects(messages, () => hook().run(messages, overhead as never), TypeError, "`overhead`", `got ${shown}`);
    await expectRejects(messages, () => hook().overheadTokens(overhead as never), TypeError, "`overhead`", `got ${shown}`);
  });

  test.each<[unknown[], number, string]>([
    [[null], 0, "null"],
    [[{}], 0, "an object"],
    [[{ type: "function", function: { name: "f", parameters: {} } }, undefined], 1, "undefined"],
    [[{ name: "ok" }, { function: null }], 1, "an object"],
    [[{ name: "ok" }, { name: "ok2" }, "lookup"], 2, '"lookup"'],
    [[[]], 0, "an array of 0"],
  ])("tools %p: TypeError naming the element's index and value", async (tools, index, shown) => {
    const messages = conversation();
    const error = await expectRejects(messages, () => hook().run(messages, { tools: tools as never }), TypeError, `\`tools[${index}]\``, `got ${shown}`);
    expect(error.message).not.toMatch(/Cannot read properties/);
  });

  test("tools in every shape a provider accepts are counted: LangChain tools, OpenAI definitions, named and built-in tools", async () => {
    const oneTool = async (tool: unknown) => hook().overheadTokens({ tools: [tool as never] });
    expect(await oneTool({ type: "function", function: { name: "weather", description: "d", parameters: { type: "object", properties: {} } } })).toBeGreaterThan(0);
    expect(await oneTool({ name: "weather", input_schema: { type: "object" } })).toBeGreaterThan(0);
    expect(await oneTool({ type: "web_search_preview" })).toBeGreaterThan(0);
  });

  test("tools not an array, or a systemMessage that is neither a message nor a string: TypeError naming it", async () => {
    const messages = conversation();
    await expectRejects(messages, () => hook().run(messages, { tools: "lookup" as never }), TypeError, "`tools`", '"lookup"');
    await expectRejects(messages, () => hook().run(messages, { tools: { name: "x" } as never }), TypeError, "`tools`", "an object");
    await expectRejects(messages, () => hook().run(messages, { systemMessage: 5 as never }), TypeError, "`systemMessage`", "got 5");
    await expectRejects(messages, () => hook().run(messages, { systemMessage: { role: "system", content: "x" } as never }), TypeError, "`systemMessage`", "an object");
  });

  test("bad messages: TypeError naming the value or the index, in estimateTokens, shouldCompact and run", async () => {
    for (const act of [
      (m: BaseMessage[]) => hook().estimateTokens(m),
      (m: BaseMessage[]) => hook().shouldCompact(m),
      (m: BaseMessage[]) => hook().run(m),
    ]) {
      await expectRejects([], () => act("hello" as never), TypeError, "`messages`", '"hello"');
      const messages = conversation();
      messages.splice(2, 0, { role: "user", content: "hi" } as never);
      await expectRejects(messages, () => act(messages), TypeError, "`messages[2]`", "an object");
    }
  });

  test("a failing counter in the hook is a TokenCounterError and leaves the messages untouched", async () => {
    const cause = new Error("no");
    const failing = new CompactionHook({
      contextWindow: 100,
      tokenCounter: (list) => {
        if (list.some((m) => m.type === "tool")) throw cause;
        return 1;
      },
    });
    const messages = conversation();
    const error = await expectRejects(messages, () => failing.run(messages), TokenCounterError, "no");
    expect(error.cause).toBe(cause);
  });
});

describe("earlier notes whose metadata a store mangled", () => {
  test.each<[unknown, number]>([
    ["7", 7],
    ["", 0],
    ["many", 0],
    [-3, 0],
    [2.5, 0],
    [Number.NaN, 0],
    [undefined, 0],
  ])("removed_messages %p folds as %p, never as NaN or a joined string", async (stored, folded) => {
    const note = new HumanMessage({
      content: "[earlier messages were removed]",
      response_metadata: { compaction: { strategy: "sliding_window", removed_messages: stored, kept_messages: "3" } },
    });
    const messages = [new SystemMessage("sys"), note, ...conversation().slice(1)];
    const before = snapshotMessages(messages);
    const report = await new SlidingWindowCompactor().compactWithReport(messages, 0);
    // Removed: the mangled note (folded), the old turn (2) and the older step (2).
    const meta = (report.note!.response_metadata as { compaction: { removed_messages: unknown } }).compaction;
    expect(meta.removed_messages).toBe(folded + 4);
    expect(report.note!.content).toContain(String(folded + 4));
    expect(report.removed).toContain(note);
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });
});

describe("TokenCountCache.set", () => {
  test.each<[unknown, typeof RangeError | typeof TypeError, string]>([
    [Number.NaN, RangeError, "NaN"],
    [-1, RangeError, "-1"],
    [Number.POSITIVE_INFINITY, RangeError, "Infinity"],
    ["5", TypeError, '"5"'],
    [null, TypeError, "null"],
    [5n, TypeError, "5n"],
  ])("a count of %p is refused naming it, and nothing is cached", (count, type, shown) => {
    const cache = new TokenCountCache();
    const message = new HumanMessage("hello");
    expectThrows(() => cache.set(approximateTokenCounter, message, count as number), type, "`count`", `got ${shown}`);
    // A compaction through this cache would have read the bad count back as the message's size.
    expect(cache.get(approximateTokenCounter, message)).toBeUndefined();
  });

  test("a counter key or a message that is no object is a TypeError naming it", () => {
    const cache = new TokenCountCache();
    expectThrows(() => cache.set("tiktoken" as never, new HumanMessage("hi"), 3), TypeError, "`counterKey` must be an object", '"tiktoken"');
    expectThrows(() => cache.set(approximateTokenCounter, null as never, 3), TypeError, "`message` must be an object", "got null");
    // Counts of 0 and fractions are counts.
    cache.set(approximateTokenCounter, new HumanMessage("hi"), 0);
    const message = new HumanMessage("hi");
    cache.set(approximateTokenCounter, message, 2.5);
    expect(cache.get(approximateTokenCounter, message)).toBe(2.5);
  });
});

describe("CompactionHook.overheadTokens: tools that cannot be serialized", () => {
  test("a schema with a BigInt or a cycle is a TypeError naming `tools`, with the cause", async () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.self = cyclic;
    for (const tool of [{ name: "lookup", parameters: { type: "integer", default: 1n } }, { name: "lookup", parameters: cyclic }]) {
      const error = await expectRejects(
        [],
        () => new CompactionHook({ contextWindow: 1000 }).overheadTokens({ tools: [tool as never] }),
        TypeError,
        "`tools` cannot be turned into the JSON schemas a request carries",
      );
      expect(error.cause).toBeInstanceOf(TypeError);
    }
  });
});

describe("applyCompactionView", () => {
  const history = (): BaseMessage[] => [
    new SystemMessage({ content: "sys", id: "s1" }),
    new HumanMessage({ content: "old question", id: "h1" }),
    new AIMessage({ content: "old answer", id: "a1" }),
    new HumanMessage({ content: "the task", id: "h2" }),
  ];
  const note = new HumanMessage("[2 earlier messages were removed]");

  test.each<[unknown, string]>([
    ["x", '"x"'],
    [null, "null"],
    [undefined, "undefined"],
    [{ length: 1, 0: new HumanMessage("hi") }, "an object"],
    [new HumanMessage("one message"), "a HumanMessage"],
  ])("messages %p: TypeError naming it, whatever the view", (messages, shown) => {
    for (const view of [null, undefined, { hiddenIds: ["h1"] }]) {
      expectThrows(() => applyCompactionView(messages as never, view), TypeError, "`messages` must be an array of BaseMessage", `got ${shown}`);
    }
  });

  test("an element that is no message: TypeError naming its index and value", () => {
    for (const view of [null, { hiddenIds: ["h1"] }]) {
      const messages = [...history(), { role: "user", content: "hi" }];
      expectThrows(() => applyCompactionView(messages as never, view), TypeError, "`messages[4]` must be a BaseMessage", "got an object");
    }
  });

  test.each<[string, unknown, string, string]>([
    ["a number", 5, "`view` must be a CompactionView", "got 5"],
    ["a string", "hidden", "`view` must be a CompactionView", 'got "hidden"'],
    ["an array", [], "`view` must be a CompactionView", "got an array of 0"],
    ["no hiddenIds", {}, "`view.hiddenIds` must be an array of message ids", "got undefined"],
    ["hiddenIds a string", { hiddenIds: "h1" }, "`view.hiddenIds` must be an array of message ids", 'got "h1"'],
    ["a hidden id that is no string", { hiddenIds: ["h1", 7] }, "`view.hiddenIds[1]` must be a message id (a string)", "got 7"],
    ["rewritten an object", { hiddenIds: [], rewritten: {} }, "`view.rewritten` must be an array of BaseMessage", "got an object"],
    ["a stand-in that is no message", { hiddenIds: [], rewritten: [{ id: "a1", content: "x" }] }, "`view.rewritten[0]` must be a BaseMessage", "got an object"],
    ["added an object", { hiddenIds: [], added: { message: note, afterId: null } }, "`view.added` must be an array of { message, afterId }", "got an object"],
    ["a bare message as an addition", { hiddenIds: [], added: [note] }, "`view.added[0].message` must be a BaseMessage", "got undefined"],
    ["an addition without its anchor", { hiddenIds: [], added: [{ message: note }] }, "`view.added[0].afterId` must be a message id (a string) or null", "got undefined"],
    ["an addition of a number", { hiddenIds: [], added: [5] }, "`view.added[0]` must be an object { message, afterId }", "got 5"],
    ["an added message that is no message", { hiddenIds: [], added: [{ message: "note", afterId: null }] }, "`view.added[0].message` must be a BaseMessage", 'got "note"'],
    ["an anchor that is no id", { hiddenIds: [], added: [{ message: note, afterId: 3 }] }, "`view.added[0].afterId` must be a message id (a string) or null", "got 3"],
    ["an old-format note that is no message", { hiddenIds: ["h1"], note: "removed", noteAfterId: null }, "`view.note` must be a BaseMessage", 'got "removed"'],
    ["an old-format anchor that is no id", { hiddenIds: ["h1"], note, noteAfterId: 1 }, "`view.noteAfterId` must be a message id (a string) or null", "got 1"],
  ])("a view with %s: TypeError naming the bad part", (_label, view, part, shown) => {
    const messages = history();
    const before = snapshotMessages(messages);
    expectThrows(() => applyCompactionView(messages, view as CompactionView), TypeError, part, shown);
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });

  test("null, undefined, the current and the old format are read", () => {
    const messages = history();
    expect(applyCompactionView(messages, null)).toEqual(messages);
    expect(applyCompactionView(messages, undefined)).toEqual(messages);
    expect(applyCompactionView(messages, { hiddenIds: ["h1", "a1"], added: [{ message: note, afterId: "s1" }] })).toEqual([messages[0], note, messages[3]]);
    expect(applyCompactionView(messages, { hiddenIds: ["h1", "a1"], note, noteAfterId: "s1" })).toEqual([messages[0], note, messages[3]]);
    expect(applyCompactionView(messages, { hiddenIds: ["h1"], note: null, noteAfterId: null })).toEqual([messages[0], messages[2], messages[3]]);
    expect(applyCompactionView(messages, { hiddenIds: ["h1"], note: null })).toEqual([messages[0], messages[2], messages[3]]);
  });
});

describe("viewOfShown (the cut read back from what the model was shown)", () => {
  test("a history or a shown list that is no list of messages: TypeError naming it", () => {
    const history = [new HumanMessage({ content: "q", id: "h1" })];
    expectThrows(() => viewOfShown("history" as never, history), TypeError, "`history` must be an array of BaseMessage", 'got "history"');
    expectThrows(() => viewOfShown(history, null as never), TypeError, "`shown` must be an array of BaseMessage", "got null");
    // A graph channel holding something else than messages: named, not taken for an addition to show the model.
    expectThrows(() => viewOfShown(history, [history[0]!, { role: "user", content: "hi" }] as never), TypeError, "`shown[1]` must be a BaseMessage", "got an object");
  });
});

describe("CompactingChatMessageHistory appends: a value that is no message is refused and nothing is stored", () => {
  const BAD: [unknown, string][] = [
    [{ role: "user", content: "hi" }, "an object"],
    [{ type: "human", content: "hi", lc_serializable: true }, "an object"],
    ["hi", '"hi"'],
    [null, "null"],
    [undefined, "undefined"],
    [[new HumanMessage("nested")], "an array of 1"],
  ];
  const keys = (messages: readonly BaseMessage[]) => comparableForm(messages);
  const TARGET = 60;
  let redisUp = false;
  const clients: ReturnType<typeof createClient>[] = [];
  const sessions: string[] = [];

  beforeAll(async () => {
    redisUp = await requireServer("Redis", REDIS_URL);
  });
  afterAll(async () => {
    const open = clients.filter((client) => client.isOpen);
    if (open.length > 0 && sessions.length > 0) await open[0]!.del(sessions);
    await Promise.all(open.map((client) => client.quit()));
  });

  /** The stores the appends are tried on: in memory always, Redis when it is up. */
  async function stores(): Promise<{ name: string; store: InMemoryChatMessageHistory | RedisChatMessageHistory }[]> {
    const made: { name: string; store: InMemoryChatMessageHistory | RedisChatMessageHistory }[] = [{ name: "in memory", store: new InMemoryChatMessageHistory() }];
    if (redisUp) {
      const client = createClient({ url: REDIS_URL });
      client.on("error", () => undefined);
      await client.connect();
      clients.push(client);
      const sessionId = `lcc-test:bad-appends:${process.pid}:${sessions.length}`;
      sessions.push(sessionId);
      made.push({ name: "Redis", store: new RedisChatMessageHistory({ sessionId, client }) });
    }
    for (const { store } of made) await store.addMessages(conversation());
    return made;
  }

  /** Runs `act`, expects it to reject with `type` and every fragment, and the store to hold what it held; then a read still works. */
  async function expectRefused(store: InMemoryChatMessageHistory | RedisChatMessageHistory, act: (history: CompactingChatMessageHistory) => Promise<unknown>, type: typeof TypeError, ...fragments: string[]) {
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET });
    const before = keys(await store.getMessages());
    let caught: unknown;
    try {
      await act(history);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(type);
    for (const fragment of fragments) expect((caught as Error).message).toContain(fragment);
    expect(keys(await store.getMessages())).toEqual(before);
    // The session is not stuck: the next read compacts as before.
    expect((await history.getMessages()).some((message) => isOmissionNote(message))).toBe(true);
  }

  test("addMessage(value): a TypeError naming it", async () => {
    for (const { store } of await stores()) {
      for (const [value, shown] of BAD) {
        await expectRefused(store, (history) => history.addMessage(value as never), TypeError, "`message` must be a BaseMessage", `got ${shown}`);
      }
    }
  });

  test("addMessages with one bad element: a TypeError naming its index and value, and none of the good ones before it is stored", async () => {
    for (const { store } of await stores()) {
      for (const [value, shown] of BAD) {
        for (const index of [0, 2]) {
          const list: unknown[] = [new HumanMessage("first good one"), new AIMessage("second good one")];
          list.splice(index, 0, value);
          await expectRefused(store, (history) => history.addMessages(list as never), TypeError, `\`messages[${index}]\` must be a BaseMessage`, `got ${shown}`);
        }
      }
    }
  });

  test("addMessages of something that is no array: a TypeError naming it", async () => {
    for (const { store } of await stores()) {
      for (const [value, shown] of [
        [new HumanMessage("one message"), "a HumanMessage"],
        ["hi", '"hi"'],
        [null, "null"],
      ] as [unknown, string][]) {
        await expectRefused(store, (history) => history.addMessages(value as never), TypeError, "`messages` must be an array of BaseMessage", `got ${shown}`);
      }
    }
  });

  test("a message whose getters throw: a TypeError naming it and the getter's error", async () => {
    const broken = new HumanMessage("broken");
    Object.defineProperty(broken, "content", {
      get() {
        throw new Error("content is gone");
      },
    });
    for (const { store } of await stores()) {
      await expectRefused(store, (history) => history.addMessage(broken), TypeError, "`message` cannot be read as a BaseMessage", "content is gone");
    }
  });

  test("addUserMessage and addAIMessage take a string: anything else is a TypeError naming it; a string is stored as the message", async () => {
    for (const { store } of await stores()) {
      for (const method of ["addUserMessage", "addAIMessage"] as const) {
        for (const [value, shown] of [
          [42, "42"],
          [{ role: "user", content: "hi" }, "an object"],
          [null, "null"],
        ] as [unknown, string][]) {
          await expectRefused(store, (history) => history[method](value as never), TypeError, "`message` must be a string", `got ${shown}`);
        }
      }
      const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET });
      await history.addUserMessage("a question");
      await history.addAIMessage("an answer");
      const stored = (await store.getMessages()).slice(-2);
      expect(stored.map((message) => [message.type, message.text])).toEqual([
        ["human", "a question"],
        ["ai", "an answer"],
      ]);
    }
  });

  test("the list addMessages checked is the list it stores, even if the caller changes its array while the append waits its turn", async () => {
    const store = new InMemoryChatMessageHistory();
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: 10_000 });
    const list: BaseMessage[] = [new HumanMessage("one")];
    const first = history.addMessages([new HumanMessage("zero")]);
    const second = history.addMessages(list);
    list.push({ role: "user", content: "sneaked in" } as never);
    await Promise.all([first, second]);
    // toStrictEqual: toEqual would pass over the `undefined` text of a plain object stored third.
    expect((await store.getMessages()).map((message) => message.text)).toStrictEqual(["zero", "one"]);
  });
});
