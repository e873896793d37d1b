import { inMemoryRewrite, isInMemoryHistory } from "./in-memory-rewrite";
import type { StoreRewrite } from "./store-rewrite";
import { isPostgresHistory, postgresRewrite } from "./postgres-rewrite";
import { isRedisListHistory, redisListRewrite } from "./redis-rewrite";

/** The stores whose atomic rewrite the history wrapper picks by itself. */
export const RECOGNISED_STORES = [
  "InMemoryChatMessageHistory (@langchain/core)",
  "RedisChatMessageHistory (@langchain/redis)",
  "PostgresChatMessageHistory (@langchain/community)",
] as const;

/**
 * The atomic rewrite for a recognised store, or `null`. Recognised by the
 * store's `lc_namespace` and the fields the rewrite uses, never by
 * `instanceof` (the user's copy of a package may not be ours). A subclass
 * that keeps its messages elsewhere than its parent must pass its own rewrite.
 */
export function recognisedRewrite(history: unknown): StoreRewrite | null {
  if (isInMemoryHistory(history)) return inMemoryRewrite(history);
  if (isRedisListHistory(history)) return redisListRewrite(history);
  if (isPostgresHistory(history)) return postgresRewrite(history);
  return null;
}
