/**
 * The three chat-message stores the history wrapper rewrites atomically
 * without being told (in memory, Redis, PostgreSQL), each on its real
 * server, for tests that run the same scenario over each.
 */
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { RedisChatMessageHistory } from "@langchain/redis";
import { Pool } from "pg";
import { createClient } from "redis";
import { POSTGRES_URL, REDIS_URL, requireServer } from "./servers";

export interface StoreKind {
  name: string;
  /** Whether its server answered (always, in memory); a test of an unavailable kind returns early. */
  available: () => boolean;
  /** A new handle (another process's view) on the shared session `id`. */
  open: (id: string) => Promise<BaseListChatMessageHistory>;
}

/** The kinds, and what a test reaching past them needs: whether each server answered, the pool, the table. */
export interface Stores {
  kinds: StoreKind[];
  redisUp: () => boolean;
  pgUp: () => boolean;
  /** The PostgreSQL pool (only once `pgUp()`). */
  pool: () => Pool;
  /** The PostgreSQL table the histories use. */
  tableName: string;
}

/**
 * The three kinds, with the hooks of the calling test file that reach the
 * servers before its tests and, after them, delete the Redis keys and drop
 * the PostgreSQL table (`${table}_${pid}`) they used. Call it at the top of
 * a test file.
 */
export function storeKinds(table: string): Stores {
  const redisClients: ReturnType<typeof createClient>[] = [];
  const redisKeys: string[] = [];
  const memorySessions = new Map<string, InMemoryChatMessageHistory>();
  const tableName = `${table}_${process.pid}`;
  let redisUp = false;
  let pgUp = false;
  let pool: Pool | undefined;

  beforeAll(async () => {
    redisUp = await requireServer("Redis", REDIS_URL);
    pgUp = await requireServer("PostgreSQL", POSTGRES_URL);
    if (pgUp) pool = new Pool({ connectionString: POSTGRES_URL, max: 8 });
  });
  afterAll(async () => {
    if (redisClients.length > 0 && redisKeys.length > 0) await redisClients[0]!.del(redisKeys);
    await Promise.all(redisClients.map((client) => client.quit()));
    if (pool) {
      await pool.query(`DROP TABLE IF EXISTS ${tableName}`);
      await pool.end();
    }
  });

  const kinds: StoreKind[] = [
    {
      name: "InMemoryChatMessageHistory",
      available: () => true,
      open: async (id) => {
        if (!memorySessions.has(id)) memorySessions.set(id, new InMemoryChatMessageHistory());
        return memorySessions.get(id)!;
      },
    },
    {
      name: "RedisChatMessageHistory",
      available: () => redisUp,
      open: async (id) => {
        const client = createClient({ url: REDIS_URL });
        await client.connect();
        redisClients.push(client);
        if (!redisKeys.includes(id)) redisKeys.push(id);
        return new RedisChatMessageHistory({ sessionId: id, client });
      },
    },
    {
      name: "PostgresChatMessageHistory",
      available: () => pgUp,
      open: async (id) => new PostgresChatMessageHistory({ sessionId: id, pool: pool!, tableName }),
    },
  ];
  return { kinds, redisUp: () => redisUp, pgUp: () => pgUp, pool: () => pool!, tableName };
}
