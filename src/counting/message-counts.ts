import type { BaseMessage } from "@langchain/core/messages";
import { describeValue, reasonOf, TokenCounterError } from "../errors";
import { currentSlice, nextSlice, sliceUsedUp } from "../time-slices";
import { approximateMessageTokens, approximateTokenCounter } from "./approximate";
import type { TokenCountCache } from "./cache";
import { slicedCountOf } from "./tiktoken";
import type { TokenCounterLike } from "./types";

/** A counter reduced to "count one message", with the object its cache entries are keyed by. */
export interface MessageCounter {
  key: object;
  label: string;
  /** The message's tokens; `signal` reaches only the built-in counter's work in slices (see {@link sliced}). */
  countOne(message: BaseMessage, signal?: AbortSignal): number | Promise<number>;
  /**
   * Whether a promise from {@link countOne} is the built-in tiktoken counter
   * counting a long text in later time slices (see `time-slices.ts`), rather
   * than an asynchronous counter: the pass that met it awaits that count
   * alone and runs again, where an asynchronous counter has every message
   * counted at once.
   */
  sliced: boolean;
}

/**
 * Accepts what `trimMessages` accepts: a counter function, or a model with
 * `getNumTokens` (which, like `trimMessages`, is given the message content).
 */
export function resolveTokenCounter(counter: TokenCounterLike | undefined, optionName = "tokenCounter"): MessageCounter {
  const chosen = counter ?? approximateTokenCounter;
  // The built-in estimate counts one message without wrapping it in a list (the same number, no allocation per message).
  if (chosen === approximateTokenCounter) return { key: chosen, label: chosen.name, countOne: approximateMessageTokens, sliced: false };
  if (typeof chosen === "function") {
    // The built-in tiktoken counter counts a long text in time slices: the same count, without holding the event loop.
    const inSlices = slicedCountOf(chosen);
    if (inSlices !== undefined) return { key: chosen, label: chosen.name, countOne: inSlices, sliced: true };
    return { key: chosen, label: chosen.name || optionName, countOne: (message) => chosen([message]), sliced: false };
  }
  if (typeof chosen === "object" && chosen !== null && typeof chosen.getNumTokens === "function") {
    return {
      key: chosen,
      label: `${describeValue(chosen)}.getNumTokens`,
      countOne: (message) => chosen.getNumTokens(message.content),
      sliced: false,
    };
  }
  throw new TypeError(
    `\`${optionName}\` must be a function (messages) => number or an object with getNumTokens(), got ${describeValue(chosen)}`,
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * Thrown inside a synchronous pass that must wait: the counter turned out to
 * be asynchronous (`everything`), or the time slice is used up or a long text
 * goes on counting in later slices. The caller awaits
 * {@link MessageCounts.settle} and runs the pass again; counts made so far are
 * kept, so the pass gets further each time.
 */
export class AsyncCountNeeded {
  constructor(
    /** Whether every message is being counted at once (an asynchronous counter), rather than a pause for one slice. */
    readonly everything: boolean,
  ) {}
}
const COUNT_EVERYTHING = new AsyncCountNeeded(true);
const WAIT_FOR_SLICE = new AsyncCountNeeded(false);

/**
 * The token counts of one list during one compaction. Each message is
 * counted at most once, lazily, on first need, and looked up in (and written
 * to) the shared cache, so work is in proportion to what the selection reads.
 *
 * Synchronous counters are called synchronously; a pass that must wait is
 * stopped with {@link AsyncCountNeeded}, after which the caller awaits
 * {@link settle} and runs the pass again:
 * - the first promise an asynchronous counter returns: every message is then
 *   counted at once ({@link countAll}, the calls running concurrently);
 * - a time slice used up (see `time-slices.ts`), once the pass counted at
 *   least one message in it (so each run gets further): the next slice;
 * - the built-in tiktoken counter's long text that goes on counting in later
 *   slices: that count.
 */
export class MessageCounts {
  /** Counts known so far, by index: a lazy compaction of a long history reads a few dozen. */
  private readonly counts = new Map<number, number>();
  /** Made on first use: only an asynchronous counter or a long text counted in slices leaves a count pending. */
  private pending: Map<number, Promise<unknown>> | null = null;
  /**
   * The sum of every count known so far. Each is finite, but their sum may not
   * be (a counter returning 1e308 twice): every total the rules form is a sum
   * over some of these messages, so keeping this one finite keeps them all finite.
   */
  private knownTotal = 0;

  private readonly cache: TokenCountCache | null;
  /** Whether the counter answered with a promise (and is not the built-in one counting in slices): then every message is counted at once. */
  private asynchronous = false;
  /** The slice in which this list last counted a message. */
  private lastSlice = -1;

  constructor(
    private readonly messages: readonly BaseMessage[],
    private readonly counter: MessageCounter,
    cache: TokenCountCache | null,
    /** Stops counting in slices once aborted (the work then rejects with its reason). */
    private readonly signal?: AbortSignal,
  ) {
    this.cache = cache;
  }

  /** The tokens of message `index`, counting it now if needed; throws {@link AsyncCountNeeded} when the pass must wait. */
  of(index: number): number {
    const known = this.known(index);
    if (known !== undefined) return known;
    const message = this.messages[index]!;
    const cached = this.cache?.get(this.counter.key, message);
    if (cached !== undefined) return this.record(index, cached);
    // Only after a count in this very slice: a pass run again after a pause always counts at least one more message.
    if (this.lastSlice === currentSlice() && sliceUsedUp()) throw WAIT_FOR_SLICE;
    this.lastSlice = currentSlice();
    const result = this.call(index);
    if (isThenable(result)) {
      const promise = Promise.resolve(result);
      promise.catch(() => undefined); // awaited (and its error reported) by settle or countAll
      (this.pending ??= new Map()).set(index, promise);
      if (this.counter.sliced) throw WAIT_FOR_SLICE;
      this.asynchronous = true;
      throw COUNT_EVERYTHING;
    }
    return this.accept(index, result);
  }

  /** What a pass stopped by {@link AsyncCountNeeded} awaits before it runs again (see the class comment). */
  async settle(): Promise<void> {
    if (this.asynchronous) return this.countAll();
    const pending = this.pending;
    this.pending = null;
    if (pending === null) return nextSlice(this.signal);
    await Promise.all([...pending].map(([index, started]) => this.settled(index, started)));
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
    const work: Promise<void>[] = [];
    const pending = this.pending;
    this.pending = null;
    for (let index = 0; index < this.messages.length; index += 1) {
      if (this.known(index) !== undefined) continue;
      const message = this.messages[index]!;
      const cached = this.cache?.get(this.counter.key, message);
      if (cached !== undefined) {
        this.record(index, cached);
        continue;
      }
      if (sliceUsedUp()) await nextSlice(this.signal);
      const started = pending?.get(index) ?? this.call(index);
      if (!isThenable(started)) {
        this.accept(index, started);
        continue;
      }
      work.push(this.settled(index, started));
    }
    await Promise.all(work);
  }

  /** Records the count `started` resolves to (or rejects with its error, wrapped). */
  private settled(index: number, started: PromiseLike<unknown>): Promise<void> {
    return Promise.resolve(started).then(
      (value) => void this.accept(index, value),
      (error: unknown) => {
        throw this.wrapThrown(index, error);
      },
    );
  }

  private call(index: number): unknown {
    try {
      return this.counter.countOne(this.messages[index]!, this.signal);
    } catch (error) {
      throw this.wrapThrown(index, error);
    }
  }

  private wrapThrown(index: number, error: unknown): unknown {
    // An abort is the caller's, not the counter's failure: it goes on as it is.
    if (error instanceof TokenCounterError || (this.signal?.aborted === true && error === this.signal.reason)) return error;
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
    this.counts.set(index, value);
    return value;
  }

  private known(index: number): number | undefined {
    return this.counts.get(index);
  }

  private accept(index: number, value: unknown): number {
    // No closure or message text unless the value is wrong: this runs once per message counted.
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw this.badCount(index, value);
    this.record(index, value);
    this.cache?.set(this.counter.key, this.messages[index]!, value);
    return value;
  }
}

/** The tokens of every message in `messages`, awaiting an asynchronous counter, through `cache`, in time slices stopped by `signal`. */
export async function countTotal(
  messages: readonly BaseMessage[],
  counter: MessageCounter,
  cache: TokenCountCache | null,
  signal?: AbortSignal,
): Promise<number> {
  if (messages.length === 0) return 0;
  return new MessageCounts(messages, counter, cache, signal).total();
}
