/**
 * Rules of `CompactingChatMessageHistory` that a mutation run of the history suites showed unpinned (TESTING.md): each bad option is a typed error naming the value, the compactor gets the wrapper's signal exactly
 * when there is one, a read leaves no listener or timer behind, and single-writer mode finishes a rewrite that
 * failed part way from whichever state the failure left, without writing twice.
 */
import { getEventListeners } from "node:events";
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, CompactingChatMessageHistory, inMemoryRewrite, isOmissionNote, SlidingWindowCompactor } from "../../src";
import type { InMemoryHistoryLike } from "../../src";
import type { CompactionReport, CompactOptions, Compactor, TokenCounterLike } from "../../src";
import { comparableForm } from "../../src/integrations/store-rewrite";

const TARGET = 300;
const keys = (messages: readonly BaseMessage[]) => comparableForm(messages);

/** A system prompt and `turns` question/answer pairs of about 25 tokens each: 12 turns need compacting to TARGET. */
function conversation(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You plan train journeys.")];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage(`leg ${turn}: which train leaves after ${"nine in the morning ".repeat(2)}?`));
    messages.push(new AIMessage(`leg ${turn}: the ${"ten fifteen from platform four ".repeat(2)}`));
  }
  return messages;
}

/** A store with no atomic rewrite whose clear() and addMessages() can be made to fail once, and that counts its clears. */
class BreakableStore extends BaseListChatMessageHistory {
  lc_namespace = ["tests", "breakable"];
  stored: BaseMessage[] = [];
  clears = 0;
  /** The next clear() throws before emptying anything. */
  failNextClear = false;
  /** The next addMessages() throws after adding this many of its messages (all of them, then throws, when at least their number). */
  failNextAddAfter: number | null = null;

  async getMessages() {
    return [...this.stored];
  }
  async addMessage(message: BaseMessage) {
    this.stored.push(message);
  }
  override async addMessages(messages: BaseMessage[]) {
    const limit = this.failNextAddAfter;
    this.failNextAddAfter = null;
    for (const [index, message] of messages.entries()) {
      if (index === limit) throw new Error(`store failed after ${index} messages`);
      this.stored.push(message);
    }
    if (limit !== null) throw new Error("store failed after writing every message");
  }
  override async clear() {
    if (this.failNextClear) {
      this.failNextClear = false;
      throw new Error("clear failed");
    }
    this.clears += 1;
    this.stored = [];
  }
}

/** The sliding window, recording the options object each call is given. */
class OptionsRecorder implements Compactor {
  readonly given: (CompactOptions | undefined)[] = [];
  private readonly inner = new SlidingWindowCompactor();
  compact(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    this.given.push(options);
    return this.inner.compact(messages, target, counter, options);
  }
  compactWithReport(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions): Promise<CompactionReport> {
    this.given.push(options);
    return this.inner.compactWithReport(messages, target, counter, options);
  }
}

async function memory(messages: BaseMessage[]): Promise<InMemoryChatMessageHistory> {
  const store = new InMemoryChatMessageHistory();
  await store.addMessages(messages);
  return store;
}

describe("the options of CompactingChatMessageHistory", () => {
  const store = new InMemoryChatMessageHistory();
  const make = (options: object) => () => new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, ...options } as never);

  test.each([
    [null, "null"],
    ["fast", '"fast"'],
    [7, "7"],
  ])("options %p are a TypeError naming them", (options, named) => {
    const build = () => new CompactingChatMessageHistory(options as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(`CompactingChatMessageHistory options must be an object, got ${named}`);
  });

  test("`history` must have every store method, as functions; a function carrying them is not a store", () => {
    const methods = { getMessages: async () => [], addMessage: async () => undefined, addMessages: async () => undefined, clear: async () => undefined };
    const cases: [unknown, string][] = [
      [null, "null"],
      ["redis", '"redis"'],
      [Object.assign(function storeLike() {}, methods), "function storeLike"],
      [{ getMessages: methods.getMessages, addMessage: methods.addMessage }, "an object"],
      [{ ...methods, clear: "yes" }, "an object"],
    ];
    for (const [history, named] of cases) {
      const build = () => new CompactingChatMessageHistory({ history: history as never, targetTokens: TARGET });
      expect(build).toThrow(TypeError);
      expect(build).toThrow(`\`history\` must be a BaseChatMessageHistory or BaseListChatMessageHistory, got ${named}`);
    }
    expect(() => new CompactingChatMessageHistory({ history: methods as never, targetTokens: TARGET })).not.toThrow();
  });

  test("mode, onEvict and rewrite name the bad value", () => {
    expect(make({ mode: "commits" })).toThrow(RangeError);
    expect(make({ mode: "commits" })).toThrow('`mode` must be "view" or "commit", got "commits"');
    expect(make({ onEvict: "archive" })).toThrow(TypeError);
    expect(make({ onEvict: "archive" })).toThrow('`onEvict` must be a function, got "archive"');
    expect(make({ mode: "commit", rewrite: 5 })).toThrow(TypeError);
    expect(make({ mode: "commit", rewrite: 5 })).toThrow('`rewrite` must be a StoreRewrite function or "single-writer-clear-and-add", got 5');
  });

  const TIMER_LIMIT = "a positive number of milliseconds of at most 2147483647 (the longest timer Node keeps)";

  test.each([
    [0, "0"],
    [-5, "-5"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [Number.NaN, "NaN"],
    // Node would clamp these timers to 1 ms, and every read would be abandoned at once.
    [2 ** 31, "2147483648"],
    [Number.MAX_SAFE_INTEGER, "9007199254740991"],
  ])("compactionTimeoutMs %p is a RangeError naming it", (value, named) => {
    expect(make({ compactionTimeoutMs: value })).toThrow(RangeError);
    expect(make({ compactionTimeoutMs: value })).toThrow(`\`compactionTimeoutMs\` must be ${TIMER_LIMIT}, got ${named}`);
  });

  test.each([
    ["100", '"100"'],
    [null, "null"],
    [100n, "100n"],
  ])("compactionTimeoutMs %p, not a number, is a TypeError naming it", (value, named) => {
    expect(make({ compactionTimeoutMs: value })).toThrow(TypeError);
    expect(make({ compactionTimeoutMs: value })).toThrow(`\`compactionTimeoutMs\` must be ${TIMER_LIMIT}, got ${named}`);
  });

  test("compactionTimeoutMs at Node's longest timer is kept: a read under it compacts instead of being abandoned at once", async () => {
    const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), targetTokens: TARGET, compactionTimeoutMs: 2 ** 31 - 1 });
    expect((await history.getMessages()).some((m) => isOmissionNote(m))).toBe(true);
  });

  test("a signal must be an AbortSignal: not null, a string, an object without addEventListener, or a function", () => {
    const listenerFunction = Object.assign(function notASignal() {}, { addEventListener: () => undefined });
    const cases: [unknown, string][] = [
      [null, "null"],
      ["stop", '"stop"'],
      [{}, "an object"],
      [{ addEventListener: "later" }, "an object"],
      // The compactors' own check wants `aborted` too: a signal they would refuse is refused here, not at the first read.
      [{ addEventListener: () => undefined }, "an object"],
      [listenerFunction, "function notASignal"],
    ];
    for (const [signal, named] of cases) {
      expect(make({ signal })).toThrow(TypeError);
      expect(make({ signal })).toThrow(`\`signal\` must be an AbortSignal, got ${named}`);
    }
    expect(make({ signal: new AbortController().signal })).not.toThrow();
  });

  test("exactly one of targetTokens and contextWindow, and the trigger options only with contextWindow", () => {
    const exactlyOne = "give exactly one of `targetTokens` (a fixed budget) and `contextWindow` (the hook's trigger)";
    expect(() => new CompactingChatMessageHistory({ history: store })).toThrow(exactlyOne);
    expect(make({ contextWindow: 1_000 })).toThrow(exactlyOne);
    for (const option of [{ compactAt: 0.8 }, { compactTo: 0.5 }, { minGainTokens: 10 }]) {
      expect(make(option)).toThrow(TypeError);
      expect(make(option)).toThrow("`compactAt`, `compactTo` and `minGainTokens` go with `contextWindow`, not with `targetTokens`");
    }
    expect(make({ targetTokens: "300" })).toThrow(TypeError);
    expect(make({ targetTokens: "300" })).toThrow('`targetTokens` must be a finite number of tokens of at least 0, got "300"');
    expect(make({ targetTokens: Number.NaN })).toThrow(RangeError);
    expect(make({ tokenCounter: 12 })).toThrow(/`tokenCounter` must be .*got 12/);
  });

  test("commit mode over an unrecognised store lists the three recognised stores and both ways out", () => {
    const build = () => new CompactingChatMessageHistory({ history: new BreakableStore(), targetTokens: TARGET, mode: "commit" });
    expect(build).toThrow(TypeError);
    expect(build).toThrow(
      "(InMemoryChatMessageHistory (@langchain/core), RedisChatMessageHistory (@langchain/redis), PostgresChatMessageHistory (@langchain/community))",
    );
    expect(build).toThrow('pass `rewrite` (a StoreRewrite for this store), or, only if this instance is the session\'s single writer, `rewrite: "single-writer-clear-and-add"`');
  });

  test("the wrapper serializes under its own namespace, not as one of the stores it recognises", () => {
    expect(new CompactingChatMessageHistory({ history: store, targetTokens: TARGET }).lc_namespace).toEqual(["langchain_compaction", "chat_history"]);
  });
});

describe("what the compactor is given", () => {
  test("no signal and no timeout: the compactor is called with no options at all", async () => {
    const compactor = new OptionsRecorder();
    const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), targetTokens: TARGET, compactor });
    expect((await history.getMessages()).some((m) => isOmissionNote(m))).toBe(true);
    expect(compactor.given).toEqual([undefined]);
  });

  test.each([
    ["targetTokens", { targetTokens: TARGET }],
    ["contextWindow", { contextWindow: 400 }],
  ])("with %s, a timeout or a signal reaches the compactor as a live AbortSignal", async (_label, budget) => {
    for (const bound of [{ compactionTimeoutMs: 60_000 }, { signal: new AbortController().signal }]) {
      const compactor = new OptionsRecorder();
      const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), ...budget, ...bound, compactor });
      expect((await history.getMessages()).some((m) => isOmissionNote(m))).toBe(true);
      expect(compactor.given).toHaveLength(1);
      const signal = compactor.given[0]?.signal;
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(signal!.aborted).toBe(false);
    }
  });
});

describe("a read leaves nothing behind on a long-lived signal or the event loop", () => {
  test("the abort listener is removed after each read, whether it compacted or failed", async () => {
    const controller = new AbortController();
    let failing = false;
    const counter = (messages: BaseMessage[]) => {
      if (failing) throw new Error("counter down");
      return messages.reduce((sum, message) => sum + message.text.length / 4, 0);
    };
    const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), targetTokens: TARGET, tokenCounter: counter, signal: controller.signal });
    for (let read = 0; read < 3; read += 1) await history.getMessages();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    failing = true;
    await expect(history.getMessages()).rejects.toThrow("counter down");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  test("an abort during the compaction reaches it: the read rejects with the signal's reason", async () => {
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hanging = () => {
      started();
      return new Promise<number>(() => undefined);
    };
    const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), targetTokens: TARGET, tokenCounter: hanging, signal: controller.signal });
    const reading = history.getMessages();
    await running;
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort(new Error("user closed the tab"));
    await expect(reading).rejects.toThrow("user closed the tab");
  });

  test("the timeout's timer is cleared when the read finishes first", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const history = new CompactingChatMessageHistory({ history: await memory(conversation(12)), targetTokens: TARGET, compactionTimeoutMs: 600_000 });
    const before = timers();
    expect((await history.getMessages()).some((m) => isOmissionNote(m))).toBe(true);
    expect(timers()).toBe(before);
  });
});

describe("single-writer mode finishes a rewrite that failed part way", () => {
  /** A store of 12 turns, wrapped in single-writer commit mode, after a read that failed as `breakIt` set up. */
  async function failedCommit(breakIt: (store: BreakableStore) => void) {
    const store = new BreakableStore();
    store.stored = conversation(12);
    const original = [...store.stored];
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", rewrite: "single-writer-clear-and-add" });
    breakIt(store);
    await expect(history.getMessages()).rejects.toThrow(/failed/);
    expect(history.hasPendingRewrite).toBe(true);
    const owed = [...history.pendingRewrite!];
    expect(owed.length).toBeLessThan(original.length);
    expect(owed.some((m) => isOmissionNote(m))).toBe(true);
    return { store, history, original, owed };
  }

  test("clear() failed: the store still holds the old list, and the next append writes the compacted list, then itself", async () => {
    const { store, history, original, owed } = await failedCommit((s) => (s.failNextClear = true));
    expect(keys(store.stored)).toEqual(keys(original));
    const reply = new AIMessage("the reply");
    await history.addMessage(reply);
    expect(keys(store.stored)).toEqual(keys([...owed, reply]));
    expect(history.hasPendingRewrite).toBe(false);
  });

  test("addMessages() failed part way: the next read completes the list and returns it", async () => {
    const { store, history, owed } = await failedCommit((s) => (s.failNextAddAfter = 3));
    expect(keys(store.stored)).toEqual(keys(owed.slice(0, 3)));
    expect(keys(await history.getMessages())).toEqual(keys(owed));
    expect(keys(store.stored)).toEqual(keys(owed));
    expect(history.hasPendingRewrite).toBe(false);
  });

  test("addMessages() failed part way and a message was appended behind the partial list: it stays after the completed list", async () => {
    const { store, history, owed } = await failedCommit((s) => (s.failNextAddAfter = 2));
    const stray = new HumanMessage("appended directly to the store meanwhile");
    store.stored.push(stray);
    await history.addMessage(new AIMessage("the reply"));
    expect(keys(store.stored)).toEqual(keys([...owed, stray, new AIMessage("the reply")]));
  });

  test.each([false, true])("addMessages() wrote everything, then failed: nothing is written again (a message appended since: %p)", async (withStray) => {
    const { store, history, owed } = await failedCommit((s) => (s.failNextAddAfter = Number.MAX_SAFE_INTEGER));
    expect(keys(store.stored)).toEqual(keys(owed));
    const stray = withStray ? [new HumanMessage("appended directly to the store meanwhile")] : [];
    store.stored.push(...stray);
    const clears = store.clears;
    await history.addMessage(new AIMessage("the reply"));
    expect(store.clears).toBe(clears);
    expect(keys(store.stored)).toEqual(keys([...owed, ...stray, new AIMessage("the reply")]));
    expect(history.hasPendingRewrite).toBe(false);
  });

  test("a store whose oldest messages changed between the two reads is left as it is", async () => {
    const store = new BreakableStore();
    store.stored = conversation(12);
    const replaced = [new SystemMessage("another writer's list")];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      rewrite: "single-writer-clear-and-add",
      onEvict: () => void (store.stored = [...replaced]),
    });
    expect(keys(await history.getMessages())).toEqual(keys(replaced));
    expect(keys(store.stored)).toEqual(keys(replaced));
    expect(store.clears).toBe(0);
  });
});

describe("targetTokens in commit mode: a rewrite leaves room", () => {
  test("a store over its target is compacted to 60% of it, so it is rewritten every few exchanges, not at each", async () => {
    const store = new InMemoryChatMessageHistory();
    let rewrites = 0;
    const real = inMemoryRewrite(store as unknown as InMemoryHistoryLike);
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: 2_000,
      mode: "commit",
      rewrite: async (expected, next, options) => {
        rewrites += 1;
        return real(expected, next, options);
      },
    });
    const exchanges = 50;
    for (let turn = 0; turn < exchanges; turn += 1) {
      await history.addMessages([new HumanMessage(`question ${turn}: ${"what about tomorrow? ".repeat(6)}`), new AIMessage(`answer ${turn}: ${"sunny and mild. ".repeat(8)}`)]);
      const read = await history.getMessages();
      expect(approximateTokenCounter(read)).toBeLessThanOrEqual(2_000 + 200); // within the target (the note aside)
    }
    // Each exchange is about 60 tokens: the 800 tokens a rewrite frees last a dozen exchanges.
    expect(rewrites).toBeGreaterThan(0);
    expect(rewrites).toBeLessThanOrEqual(exchanges / 8);
  });
});
