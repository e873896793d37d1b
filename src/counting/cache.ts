import { assertTokenBudget, describeValue } from "../errors";
import type { BaseMessage } from "@langchain/core/messages";

/**
 * What a cached count was computed from. A message is recounted when any of
 * these differ from what they were at counting time:
 * - `content`: a string compared by value, an array by identity and length;
 * - `tool_calls`: by identity and length;
 * - `name` and `tool_call_id`: by value.
 *
 * So reassigning a field (`message.content = "..."`), or pushing to or
 * splicing its array, is detected. Editing an element in place (a content
 * block's `text`, a tool call's `args`) is not: LangChain treats messages as
 * immutable values, and checking every nested value would cost as much as
 * counting. After such an edit, replace the message or call
 * {@link TokenCountCache.clear}.
 */
interface CachedCount {
  count: number;
  content: unknown;
  contentLength: number;
  toolCalls: unknown;
  toolCallsLength: number;
  name: unknown;
  toolCallId: unknown;
}

interface MessageFields {
  content: unknown;
  tool_calls?: unknown;
  name?: unknown;
  tool_call_id?: unknown;
}

function lengthOf(value: unknown): number {
  return Array.isArray(value) ? value.length : -1;
}

function isCurrent(entry: CachedCount, message: BaseMessage): boolean {
  const fields = message as unknown as MessageFields;
  return (
    entry.content === fields.content &&
    entry.contentLength === lengthOf(fields.content) &&
    entry.toolCalls === fields.tool_calls &&
    entry.toolCallsLength === lengthOf(fields.tool_calls) &&
    entry.name === fields.name &&
    entry.toolCallId === fields.tool_call_id
  );
}

/** The error for a key a `WeakMap` cannot hold (a counter key or a message that is no object). */
function badKey(name: string, value: unknown): TypeError {
  return new TypeError(`\`${name}\` must be an object, got ${describeValue(value)}`);
}

/**
 * Marks a {@link TokenCountCache} under a registry symbol, the same in every
 * copy of this package, as `@langchain/core` marks its messages for
 * `isInstance`. The methods alone would not do: a `Map` has `get`, `set` and
 * `clear` too.
 */
const TOKEN_COUNT_CACHE_BRAND = Symbol.for("langchain-compaction.TokenCountCache");

/**
 * Token counts remembered per counter and per message object. Both levels
 * are `WeakMap`s: a count lives exactly as long as its message and its
 * counter, so nothing leaks however long an agent runs. The next compaction in
 * an agent loop therefore counts only the messages that are new.
 */
export class TokenCountCache {
  /** The brand by which a cache of any copy of this package is recognised (not `instanceof`: see `isTokenCountCache`). */
  readonly [TOKEN_COUNT_CACHE_BRAND] = true;
  private byCounter = new WeakMap<object, WeakMap<BaseMessage, CachedCount>>();

  /** The cached count of `message` under `counterKey`, or `undefined` when absent or stale. */
  get(counterKey: object, message: BaseMessage): number | undefined {
    const entry = this.byCounter.get(counterKey)?.get(message);
    return entry !== undefined && isCurrent(entry, message) ? entry.count : undefined;
  }

  /**
   * Remembers `count` for `message` under `counterKey`, with what it was
   * computed from. A count that is not a finite number of at least 0 is
   * refused (`TypeError` for a non-number, else `RangeError`, naming it):
   * once cached, every compaction would read it back.
   */
  set(counterKey: object, message: BaseMessage, count: number): void {
    // Runs once per message counted: the checks build no text unless one fails.
    if (typeof counterKey !== "function" && (typeof counterKey !== "object" || counterKey === null)) throw badKey("counterKey", counterKey);
    if (typeof message !== "object" || message === null) throw badKey("message", message);
    assertTokenBudget("count", count);
    let counts = this.byCounter.get(counterKey);
    if (counts === undefined) {
      counts = new WeakMap();
      this.byCounter.set(counterKey, counts);
    }
    const fields = message as unknown as MessageFields;
    counts.set(message, {
      count,
      content: fields.content,
      contentLength: lengthOf(fields.content),
      toolCalls: fields.tool_calls,
      toolCallsLength: lengthOf(fields.tool_calls),
      name: fields.name,
      toolCallId: fields.tool_call_id,
    });
  }

  /** Forgets every count (of one counter, when given). */
  clear(counterKey?: object): void {
    if (counterKey === undefined) this.byCounter = new WeakMap();
    else this.byCounter.delete(counterKey);
  }
}

/**
 * Whether `value` is a {@link TokenCountCache} of any copy of this package:
 * it carries the brand and the methods a compactor calls. Not `instanceof`:
 * this package can be loaded twice in one process (its ES-module and its
 * CommonJS build), and a cache made by one copy must be accepted by the other.
 */
export function isTokenCountCache(value: unknown): value is TokenCountCache {
  if (typeof value !== "object" || value === null) return false;
  const cache = value as Record<PropertyKey, unknown>;
  return (
    cache[TOKEN_COUNT_CACHE_BRAND] === true &&
    typeof cache.get === "function" &&
    typeof cache.set === "function" &&
    typeof cache.clear === "function"
  );
}

/**
 * Where the shared cache lives: a registry symbol on `globalThis`, so the
 * ES-module and the CommonJS build of this package, when an app loads both
 * (the dual-package hazard), share one cache rather than each keeping its
 * own. Then `sharedTokenCountCache.clear()` from either copy forgets every
 * count, and a count made through one copy is reused by the other when the
 * same counter function is used (counts stay keyed by counter, so copies with
 * different built-in counters never read each other's entries). The key names
 * the entry format (`v1`): a release that changes what an entry holds takes a
 * new key rather than reading another version's entries.
 */
const SHARED_CACHE_KEY = Symbol.for("langchain-compaction.sharedTokenCountCache.v1");

function sharedCache(): TokenCountCache {
  const registry = globalThis as { [SHARED_CACHE_KEY]?: unknown };
  const existing = registry[SHARED_CACHE_KEY];
  if (isTokenCountCache(existing)) return existing;
  const created = new TokenCountCache();
  Object.defineProperty(registry, SHARED_CACHE_KEY, { value: created, configurable: false, enumerable: false, writable: false });
  return created;
}

/**
 * The cache every compactor uses unless given its own (or `null` for none).
 * One per process, shared by every loaded copy of this package (see above).
 */
export const sharedTokenCountCache: TokenCountCache = sharedCache();

/**
 * Throws unless a compactor's `cache` option is a {@link TokenCountCache}
 * (recognised by its brand, from either build of this package) or `null`.
 */
export function assertCacheOption(cache: unknown): asserts cache is TokenCountCache | null {
  if (cache !== null && !isTokenCountCache(cache)) {
    throw new TypeError(`\`cache\` must be a TokenCountCache or null, got ${describeValue(cache)}`);
  }
}
