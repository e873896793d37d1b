/**
 * The per-message token count cache and the at-most-once counting of one
 * compaction: what is counted, when a cached count is reused or recounted, that
 * caching never changes a result, and that pathological runs without
 * whitespace are counted in bounded time within the documented error.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { MessageContent } from "@langchain/core/messages";
import * as fc from "fast-check";
import { approximateTokenCounter, SlidingWindowCompactor, tiktokenCounter, TokenCountCache } from "../../src";
import type { CompactionReport, TokenCounter, TokenCounterLike } from "../../src";
import { boundedTokenLength, CHUNK, EXACT_HAZARD_LIMIT, HAZARD_RUN } from "../../src/counting/bounded-encoding";
import { offlineEncoder, offlineTokenLength } from "../../src/counting/tiktoken";
import { conversationArbitrary } from "../support/conversations";
import { buildMessyConversation, messyPlanArbitrary } from "../support/messy";
import { assertOnSeedsAsync, casesIn, sampleSeed } from "../support/seeds";

const seed = sampleSeed();

/** Wraps a counter so every message it is asked about is tallied, by object. */
function tallying(counter: (messages: BaseMessage[]) => number) {
  const counted = new Map<BaseMessage, number>();
  let calls = 0;
  const wrapped: TokenCounter = (messages) => {
    calls += 1;
    for (const message of messages) counted.set(message, (counted.get(message) ?? 0) + 1);
    return counter(messages);
  };
  return {
    counter: wrapped,
    counted,
    calls: () => calls,
    reset: () => {
      counted.clear();
      calls = 0;
    },
  };
}

/** A user's own counter: one token per 3 characters of string content, 2 per message. */
function ownCounter(messages: BaseMessage[]): number {
  let total = 0;
  for (const message of messages) {
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    total += 2 + Math.ceil(text.length / 3);
  }
  return total;
}

/** A history of `turns` finished turns and a task with `steps` steps, tool results of a few hundred characters. */
function agentHistory(turns: number, steps: number): BaseMessage[] {
  let id = 0;
  const step = (label: string): BaseMessage[] => {
    const calls = [0, 1].map((k) => ({ id: `c${(id += 1)}`, name: k ? "flights" : "weather", args: { q: `${label}-${k}` }, type: "tool_call" as const }));
    return [
      new AIMessage({ content: `working on ${label}`, tool_calls: calls }),
      ...calls.map((call) => new ToolMessage({ tool_call_id: call.id, content: `${call.name} result for ${label}: ${"data ".repeat(60)}` })),
    ];
  };
  const messages: BaseMessage[] = [new SystemMessage("You are a travel agent.")];
  for (let t = 0; t < turns; t += 1) {
    messages.push(new HumanMessage(`Question ${t}`), ...step(`turn ${t}`), new AIMessage(`Answer ${t}`));
  }
  messages.push(new HumanMessage("The current task"));
  for (let s = 0; s < steps; s += 1) messages.push(...step(`step ${s}`));
  return messages;
}

let nextStepId = 0;
function newStep(): BaseMessage[] {
  nextStepId += 1;
  const id = `new-${nextStepId}`;
  return [
    new AIMessage({ content: "", tool_calls: [{ id, name: "search", args: { q: "more" }, type: "tool_call" }] }),
    new ToolMessage({ tool_call_id: id, content: `new result ${"x y ".repeat(40)}` }),
  ];
}

/** Results compared by message identity for kept messages and by content and metadata for the note. */
function sameResult(a: CompactionReport, b: CompactionReport, input: readonly BaseMessage[]): void {
  const describe = (report: CompactionReport) => ({
    messages:
      report.messages?.map((m) => (input.includes(m) ? input.indexOf(m) : { note: m.content, meta: m.response_metadata })) ?? null,
    removed: report.removed.map((m) => input.indexOf(m)),
    keptCount: report.keptCount,
    stepsTrimmed: report.stepsTrimmed,
    tokensBefore: report.tokensBefore,
    tokensAfter: report.tokensAfter,
    note: report.note === null ? null : report.note.content,
  });
  expect(describe(a)).toEqual(describe(b));
}

describe("each message is counted at most once per compaction", () => {
  test.each([
    ["compact", false],
    ["compactWithReport", true],
  ] as const)("%s, with a cache and without, on random conversations", async (_name, withReport) => {
    await assertOnSeedsAsync(
      fc.asyncProperty(
        conversationArbitrary({ maxTurns: 8, maxSteps: 8 }),
        fc.double({ min: 0, max: 1.1, noNaN: true }),
        fc.boolean(),
        async (messages, fraction, useCache) => {
          const probe = tallying(approximateTokenCounter as (m: BaseMessage[]) => number);
          const target = Math.floor(approximateTokenCounter(messages) * fraction);
          const compactor = new SlidingWindowCompactor({ cache: useCache ? new TokenCountCache() : null });
          if (withReport) await compactor.compactWithReport(messages, target, probe.counter);
          else await compactor.compact(messages, target, probe.counter);
          for (const [message, times] of probe.counted) {
            expect(times).toBe(1);
            expect(messages.includes(message) || withReport).toBe(true); // only the report also counts its note
          }
          // compactWithReport reports tokensBefore, so it has counted every message.
          if (withReport) for (const message of messages) expect(probe.counted.get(message)).toBe(1);
        },
      ),
      120,
    );
  });

  test("compact() counts only what the rules read: newest first, not the old history", async () => {
    const messages = agentHistory(200, 3);
    const probe = tallying(approximateTokenCounter as (m: BaseMessage[]) => number);
    const result = await new SlidingWindowCompactor({ cache: null }).compact(messages, 2_000, probe.counter);
    expect(result).not.toBeNull();
    expect(probe.counted.size).toBeLessThan(messages.length / 10);
    // The oldest turn cannot be kept in 2,000 tokens and is never looked at.
    expect(probe.counted.has(messages[1]!)).toBe(false);
    expect(probe.counted.has(messages[messages.length - 1]!)).toBe(true);
  });
});

describe("the next compaction counts only the new messages", () => {
  const counters: Array<[string, (messages: BaseMessage[]) => number]> = [
    ["a user's own function", ownCounter],
    ["approximateTokenCounter (wrapped)", approximateTokenCounter as (m: BaseMessage[]) => number],
    ["tiktokenCounter o200k (wrapped)", tiktokenCounter("o200k_base") as (m: BaseMessage[]) => number],
  ];

  test.each(counters)("%s: full history + 1 step, and compacted result + 1 step", async (_name, base) => {
    const probe = tallying(base);
    const cache = new TokenCountCache();
    const compactor = new SlidingWindowCompactor({ cache });
    const history = agentHistory(60, 4);
    const first = await compactor.compactWithReport(history, 3_000, probe.counter);
    expect(first.messages).not.toBeNull();
    expect(probe.counted.size).toBe(history.length + 1); // every message, and the note for tokensAfter

    // (b) a view-mode agent: the state keeps everything and gains one step.
    probe.reset();
    const stepB = newStep();
    const inputB = [...history, ...stepB];
    await compactor.compactWithReport(inputB, 3_000, probe.counter);
    expect(new Set([...probe.counted.keys()].filter((m) => inputB.includes(m)))).toEqual(new Set(stepB));
    expect(probe.calls()).toBe(stepB.length + 1); // and the new note, for tokensAfter

    // (a) the compacted result is what the agent keeps, and it gains one step.
    probe.reset();
    const stepA = newStep();
    await compactor.compactWithReport([...first.messages!, ...stepA], 3_000, probe.counter);
    for (const message of first.messages!) expect(probe.counted.has(message)).toBe(false);
    for (const message of stepA) expect(probe.counted.get(message)).toBe(1);
  });

  test("a model counter (getNumTokens) is cached by the model object", async () => {
    let calls = 0;
    const model = {
      getNumTokens(content: MessageContent): number {
        calls += 1;
        return 1 + Math.ceil(JSON.stringify(content).length / 4);
      },
    };
    const compactor = new SlidingWindowCompactor({ cache: new TokenCountCache() });
    const history = agentHistory(20, 2);
    await compactor.compactWithReport(history, 500, model);
    expect(calls).toBe(history.length + 1);
    calls = 0;
    const step = newStep();
    await compactor.compactWithReport([...history, ...step], 500, model);
    expect(calls).toBe(step.length + 1);
  });

  test("built-in approximateTokenCounter: not cached (recounting is cheaper than checking a stored count), so a planted count is ignored", async () => {
    const counter = approximateTokenCounter;
    const cache = new TokenCountCache();
    const compactor = new SlidingWindowCompactor({ cache });
    const history = agentHistory(10, 2);
    const first = await compactor.compactWithReport(history, 400, counter);
    for (const message of history) expect(cache.get(counter, message)).toBeUndefined();
    cache.set(counter, history[1]!, 1_000_000);
    const second = await compactor.compactWithReport(history, 400, counter);
    expect(second.tokensBefore).toBe(first.tokensBefore);
    // The same function wrapped is any other counter to the cache: cached.
    const wrapped = (messages: BaseMessage[]) => approximateTokenCounter(messages);
    await compactor.compactWithReport(history, 400, wrapped);
    for (const message of history) expect(cache.get(wrapped, message)).toBe(approximateTokenCounter([message]));
  });

  test.each([
    ["tiktokenCounter", tiktokenCounter("o200k_base")],
  ] as const)("built-in %s: counts are stored under the counter itself and read back", async (_name, counter) => {
    const cache = new TokenCountCache();
    const compactor = new SlidingWindowCompactor({ cache });
    const history = agentHistory(10, 2);
    const first = await compactor.compactWithReport(history, 400, counter);
    for (const message of history) expect(cache.get(counter, message)).toBe(await counter([message]));

    // A planted count is what the next compaction uses, so the cache is read, not bypassed.
    const oldest = history[1]!;
    cache.set(counter, oldest, 1_000_000);
    const second = await compactor.compactWithReport(history, 400, counter);
    expect(second.tokensBefore).toBe(first.tokensBefore - (await counter([oldest])) + 1_000_000);
    cache.clear(counter);
    expect(cache.get(counter, oldest)).toBeUndefined();
  });
});

describe("staleness rule (src/counting/cache.ts)", () => {
  const counter = approximateTokenCounter;

  function cached(message: BaseMessage): TokenCountCache {
    const cache = new TokenCountCache();
    cache.set(counter, message, approximateTokenCounter([message]));
    expect(cache.get(counter, message)).toBe(approximateTokenCounter([message]));
    return cache;
  }

  test("reassigning string content is detected", () => {
    const message = new HumanMessage("short");
    const cache = cached(message);
    message.content = "a much longer text than before ".repeat(10);
    expect(cache.get(counter, message)).toBeUndefined();
  });

  test("pushing to a content array is detected", () => {
    const message = new HumanMessage({ content: [{ type: "text", text: "first block" }] });
    const cache = cached(message);
    (message.content as Array<{ type: string; text: string }>).push({ type: "text", text: "second block ".repeat(20) });
    expect(cache.get(counter, message)).toBeUndefined();
  });

  test("pushing to tool_calls, and changing tool_call_id or name, are detected", () => {
    const ai = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "weather", args: {}, type: "tool_call" }] });
    const aiCache = cached(ai);
    ai.tool_calls!.push({ id: "b", name: "flights", args: { to: "Oslo" }, type: "tool_call" });
    expect(aiCache.get(counter, ai)).toBeUndefined();

    const tool = new ToolMessage({ tool_call_id: "a", content: "sunny" });
    const toolCache = cached(tool);
    tool.tool_call_id = "a-much-longer-id";
    expect(toolCache.get(counter, tool)).toBeUndefined();

    const named = new HumanMessage({ content: "hi", name: "ann" });
    const namedCache = cached(named);
    named.name = "bartholomew";
    expect(namedCache.get(counter, named)).toBeUndefined();
  });

  test("a compaction recounts a message whose content was reassigned", async () => {
    const probe = tallying(approximateTokenCounter as (m: BaseMessage[]) => number);
    const compactor = new SlidingWindowCompactor({ cache: new TokenCountCache() });
    const history = agentHistory(5, 2);
    const before = await compactor.compactWithReport(history, 10_000, probe.counter);
    const last = history[history.length - 1]!;
    last.content = "replaced ".repeat(200);
    probe.reset();
    const after = await compactor.compactWithReport(history, 10_000, probe.counter);
    expect([...probe.counted.keys()]).toEqual([last]);
    expect(after.tokensBefore).toBeGreaterThan(before.tokensBefore);
  });

  test("an in-place nested edit is not detected, as documented; clear() fixes it", () => {
    const message = new HumanMessage({ content: [{ type: "text", text: "short" }] });
    const cache = cached(message);
    const stale = cache.get(counter, message);
    (message.content as Array<{ type: string; text: string }>)[0]!.text = "much longer now ".repeat(50);
    expect(approximateTokenCounter([message])).not.toBe(stale);
    expect(cache.get(counter, message)).toBe(stale); // the documented limit
    cache.clear();
    expect(cache.get(counter, message)).toBeUndefined();

    const ai = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "search", args: { q: "x" }, type: "tool_call" }] });
    const aiCache = cached(ai);
    const aiStale = aiCache.get(counter, ai);
    ai.tool_calls![0]!.args = { q: "a far longer query ".repeat(20) };
    expect(aiCache.get(counter, ai)).toBe(aiStale);
    aiCache.clear(counter);
    expect(aiCache.get(counter, ai)).toBeUndefined();
  });
});

describe("a cache never changes a result", () => {
  const counterArb = fc.constantFrom<[string, TokenCounterLike]>(
    ["approximate", approximateTokenCounter],
    ["tiktoken", tiktokenCounter("o200k_base")],
    ["own", ownCounter],
    ["async", async (messages: BaseMessage[]) => approximateTokenCounter(messages)],
  );

  test("cached (warm from an earlier compaction of a prefix) and uncached compactions agree on well-formed and messy conversations", async () => {
    const conversation = fc.oneof(
      conversationArbitrary({ maxTurns: 8, maxSteps: 8 }),
      messyPlanArbitrary().map(buildMessyConversation),
    );
    let runs = 0;
    await assertOnSeedsAsync(
      fc.asyncProperty(
        conversation,
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        fc.integer({ min: 0, max: 3 }),
        counterArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (messages, fraction, minKeepSteps, [, counter], prefixShare) => {
          runs += 1;
          const total = approximateTokenCounter(messages);
          const target = Math.floor(total * fraction);
          const cache = new TokenCountCache();
          const cached = new SlidingWindowCompactor({ cache, minKeepSteps });
          const uncached = new SlidingWindowCompactor({ cache: null, minKeepSteps });
          // Warm the cache as an agent loop would: an earlier, shorter state of the same conversation.
          await cached.compact(messages.slice(0, Math.floor(messages.length * prefixShare)), target, counter);
          const a = await cached.compactWithReport(messages, target, counter);
          const b = await uncached.compactWithReport(messages, target, counter);
          sameResult(a, b, messages);
          const lazyA = await cached.compact(messages, target, counter);
          const lazyB = await uncached.compact(messages, target, counter);
          expect(lazyA === null).toBe(lazyB === null);
          expect(lazyA?.length).toBe(lazyB?.length);
          lazyA?.forEach((message, i) => {
            if (messages.includes(message)) expect(lazyB![i]).toBe(message);
            else expect(lazyB![i]!.content).toEqual(message.content);
          });
        },
      ),
      220,
    );
    expect(runs).toBe(casesIn(220));
  });
});

describe("bounded tokenization of runs without whitespace", () => {
  const encoder = offlineEncoder("o200k_base");
  const exactLength = offlineTokenLength("o200k_base");
  const counter = tiktokenCounter("o200k_base");
  const FRAMING = 4; // 3 per message + 1 for the role, see src/counting/tiktoken.ts

  function runOf(kind: "repeated" | "letters" | "symbols", length: number, salt: number): string {
    const random = fc.sample(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { seed: seed + salt, numRuns: 1 })[0]!;
    let state = random;
    const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
    const alphabet = kind === "letters" ? "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" : "=-*#~^_|<>!?;:.,/\\";
    if (kind === "repeated") return "abcdefgh"[next() % 8]!.repeat(length);
    let out = "";
    for (let i = 0; i < length; i += 1) out += alphabet[next() % alphabet.length];
    return out;
  }

  test.each(["repeated", "letters", "symbols"] as const)("200,000 characters, %s, are counted by tiktokenCounter", (kind) => {
    const run = runOf(kind, 200_000, 1);
    const tokens = counter([new HumanMessage(run)]) as number;
    expect(Number.isInteger(tokens)).toBe(true);
    // Tokens per character stay near those of an exactly encoded 2,000-character stretch of the same run.
    const sample = run.slice(0, 2_000);
    const exactRate = encoder.encode(sample).length / sample.length;
    const rate = (tokens - FRAMING) / run.length;
    expect(Math.abs(rate - exactRate)).toBeLessThanOrEqual(0.15 * exactRate);
  });

  test.each(["repeated", "letters", "symbols"] as const)(
    "%s: chunked hazards (up to EXACT_HAZARD_LIMIT) are within 1 token per CHUNK characters of exact",
    (kind) => {
      for (const length of [HAZARD_RUN, 300, EXACT_HAZARD_LIMIT]) {
        const run = runOf(kind, length, length);
        const exact = encoder.encode(run).length;
        const bounded = boundedTokenLength(exactLength, run);
        expect(Math.abs(bounded - exact)).toBeLessThanOrEqual(Math.ceil(length / CHUNK));
      }
    },
  );

  test.each(["repeated", "letters", "symbols"] as const)("%s: sampled hazards of 2,000 to 3,000 characters are within 10% of exact", (kind) => {
    for (const length of [2_000, 3_000]) {
      const run = runOf(kind, length, length + 7);
      const exact = encoder.encode(run).length;
      const bounded = boundedTokenLength(exactLength, run);
      expect(Math.abs(bounded - exact)).toBeLessThanOrEqual(0.1 * exact);
    }
  });

  test("ordinary text with no hazard (base64, hex, JSON, prose) is counted exactly", () => {
    const ordinary = "Base64 aGVsbG8gd29ybGQ=, hex 3f9a0c11, JSON {\"a\":1} and prose. ".repeat(30);
    expect(boundedTokenLength(exactLength, ordinary)).toBe(encoder.encode(ordinary).length);
  });
});
