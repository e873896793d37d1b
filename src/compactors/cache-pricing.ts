import { assertTokenBudget, describeValue } from "../errors";

/** Options of {@link cacheAwareMinGain}: the provider's cache prices and what a compaction rewrites. */
export interface CacheAwareMinGainOptions {
  /**
   * The request's size when a compaction runs, in tokens: the prefix the
   * provider holds cached and the compaction rewrites. With the hook, the
   * trigger's level (`contextWindow × compactAt`).
   */
  contextTokens: number;
  /**
   * What writing a token to the cache costs, as a multiple of an uncached
   * input token: Anthropic `1.25` (five-minute cache); OpenAI `1` (no write
   * premium: the first request after a change is billed as uncached input).
   */
  cacheWriteMultiplier: number;
  /**
   * What reading a cached token costs, as a multiple of an uncached input
   * token: Anthropic `0.1`; OpenAI `0.1` for current models, `0.5` for older ones.
   */
  cacheReadMultiplier: number;
  /**
   * How many model calls are expected from this compaction to the next one,
   * the first call after it included: the calls over which the saved tokens
   * pay back the cache rewrite. At least 1; need not be whole (an average).
   */
  expectedCallsBeforeNextCompaction: number;
  /**
   * The leading tokens a compaction leaves as they were, so that they stay
   * cached: the system prompt and tool schemas (and, with a provider-native
   * compaction marker, everything up to it). Default `0`. At most `contextTokens`.
   */
  unchangedPrefixTokens?: number;
}

function assertMultiplier(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number") throw new TypeError(`\`${name}\` must be a finite number of at least 0, got ${describeValue(value)}`);
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`\`${name}\` must be a finite number of at least 0, got ${describeValue(value)}`);
}

/**
 * The fewest tokens a compaction must free to pay for the prompt-cache
 * rewrite it causes, for `CompactionHookOptions.minGainTokens` (and the
 * integrations that pass it on).
 *
 * The rule, with `T` = `contextTokens`, `S` = `unchangedPrefixTokens`, `G` the
 * tokens the compaction frees, `w`/`r` the write/read multipliers and `N`
 * the calls expected before the next compaction, prices the same `N` calls
 * both ways (what the conversation adds meanwhile is the same either way):
 *
 * - not compacting: every call reads the `T` cached tokens: `N·T·r`;
 * - compacting: the first call reads the `S` unchanged tokens and writes the
 *   other `T − G − S` to the cache, the `N − 1` after it read `T − G`:
 *   `S·r + (T − G − S)·w + (N − 1)·(T − G)·r`.
 *
 * Compacting is worth it when its cost is no higher, which holds exactly
 * when `G ≥ (T − S)·(w − r) / (w + (N − 1)·r)`; that bound, rounded up (and
 * `0` when reading costs no less than writing), is returned. A compaction
 * that frees fewer tokens is declined by the hook, and the conversation is
 * compacted later, when the gain is larger. Anthropic's `clear_at_least` is
 * a floor of the same kind, but one the caller must guess.
 *
 * @example
 * ```ts
 * const contextWindow = 200_000;
 * const minGainTokens = cacheAwareMinGain({
 *   contextTokens: contextWindow * 0.7,
 *   cacheWriteMultiplier: 1.25,
 *   cacheReadMultiplier: 0.1,
 *   expectedCallsBeforeNextCompaction: 20,
 *   unchangedPrefixTokens: 3_000,
 * });
 * const hook = new CompactionHook({ contextWindow, compactAt: 0.7, minGainTokens });
 * ```
 */
export function cacheAwareMinGain(options: CacheAwareMinGainOptions): number {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`cacheAwareMinGain options must be an object, got ${describeValue(options)}`);
  }
  const { contextTokens, cacheWriteMultiplier, cacheReadMultiplier, expectedCallsBeforeNextCompaction, unchangedPrefixTokens = 0 } = options;
  assertTokenBudget("contextTokens", contextTokens);
  assertMultiplier("cacheWriteMultiplier", cacheWriteMultiplier);
  assertMultiplier("cacheReadMultiplier", cacheReadMultiplier);
  const calls = expectedCallsBeforeNextCompaction;
  if (typeof calls !== "number") {
    throw new TypeError(`\`expectedCallsBeforeNextCompaction\` must be a finite number of at least 1, got ${describeValue(calls)}`);
  }
  if (!Number.isFinite(calls) || calls < 1) {
    throw new RangeError(`\`expectedCallsBeforeNextCompaction\` must be a finite number of at least 1, got ${describeValue(calls)}`);
  }
  assertTokenBudget("unchangedPrefixTokens", unchangedPrefixTokens);
  if (unchangedPrefixTokens > contextTokens) {
    throw new RangeError(`\`unchangedPrefixTokens\` (${unchangedPrefixTokens}) must be at most \`contextTokens\` (${contextTokens})`);
  }
  const premium = cacheWriteMultiplier - cacheReadMultiplier;
  // Reading no cheaper than writing: a rewrite costs nothing extra (and with both 0, nothing at all).
  if (premium <= 0) return 0;
  const spread = cacheWriteMultiplier + (calls - 1) * cacheReadMultiplier;
  const bound = ((contextTokens - unchangedPrefixTokens) * premium) / spread;
  // Rounding error must not lift a bound that is a whole number to the next one.
  return Math.max(0, Math.ceil(bound - 1e-9 * Math.max(1, bound)));
}
