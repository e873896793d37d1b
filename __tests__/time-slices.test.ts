/**
 * Issue 31 §5: the event loop keeps turning. Long compactions run in time slices (src/time-slices.ts) that yield
 * to the event loop with a macrotask; these tests count turns of the loop, never time:
 *
 * - a `setImmediate` scheduled just before a long compaction runs before it resolves, and keeps running during it;
 * - results are the same with slicing off (`setSliceMs(Infinity)`, one go, as before) and at its most (`setSliceMs(0)`,
 *   a yield at every check, so every pass is stopped and run again as often as it can be), on random histories,
 *   every stage and counter;
 * - an asynchronous counter is still called once per message, all at once; a long text in the newest message does
 *   not make a lazy compaction count the whole history;
 * - a long list laid out in slices is laid out as in one go, also while another layout of it runs.
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import {
  approximateTokenCounter,
  CompactingChatMessageHistory,
  CompactionPipeline,
  SlidingWindowCompactor,
  tiktokenCounter,
  TokenCountCache,
  ToolResultPruningCompactor,
} from "../src";
import type { CompactionReport, Compactor, TokenCounterLike } from "../src";
import { freshLayout, layoutCheckedConversationInSlices } from "../src/messages/layout";
import { forgetRememberedLists } from "../src/messages/prefix-memory";
import { setSliceMs } from "../src/time-slices";
import { agentConversation, BASE64, randomString, seededRandom, withNewestResult } from "../bench/conversations";
import { assertOnSeedsAsync } from "./support/seeds";


/** Counts turns of the event loop (`setImmediate` callbacks) from now until `stop()`. */
function turnCounter(): { stop(): number; firstRan: () => boolean } {
  let turns = 0;
  let running = true;
  let first = false;
  const turn = () => {
    if (!running) return;
    first = true;
    turns += 1;
    setImmediate(turn);
  };
  setImmediate(turn);
  return {
    stop: () => {
      running = false;
      return turns;
    },
    firstRan: () => first,
  };
}

/** Runs `work` and how many turns the event loop made meanwhile (and whether the first callback ran before it resolved). */
async function turnsDuring(work: () => Promise<unknown>): Promise<{ turns: number; firstBefore: boolean }> {
  const counter = turnCounter();
  let firstBefore = false;
  await work().then(() => (firstBefore = counter.firstRan()));
  return { turns: counter.stop(), firstBefore };
}

describe("the event loop turns during a long compaction", () => {
  let history100k: BaseMessage[];
  beforeAll(() => {
    history100k = agentConversation(100_000, 11);
  });
  beforeEach(() => forgetRememberedLists());

  test("the sliding window on 100,000 messages (the estimate)", async () => {
    const { turns, firstBefore } = await turnsDuring(() => new SlidingWindowCompactor({ cache: new TokenCountCache() }).compactWithReport(history100k, 20_000));
    expect(firstBefore).toBe(true);
    expect(turns).toBeGreaterThan(2);
  });

  test("pruning, then the window, on 100,000 messages, with and without a report", async () => {
    const pipeline = () => {
      const cache = new TokenCountCache();
      return new CompactionPipeline([new ToolResultPruningCompactor({ cache }), new SlidingWindowCompactor({ cache })], { cache });
    };
    expect((await turnsDuring(() => pipeline().compact(history100k, 20_000))).turns).toBeGreaterThan(2);
    forgetRememberedLists();
    expect((await turnsDuring(() => pipeline().compactWithReport(history100k, 20_000))).turns).toBeGreaterThan(2);
    forgetRememberedLists();
    expect((await turnsDuring(() => new ToolResultPruningCompactor({ cache: new TokenCountCache() }).compactWithReport(history100k, 20_000))).turns).toBeGreaterThan(2);
  });

  test("a history read (view mode, tiktoken) of a history holding a 1 MB base64 tool result", async () => {
    const messages = withNewestResult(agentConversation(200, 12), randomString(seededRandom(12), BASE64, 1 << 20));
    const store = new InMemoryChatMessageHistory();
    await store.addMessages(messages);
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: 20_000, tokenCounter: tiktokenCounter(), compactor: new SlidingWindowCompactor({ cache: new TokenCountCache() }) });
    const { turns, firstBefore } = await turnsDuring(() => history.getMessages());
    expect(firstBefore).toBe(true);
    expect(turns).toBeGreaterThan(2);
  });

  test("a commit of a 40,001-message chat (in-memory store)", async () => {
    const messages: BaseMessage[] = [new SystemMessage("You answer questions.")];
    for (let turn = 0; turn < 20_000; turn += 1) messages.push(new HumanMessage(`q${turn}: how warm tomorrow?`), new AIMessage(`a${turn}: mild.`));
    const store = new InMemoryChatMessageHistory();
    await store.addMessages(messages);
    let evicted = 0;
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: 300, mode: "commit", onEvict: (removed) => void (evicted = removed.length) });
    const { turns } = await turnsDuring(() => history.getMessages());
    expect(turns).toBeGreaterThan(2);
    // And it did commit.
    expect(evicted).toBeGreaterThan(39_000);
    expect((await store.getMessages()).length).toBeLessThan(100);
  });

  test("tiktokenCounter called directly still returns a number, whatever the text's length", () => {
    const tokens = tiktokenCounter()([new HumanMessage(randomString(seededRandom(13), BASE64, 1 << 20))]);
    expect(typeof tokens).toBe("number");
  });
});

/** What two runs must agree on: the list (kept messages by identity, new ones by content) and the report's numbers. */
function outcome(input: readonly BaseMessage[], report: CompactionReport | BaseMessage[] | null): unknown {
  const position = new Map(input.map((message, index) => [message, index] as const));
  const describe = (message: BaseMessage) => (position.has(message) ? position.get(message) : { type: message.type, content: message.content });
  if (report === null || Array.isArray(report)) return report?.map(describe) ?? null;
  return {
    messages: report.messages?.map(describe) ?? null,
    removed: report.removed.map(describe),
    rewritten: report.rewritten.map(({ original, replacement }) => [describe(original), describe(replacement)]),
    added: report.added.map(describe),
    tokensBefore: report.tokensBefore,
    tokensAfter: report.tokensAfter,
    keptCount: report.keptCount,
    stepsTrimmed: report.stepsTrimmed,
  };
}

/** An asynchronous counter (a model's endpoint, say): answers later, the estimate's count. */
const asyncCounter = async (messages: BaseMessage[]): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 0));
  return approximateTokenCounter(messages);
};

describe("slicing changes no result", () => {
  afterEach(() => setSliceMs(10));

  test("every stage, with and without a report, the estimate, tiktoken and an asynchronous counter, on random histories", async () => {
    const stage = fc.constantFrom("window", "window-protect", "pruning", "pipeline", "pipeline-protect");
    const counter = fc.constantFrom("approximate", "tiktoken", "async");
    await assertOnSeedsAsync(
      fc.asyncProperty(
        fc.integer({ min: 1_100, max: 2_600 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.02, max: 1.2, noNaN: true }),
        stage,
        counter,
        fc.boolean(),
        fc.boolean(),
        async (size, seed, fraction, stageName, counterName, withReport, longTexts) => {
          let messages = agentConversation(size, seed);
          // Texts long enough that tiktoken counts them in steps (and the longest, sampled), in the middle and at the end.
          if (longTexts) {
            const random = seededRandom(seed);
            messages = withNewestResult(messages, randomString(random, BASE64, 70_000));
            const middle = Math.floor(messages.length / 2);
            messages[middle] = new HumanMessage(`${"long question ".repeat(600)}${randomString(random, BASE64, 5_000)}`);
          }
          const tokenCounter: TokenCounterLike = counterName === "approximate" ? approximateTokenCounter : counterName === "tiktoken" ? tiktokenCounter() : asyncCounter;
          const total = approximateTokenCounter(messages);
          const target = Math.floor(total * fraction);
          const protect = (message: BaseMessage, index: number) => index % 97 === 5 || message.name === "read_file";
          const make = (): Compactor => {
            const cache = new TokenCountCache();
            switch (stageName) {
              case "window":
                return new SlidingWindowCompactor({ cache, minKeepSteps: seed % 3 });
              case "window-protect":
                return new SlidingWindowCompactor({ cache, protect });
              case "pruning":
                return new ToolResultPruningCompactor({ cache, minTokens: 50 });
              case "pipeline":
                return new CompactionPipeline([new ToolResultPruningCompactor({ cache, minTokens: 50 }), new SlidingWindowCompactor({ cache })], { cache });
              default:
                return new CompactionPipeline([new ToolResultPruningCompactor({ cache, protect }), new SlidingWindowCompactor({ cache, protect })], { cache });
            }
          };
          const run = async (sliceMs: number) => {
            setSliceMs(sliceMs);
            forgetRememberedLists();
            const compactor = make();
            return outcome(messages, withReport ? await compactor.compactWithReport(messages, target, tokenCounter) : await compactor.compact(messages, target, tokenCounter));
          };
          const inOneGo = await run(Number.POSITIVE_INFINITY);
          const inSlices = await run(0);
          expect(inSlices).toEqual(inOneGo);
        },
      ),
      16,
    );
  }, 300_000);

  test.each([
    ["the default slice", 10],
    ["every check yielding", 0],
  ])("an asynchronous counter is called once per message, and not awaited message by message (%s)", async (_name, sliceMs) => {
    setSliceMs(sliceMs);
    const messages = agentConversation(3_000, 21);
    const calls = new Map<BaseMessage, number>();
    let inFlight = 0;
    let mostInFlight = 0;
    // No call answers before every message was asked for (or 5 s passed: a counter awaited message by message would
    // then answer one call at a time).
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
      setTimeout(resolve, 5_000);
    });
    const counter = async (list: BaseMessage[]): Promise<number> => {
      for (const message of list) calls.set(message, (calls.get(message) ?? 0) + 1);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      if (calls.size === messages.length) open();
      await gate;
      inFlight -= 1;
      return approximateTokenCounter(list);
    };
    forgetRememberedLists();
    // `compact`: no note is counted, so every call is for a message of the list.
    await new SlidingWindowCompactor({ cache: new TokenCountCache() }).compact(messages, 20_000, counter);
    expect(calls.size).toBe(messages.length);
    expect(Math.max(...calls.values())).toBe(1);
    // Started together, not one after another.
    expect(mostInFlight).toBe(messages.length);
  });

  test("a long text in the newest message, counted in slices, does not make a lazy compaction count the history", async () => {
    setSliceMs(0);
    const messages = withNewestResult(agentConversation(20_000, 22), randomString(seededRandom(22), BASE64, 1 << 20));
    const counter = tiktokenCounter();
    const cache = new TokenCountCache();
    forgetRememberedLists();
    const sliced = await new SlidingWindowCompactor({ cache }).compact(messages, 20_000, counter);
    const counted = messages.filter((message) => cache.get(counter, message) !== undefined).length;
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThan(200);
    setSliceMs(Number.POSITIVE_INFINITY);
    forgetRememberedLists();
    expect(outcome(messages, await new SlidingWindowCompactor({ cache: new TokenCountCache() }).compact(messages, 20_000, counter))).toEqual(outcome(messages, sliced));
  });
});

describe("a long list laid out in slices", () => {
  afterEach(() => setSliceMs(10));

  test("is laid out as in one go, also while another layout of the same conversation runs in slices", async () => {
    setSliceMs(0);
    const list = agentConversation(6_000, 31);
    const longer = [...list, new AIMessage({ content: "", tool_calls: [{ id: "late", name: "lookup", args: {} }] }), new ToolMessage({ content: "late", tool_call_id: "late" })];
    const shorter = list.slice(0, 4_500);
    forgetRememberedLists();
    // The second and third start while the first is under way: they cannot use its engine, and none corrupts another.
    const [a, b, c] = await Promise.all([layoutCheckedConversationInSlices(list), layoutCheckedConversationInSlices(longer), layoutCheckedConversationInSlices(shorter)]);
    expect(a).toEqual(freshLayout(list));
    expect(b).toEqual(freshLayout(longer));
    expect(c).toEqual(freshLayout(shorter));
    // And what is remembered afterwards still holds.
    expect(await layoutCheckedConversationInSlices([...list, new HumanMessage("next")])).toEqual(freshLayout([...list, new HumanMessage("next")]));
  });

  test("a message that is no message, far into a long list, is named; what was laid out before it is not trusted afterwards", async () => {
    setSliceMs(0);
    const list = agentConversation(5_000, 32);
    forgetRememberedLists();
    const broken = [...list];
    broken[4_500] = { type: "human", content: "not a message" } as unknown as BaseMessage;
    await expect(layoutCheckedConversationInSlices(broken, undefined, "history")).rejects.toThrow(new TypeError("`history[4500]` must be a BaseMessage, got an object"));
    expect(await layoutCheckedConversationInSlices(list)).toEqual(freshLayout(list));
  });

  test("an aborted signal stops it with its reason", async () => {
    setSliceMs(0);
    const list = agentConversation(5_000, 33);
    forgetRememberedLists();
    const controller = new AbortController();
    const reason = new Error("stop");
    const laying = layoutCheckedConversationInSlices(list, controller.signal);
    controller.abort(reason);
    await expect(laying).rejects.toBe(reason);
    expect(await layoutCheckedConversationInSlices(list)).toEqual(freshLayout(list));
  });
});
