/**
 * This package may be loaded twice in one process (its ES-module and its
 * CommonJS build), next to two copies of `@langchain/core`. So classes a
 * user's copy constructs are recognised by their methods, never by
 * `instanceof`, and the shared token-count cache is one per process. The
 * packed builds themselves are exercised in `__tests__/consumers/` and
 * `scripts/check-exports.mjs`; these tests pin the rules on the sources.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import {
  approximateTokenCounter,
  CompactingChatMessageHistory,
  CompactionPipeline,
  isOmissionNote,
  SlidingWindowCompactor,
  sharedTokenCountCache,
  SummarizationCompactor,
  TokenCountCache,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import { InMemoryStore } from "@langchain/langgraph";
import { describeValue } from "../../src/errors";

/** A store as another copy of `@langchain/core` would make it: the methods, none of this copy's classes. */
class InMemoryForeignHistory {
  lc_namespace = ["langchain", "stores", "message", "in_memory"];
  messages: BaseMessage[] = [];
  async getMessages(): Promise<BaseMessage[]> {
    return [...this.messages];
  }
  async addMessage(message: BaseMessage): Promise<void> {
    this.messages.push(message);
  }
  async addMessages(messages: BaseMessage[]): Promise<void> {
    this.messages.push(...messages);
  }
  async clear(): Promise<void> {
    this.messages = [];
  }
}

const long = (): BaseMessage[] => [new HumanMessage("a ".repeat(400)), new AIMessage("b ".repeat(400)), new HumanMessage("task")];

describe("stores and caches from another copy are recognised by their methods", () => {
  it("wraps a store that is no instance of this copy's history classes, and compacts it", async () => {
    const store = new InMemoryForeignHistory();
    const history = new CompactingChatMessageHistory({ history: store as never, targetTokens: 20, mode: "commit" });
    await history.addMessages(long());
    const read = await history.getMessages();
    expect(read.some(isOmissionNote)).toBe(true);
    expect(read.at(-1)?.text).toBe("task");
    expect(store.messages.some(isOmissionNote)).toBe(true);
  });

  it.each(["getMessages", "addMessage", "addMessages", "clear"] as const)("refuses a store without `%s`, naming it", (method) => {
    const store = new InMemoryForeignHistory();
    Object.defineProperty(store, method, { value: undefined });
    expect(() => new CompactingChatMessageHistory({ history: store as never, targetTokens: 20 })).toThrow(
      new TypeError("`history` must be a BaseChatMessageHistory or BaseListChatMessageHistory, got an InMemoryForeignHistory"),
    );
  });

  it("uses a TokenCountCache made by another copy of the package", async () => {
    let ForeignCache: typeof TokenCountCache | undefined;
    jest.isolateModules(() => {
      ForeignCache = (require("../../src/counting/cache") as typeof import("../../src/counting/cache")).TokenCountCache;
    });
    expect(ForeignCache).not.toBe(TokenCountCache);
    const cache = new ForeignCache!();
    const compactor = new SlidingWindowCompactor({ cache });
    expect(compactor.cache).toBe(cache);
    const messages = long();
    // A counter of the user's own.
    const counter = (list: BaseMessage[]) => approximateTokenCounter(list);
    await compactor.compact(messages, 20, counter);
    expect(cache.get(counter, messages[2]!)).toBe(approximateTokenCounter([messages[2]!]));
    // Every other compactor takes it too (and refuses what is not one), by the same check.
    const store = new InMemoryStore();
    const others: [string, (cache: unknown) => unknown][] = [
      ["ToolResultPruningCompactor", (c) => new ToolResultPruningCompactor({ cache: c as TokenCountCache })],
      ["SummarizationCompactor", (c) => new SummarizationCompactor({ model: { invoke: async () => new AIMessage("s") } as never, cache: c as TokenCountCache })],
      ["ToolResultOffloadCompactor", (c) => new ToolResultOffloadCompactor({ store, cache: c as TokenCountCache })],
      ["CompactionPipeline", (c) => new CompactionPipeline([new SlidingWindowCompactor()], { cache: c as TokenCountCache })],
    ];
    for (const [name, make] of others) {
      expect({ name, cache: (make(cache) as { cache: unknown }).cache }).toEqual({ name, cache });
      expect(() => make(new Map())).toThrow(TypeError);
    }
  });

  const withoutMethod = (method: "get" | "set" | "clear"): unknown => {
    const cache = new TokenCountCache();
    Object.defineProperty(cache, method, { value: undefined });
    return cache;
  };
  const noBrand = { get: (): undefined => undefined, set: (): undefined => undefined, clear: (): undefined => undefined };
  it.each<[string, unknown]>([
    ["a Map (it has get, set and clear)", new Map()],
    ["an object with the methods but no brand", noBrand],
    ["a TokenCountCache without `get`", withoutMethod("get")],
    ["a TokenCountCache without `set`", withoutMethod("set")],
    ["a TokenCountCache without `clear`", withoutMethod("clear")],
  ])("refuses %s", (_label, cache) => {
    expect(() => new SlidingWindowCompactor({ cache: cache as unknown as TokenCountCache })).toThrow(TypeError);
  });
});

describe("one shared token-count cache per process", () => {
  it("lives on globalThis under a registry symbol, so a second copy of the module finds the same cache", () => {
    const key = Symbol.for("langchain-compaction.sharedTokenCountCache.v1");
    expect((globalThis as Record<symbol, unknown>)[key]).toBe(sharedTokenCountCache);
    let second: unknown;
    jest.isolateModules(() => {
      second = (require("../../src/counting/cache") as typeof import("../../src/counting/cache")).sharedTokenCountCache;
    });
    let secondClass: unknown;
    jest.isolateModules(() => {
      secondClass = (require("../../src/counting/cache") as typeof import("../../src/counting/cache")).TokenCountCache;
    });
    // Really a second copy of the module (its own class), yet the same cache object.
    expect(secondClass).not.toBe((require("../../src/counting/cache") as typeof import("../../src/counting/cache")).TokenCountCache);
    expect(second).toBe(sharedTokenCountCache);
  });
});

describe("describeValue", () => {
  it.each([
    [new (class InMemoryChatMessageHistory {})(), "an InMemoryChatMessageHistory"],
    [new (class Element {})(), "an Element"],
    [new Map(), "a Map"],
    [new (class RedisChatMessageHistory {})(), "a RedisChatMessageHistory"],
    [{}, "an object"],
  ])("%p is %s", (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});
