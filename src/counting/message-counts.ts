import type { BaseMessage } from "@langchain/core/messages";
import { describeValue, reasonOf, TokenCounterError } from "../errors";
import { approximateMessageTokens, approximateTokenCounter } from "./approximate";
import type { TokenCountCache } from "./cache";
import type { TokenCounterLike } from "./types";

/** A counter reduced to "count one message", with the object its cache entries are keyed by. */
export interface MessageCounter {
  key: object;
  label: string;
  countOne(message: BaseMessage): number | Promise<number>;
  /**
   * Whether counts are looked up in and written to the cache. `false` for the
   * built-in estimate only: it reads a message's text faster than the cache
   * checks that a stored count is still current and stores a new one (with the
   * cache, pruning 100,000 messages took ~3.3 passes of the estimate; without,
   * ~2.5). Every other counter (tiktoken, a model's) is cached.
   */
  cached: boolean;
}

/**
 * Accepts what `trimMessages` accepts: a counter function, or a model with
 * `getNumTokens` (which, like `trimMessages`, is given the message content).
 */
export function resolveTokenCounter(counter: TokenCounterLike | undefined, optionName = "tokenCounter"): MessageCounter {
  const chosen = counter ?? approximateTokenCounter;
  // The built-in estimate counts one message without wrapping it in a list (the same number, no allocation per message).
  if (chosen === approximateTokenCounter) return { key: chosen, label: chosen.name, countOne: approximateMessageTokens, cached: false };
  if (typeof chosen === "function") {
    return { key: chosen, label: chosen.name || optionName, countOne: (message) => chosen([message]), cached: true };
  }
  if (typeof chosen === "object" && chosen !== null && typeof chosen.getNumTokens === "function") {
    return {
      key: chosen,
      label: `${describeValue(chosen)}.getNumTokens`,
      countOne: (message) => chosen.getNumTokens(message.content),
      cached: true,
    };
  }
  throw new TypeError(
    `\`${optionName}\` must be a function (messages) => number or an object with getNumTokens(), got ${describeValue(chosen)}`,
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** Thrown inside a synchronous pass when the counter turned out to be asynchronous. */
export class AsyncCountNeeded {}
const ASYNC_COUNT_NEEDED = new AsyncCountNeeded();

/**
 * The token counts of one list during one compaction. Each message is
 * counted at most once, lazily, on first need, and looked up in (and written
 * to) the shared cache, so work is in proportion to what the selection reads.
 *
 * Synchronous counters are called synchronously; the first promise a counter
 * returns aborts the pass with {@link AsyncCountNeeded}, after which the caller
 * awaits {@link countAll} and runs the pass again with every count known.
 */
export class MessageCounts {
  /**
   * Counts known so far: a map while the rules read a few messages (a lazy
   * compaction of a long history reads a few dozen), an array once every
   * message is wanted.
   */
  private sparse: Map<number, number> | null = null;
  private dense: Float64Array | null = null;
  /** Made on first use, like `sparse`: one message counted through the cache (a replacement) allocates no maps. */
  private pending: Map<number, Promise<unknown>> | null = null;
  /**
   * The sum of every count known so far. Each is finite, but their sum may not
   * be (a counter returning 1e308 twice): every total the rules form is a sum
   * over some of these messages, so keeping this one finite keeps them all finite.
   */
  private knownTotal = 0;

  private readonly cache: TokenCountCache | null;

  constructor(
    private readonly messages: readonly BaseMessage[],
    private readonly counter: MessageCounter,
    cache: TokenCountCache | null,
  ) {
    this.cache = counter.cached ? cache : null;
    // A short list (one replacement, one new step) is dense from the start: no map for a handful of counts.
    if (messages.length <= 16) this.dense = new Float64Array(messages.length).fill(Number.NaN);
  }

  /** The tokens of message `index`, counting it now if needed. */
  of(index: number): number {
    const known = this.known(index);
    if (known !== undefined) return known;
    const message = this.messages[index]!;
    const cached = this.cache?.get(this.counter.key, message);
    if (cached !== undefined) return this.record(index, cached);
    const result = this.call(index);
    if (isThenable(result)) {
      const promise = Promise.resolve(result);
      promise.catch(() => undefined); // awaited (and its error reported) by countAll
      (this.pending ??= new Map()).set(index, promise);
      throw ASYNC_COUNT_NEEDED;
    }
    return this.accept(index, result);
  }

  /** The sum over `indices`. */
  sum(indices: readonly number[]): number {
    let total = 0;
    for (const index of indices) total += this.of(index);
    return total;
  }

  /** The tokens of the whole list: every message counted (awaiting an asynchronous counter), then summed. */
  async total(): Promise<number> {
    await this.countAll();
    let total = 0;
    for (let index = 0; index < this.messages.length; index += 1) total += this.of(index);
    return total;
  }

  /** Counts every message not yet counted, awaiting an asynchronous counter (calls run concurrently). */
  async countAll(): Promise<void> {
    if (this.dense === null) {
      this.dense = new Float64Array(this.messages.length).fill(Number.NaN);
      if (this.sparse !== null) for (const [index, value] of this.sparse) this.dense[index] = value;
      this.sparse = null;
    }
    const work: Promise<void>[] = [];
    for (let index = 0; index < this.messages.length; index += 1) {
      if (this.known(index) !== undefined) continue;
      const message = this.messages[index]!;
      const cached = this.cache?.get(this.counter.key, message);
      if (cached !== undefined) {
        this.record(index, cached);
        continue;
      }
      const started = this.pending?.get(index) ?? this.call(index);
      if (!isThenable(started)) {
        this.accept(index, started);
        continue;
      }
      work.push(
        Promise.resolve(started).then(
          (value) => void this.accept(index, value),
          (error: unknown) => {
            throw this.wrapThrown(index, error);
          },
        ),
      );
    }
    this.pending = null;
    await Promise.all(work);
  }

  private call(index: number): unknown {
    try {
      return this.counter.countOne(this.messages[index]!);
    } catch (error) {
      throw this.wrapThrown(index, error);
    }
  }

  private wrapThrown(index: number, error: unknown): Error {
    if (error instanceof TokenCounterError) return error;
    return new TokenCounterError(
      `${this.counter.label} threw while counting the message at index ${index} (${this.typeAt(index)}): ${reasonOf(error)}`,
      index,
      { cause: error },
    );
  }

  private badCount(index: number, value: unknown): TypeError | RangeError {
    const said = `${this.counter.label} returned ${describeValue(value)} for the message at index ${index} (${this.typeAt(index)})`;
    if (typeof value !== "number") return new TypeError(`${said}; a token count must be a number`);
    return new RangeError(`${said}; a token count must be a finite number of at least 0`);
  }

  /** The message's type for an error message; a message whose getters throw is still reported, not rethrown from. */
  private typeAt(index: number): string {
    try {
      return String(this.messages[index]!.type);
    } catch {
      return "a message whose `type` cannot be read";
    }
  }

  private record(index: number, value: number): number {
    this.knownTotal += value;
    if (this.knownTotal === Number.POSITIVE_INFINITY) {
      throw new TokenCounterError(
        `${this.counter.label}'s counts sum to Infinity at the message at index ${index} (${this.typeAt(index)}, ${describeValue(value)} tokens); a conversation's token count must be finite`,
        index,
      );
    }
    if (this.dense !== null) this.dense[index] = value;
    else (this.sparse ??= new Map()).set(index, value);
    return value;
  }

  private known(index: number): number | undefined {
    if (this.dense === null) return this.sparse === null ? undefined : this.sparse.get(index);
    const value = this.dense[index]!;
    return Number.isNaN(value) ? undefined : value;
  }

  private accept(index: number, value: unknown): number {
    // No closure or message text unless the value is wrong: this runs once per message counted.
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw this.badCount(index, value);
    this.record(index, value);
    this.cache?.set(this.counter.key, this.messages[index]!, value);
    return value;
  }
}

/** The tokens of every message in `messages`, awaiting an asynchronous counter, through `cache`. */
export async function countTotal(
  messages: readonly BaseMessage[],
  counter: MessageCounter,
  cache: TokenCountCache | null,
): Promise<number> {
  if (messages.length === 0) return 0;
  return new MessageCounts(messages, counter, cache).total();
}
