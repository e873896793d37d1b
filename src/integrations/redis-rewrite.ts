import { mapStoredMessagesToChatMessages } from "@langchain/core/messages";
import type { StoredMessage } from "@langchain/core/messages";
import { assertWholeNumber, describeValue } from "../errors";
import { throwIfAborted } from "../compactors/abort";
import { mapInSlices } from "../time-slices";
import { assertRewriteLists, namespaceOf, storedForm, storedFormInSlices } from "./store-rewrite";
import type { StoreRewrite } from "./store-rewrite";

/** The part of a node-redis v4 client this helper uses. */
export interface RedisRewriteClient {
  /** node-redis: connected and ready for commands (else the helper connects first). */
  isReady: boolean;
  /** node-redis: the socket is open, connected or reconnecting (`connect()` then throws "Socket already opened"). */
  isOpen?: boolean;
  /** Opens the connection (node-redis v4 `connect`). */
  connect(): Promise<unknown>;
  /** The list's elements from `start` to `stop` (Redis `LRANGE`), to read the stored session. */
  lRange(key: string, start: number, stop: number): Promise<string[]>;
  /** Runs a Lua script on the server (Redis `EVAL`): the rewrite's check and replace, in one atomic step. */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Where `RedisChatMessageHistory` from `@langchain/redis` keeps a session: the client it was given, its `sessionId` and `sessionTTL`. */
export interface RedisListHistoryLike {
  /** The node-redis client the history was given. */
  client: RedisRewriteClient;
  /** The session's key: the list the messages are stored in. */
  sessionId: string;
  /** The session's time to live, in seconds, renewed by the rewrite as the store renews it on a write (none when absent). */
  sessionTTL?: number;
}

/** Whether `history` is `@langchain/redis`'s `RedisChatMessageHistory` with a node-redis client (by its namespace and fields; no `instanceof`). */
export function isRedisListHistory(history: unknown): history is RedisListHistoryLike {
  const candidate = history as Partial<RedisListHistoryLike> | null;
  return (
    namespaceOf(history) === "langchain/stores/message/redis" &&
    typeof candidate?.sessionId === "string" &&
    typeof candidate.client?.eval === "function" &&
    typeof candidate.client.lRange === "function"
  );
}

/**
 * Runs on the server, so nothing can interleave. The store pushes each new
 * message at the head, so the oldest messages are the tail: it checks that
 * the tail still holds the expected messages byte for byte, cuts them off
 * (whatever was appended since stays at the head) and pushes the new list
 * onto the tail, oldest last.
 * KEYS[1]: the list. ARGV: n, ttl, n expected values (oldest first), then the new values (oldest first).
 */
const REPLACE_OLDEST = `
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local len = redis.call('LLEN', KEYS[1])
if len < n then return 0 end
if n > 0 then
  local tail = redis.call('LRANGE', KEYS[1], -n, -1)
  for k = 0, n - 1 do
    if tail[n - k] ~= ARGV[3 + k] then return 0 end
  end
  if len == n then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, len - n - 1) end
end
for i = #ARGV, 3 + n, -1 do redis.call('RPUSH', KEYS[1], ARGV[i]) end
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 1
`;

/**
 * Whether the client needs no `connect()`: node-redis says so by `isOpen`,
 * which stays true while it reconnects after a dropped connection (commands
 * then wait in its queue); a client without `isOpen` is asked `isReady`.
 */
function isOpen(client: RedisRewriteClient): boolean {
  return typeof client.isOpen === "boolean" ? client.isOpen : client.isReady;
}

/**
 * An atomic {@link StoreRewrite} for `RedisChatMessageHistory`: one Lua
 * script replaces the session's oldest messages, if they are still the
 * expected ones, by the compacted list, and keeps every message appended
 * since after it. Parallel writers never lose an append, a competing rewrite
 * makes it refuse, and a crash leaves the old list or the new one.
 *
 * The client is the caller's (or the store's): the rewrite connects it when
 * it was never opened, and adds no listener to it. A node-redis client emits
 * `'error'` whenever its connection drops, during a rewrite or not, and with
 * no listener that kills the process: give it one (`client.on("error", ...)`;
 * for a store built from `config`, on `store.client`). A drop during the
 * rewrite rejects it or lets it finish after the reconnect; the script runs
 * whole or not at all.
 *
 * @example
 * ```ts
 * const store = new RedisChatMessageHistory({ sessionId, client });
 * const rewrite = redisListRewrite({ client, sessionId });
 * const history = new CompactingChatMessageHistory({ history: store, targetTokens: 4_000, mode: "commit", rewrite });
 * ```
 */
export function redisListRewrite(session: RedisListHistoryLike): StoreRewrite {
  if (typeof session !== "object" || session === null || typeof session.client?.eval !== "function" || typeof session.client.lRange !== "function") {
    throw new TypeError(`\`client\` must be a node-redis v4 client, got ${describeValue(session?.client)}`);
  }
  if (typeof session.sessionId !== "string" || session.sessionId === "") {
    throw new TypeError(`\`sessionId\` must be a non-empty string, got ${describeValue(session.sessionId)}`);
  }
  const { client, sessionId } = session;
  // The store reads a missing or null TTL as none. Anything else but a whole number of seconds would fail in the
  // script after its writes, which an error does not undo: the rewrite would reject with the store rewritten.
  // (A negative TTL would have the store's own EXPIRE delete the session.)
  const sessionTTL = session.sessionTTL ?? 0;
  assertWholeNumber("sessionTTL", sessionTTL);
  return async (expected, next, options) => {
    assertRewriteLists(expected, next);
    const signal = options?.signal;
    if (!isOpen(client)) await client.connect();
    // The raw values as stored: the script compares bytes, and a message read back may re-serialize differently.
    const raw = (await client.lRange(sessionId, 0, -1)).reverse();
    // Serialized in time slices: a long session's messages take hundreds of milliseconds.
    const current = await mapInSlices(raw, (item) => storedForm(mapStoredMessagesToChatMessages([JSON.parse(item) as StoredMessage]))[0]!, signal);
    const want = await storedFormInSlices(expected, signal);
    if (current.length < want.length || want.some((item, index) => item !== current[index])) return false;
    const values = await storedFormInSlices(next, signal);
    // Abandoned meanwhile: nothing is written. Once sent, the script is one atomic step.
    throwIfAborted(signal);
    const result = await client.eval(REPLACE_OLDEST, {
      keys: [sessionId],
      arguments: [String(want.length), String(sessionTTL), ...raw.slice(0, want.length), ...values],
    });
    return result === 1;
  };
}
