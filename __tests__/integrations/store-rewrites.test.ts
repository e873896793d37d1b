/**
 * Rules of the atomic store rewrites that a mutation run of the history suites showed unpinned (TESTING.md): each rewrite refuses a bad store with a TypeError naming the value, a store is recognised only
 * with every field its rewrite uses, and each rewrite's compare, replacement and refusal hold at their edges (the
 * whole list, a longer replacement, an empty one, copies of the expected messages). Redis and PostgreSQL are the
 * real servers (REDIS_URL, POSTGRES_URL).
 */
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { RedisChatMessageHistory } from "@langchain/redis";
import { Pool } from "pg";
import { createClient } from "redis";
import { CompactingChatMessageHistory, inMemoryRewrite, postgresRewrite, redisListRewrite } from "../../src";
import type { PostgresPoolClient } from "../../src";
import { comparableForm, startsWith, storedForm } from "../../src/integrations/store-rewrite";
import { POSTGRES_URL, REDIS_URL, requireServer } from "../support/servers";

const keys = (messages: readonly BaseMessage[]) => comparableForm(messages);
const texts = (messages: readonly BaseMessage[]) => messages.map((message) => message.text);
const letters = (...names: string[]): BaseMessage[] => names.map((name, index) => (index % 2 === 0 ? new HumanMessage(name) : new AIMessage(name)));

/** A store shell with a namespace and given fields: what the wrapper sees of a subclass or a look-alike. */
function lookAlike(namespace: string[], fields: Record<string, unknown>): BaseListChatMessageHistory {
  return Object.assign(
    new (class extends BaseListChatMessageHistory {
      lc_namespace = namespace;
      async getMessages() {
        return [];
      }
      async addMessage() {}
    })(),
    fields,
  );
}

/** Commit mode with no `rewrite` over `history`: fails with the "none of the recognised stores" error when the store is not recognised. */
const commitOver = (history: BaseListChatMessageHistory) => () => new CompactingChatMessageHistory({ history, targetTokens: 100, mode: "commit" });
const NOT_RECOGNISED = /is none of the recognised stores/;
/** Another package's store that happens to carry the same fields: never taken for one of ours. */
const FOREIGN = ["acme", "stores", "message", "cache"];

describe("the comparable form and the prefix check", () => {
  test("the comparable form is the stored form with every object's keys sorted, nulls and strings kept", () => {
    const message = new AIMessage({ content: "the plan", additional_kwargs: { zeta: null, alpha: "kept", nested: { b: [1, "two", null], a: "x" } } });
    const [comparable] = comparableForm([message]);
    expect(JSON.parse(comparable!)).toEqual(JSON.parse(storedForm([message])[0]!));
    const sorted = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.every(sorted)
        : typeof value !== "object" || value === null || (Object.keys(value).join() === Object.keys(value).sort().join() && Object.values(value).every(sorted));
    expect(sorted(JSON.parse(comparable!))).toBe(true);
    expect(comparable).toContain('"alpha":"kept"');
    expect(comparable).toContain('"zeta":null');
  });

  test("startsWith: a list starts with itself and with nothing, not with a longer list or another first item", () => {
    expect(startsWith(["a", "b"], ["a", "b"])).toBe(true);
    expect(startsWith(["a", "b"], [])).toBe(true);
    expect(startsWith(["a", "b"], ["a"])).toBe(true);
    expect(startsWith(["a"], ["a", "b"])).toBe(false);
    expect(startsWith(["a", "b"], ["b"])).toBe(false);
  });
});

describe("inMemoryRewrite", () => {
  test.each([
    [null, "null"],
    ["messages", '"messages"'],
    [{ messages: "all of them" }, "an object"],
    [{}, "an object"],
    [Object.assign(function listHolder() {}, { messages: [] }), "function listHolder"],
  ])("store %p is a TypeError naming it", (store, named) => {
    expect(() => inMemoryRewrite(store as never)).toThrow(TypeError);
    expect(() => inMemoryRewrite(store as never)).toThrow(
      `\`history\` must be an InMemoryChatMessageHistory (an object with a \`messages\` array), got ${named}`,
    );
  });

  test("replaces the oldest messages, the whole list included, and keeps the rest behind", async () => {
    const store = new InMemoryChatMessageHistory(letters("a", "b", "c", "d", "e"));
    const rewrite = inMemoryRewrite(store as never);
    expect(await rewrite((await store.getMessages()).slice(0, 2), [new HumanMessage("ab")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["ab", "c", "d", "e"]);
    expect(await rewrite(await store.getMessages(), [new HumanMessage("all")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["all"]);
  });

  test("equal copies of the expected messages (as read back from a store) are accepted", async () => {
    const store = new InMemoryChatMessageHistory(letters("a", "b", "c"));
    const copies = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages(await store.getMessages()));
    expect(copies[0]).not.toBe((await store.getMessages())[0]);
    expect(await inMemoryRewrite(store as never)(copies.slice(0, 2), [new HumanMessage("ab")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["ab", "c"]);
  });

  test("refuses, changing nothing, when an expected message differs or the store holds fewer", async () => {
    const store = new InMemoryChatMessageHistory(letters("a", "b", "c"));
    const rewrite = inMemoryRewrite(store as never);
    expect(await rewrite(letters("a", "B"), [new HumanMessage("x")])).toBe(false);
    expect(await rewrite(letters("a", "b", "c", "d"), [new HumanMessage("x")])).toBe(false);
    expect(texts(await store.getMessages())).toEqual(["a", "b", "c"]);
  });

  test("recognised only with its messages array", () => {
    const namespace = ["langchain", "stores", "message", "in_memory"];
    expect(commitOver(lookAlike(namespace, { messages: "elsewhere" }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(FOREIGN, { messages: [] }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { messages: [] }))).not.toThrow();
  });
});

describe("redisListRewrite: its arguments", () => {
  const client = { eval: async () => 1, lRange: async () => [], isReady: true, connect: async () => undefined };

  test("the client must have eval and lRange; the session must be an object", () => {
    const cases: [unknown, string][] = [
      [null, "undefined"],
      [{ client: null, sessionId: "s" }, "null"],
      [{ client: { eval: client.eval }, sessionId: "s" }, "an object"],
      [{ client: { lRange: client.lRange }, sessionId: "s" }, "an object"],
      [Object.assign(() => undefined, { client, sessionId: "s" }), "an object"],
    ];
    for (const [session, named] of cases) {
      expect(() => redisListRewrite(session as never)).toThrow(TypeError);
      expect(() => redisListRewrite(session as never)).toThrow(`\`client\` must be a node-redis v4 client, got ${named}`);
    }
  });

  test.each([
    ["", '""'],
    [5, "5"],
    [undefined, "undefined"],
  ])("sessionId %p is a TypeError naming it", (sessionId, named) => {
    expect(() => redisListRewrite({ client, sessionId } as never)).toThrow(TypeError);
    expect(() => redisListRewrite({ client, sessionId } as never)).toThrow(`\`sessionId\` must be a non-empty string, got ${named}`);
  });

  test("recognised only with a string sessionId and a client with eval and lRange", () => {
    const namespace = ["langchain", "stores", "message", "redis"];
    expect(commitOver(lookAlike(namespace, { sessionId: 5, client }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(FOREIGN, { sessionId: "s", client }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { sessionId: "s", client: { eval: client.eval } }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { sessionId: "s", client: { lRange: client.lRange } }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { sessionId: "s", client }))).not.toThrow();
  });
});

describe("postgresRewrite: its arguments", () => {
  const pool = { connect: async () => ({}) as PostgresPoolClient };

  test.each([
    [null, "null"],
    ["pg", '"pg"'],
    [{ pool: {}, tableName: "t", sessionId: "s" }, "an object"],
    [{ tableName: "t", sessionId: "s" }, "an object"],
    [Object.assign(function poolHolder() {}, { pool, tableName: "t", sessionId: "s" }), "function poolHolder"],
  ])("store %p is a TypeError naming it", (store, named) => {
    expect(() => postgresRewrite(store as never)).toThrow(TypeError);
    expect(() => postgresRewrite(store as never)).toThrow(`\`history\` must be a PostgresChatMessageHistory (with a \`pg\` pool), got ${named}`);
  });

  test("sessionId and tableName must be non-empty strings", () => {
    for (const [field, value, named] of [
      ["sessionId", "", '""'],
      ["sessionId", 5, "5"],
      ["tableName", "", '""'],
      ["tableName", null, "null"],
    ] as const) {
      const store = { pool, tableName: "t", sessionId: "s", [field]: value };
      expect(() => postgresRewrite(store as never)).toThrow(TypeError);
      expect(() => postgresRewrite(store as never)).toThrow(`\`${field}\` must be a non-empty string, got ${named}`);
    }
  });

  test("recognised only with a string sessionId, a string tableName and a pool that connects", () => {
    const namespace = ["langchain", "stores", "message", "postgres"];
    expect(commitOver(lookAlike(namespace, { pool, tableName: "t", sessionId: 5 }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(FOREIGN, { pool, tableName: "t", sessionId: "s" }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { pool, tableName: 5, sessionId: "s" }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { pool: {}, tableName: "t", sessionId: "s" }))).toThrow(NOT_RECOGNISED);
    expect(commitOver(lookAlike(namespace, { pool, tableName: "t", sessionId: "s" }))).not.toThrow();
  });
});

describe("the lists a rewrite is given are checked before the store is read or written", () => {
  const BAD_LISTS: [unknown, unknown, string, string][] = [
    ["all", [], "`expected` must be an array of BaseMessage", 'got "all"'],
    [[], null, "`next` must be an array of BaseMessage", "got null"],
    [[], [new HumanMessage("kept"), { role: "user", content: "hi" }], "`next[1]` must be a BaseMessage", "got an object"],
    [[{ type: "human", content: "a" }], [], "`expected[0]` must be a BaseMessage", "got an object"],
  ];

  test.each(BAD_LISTS)("inMemoryRewrite(%p, %p): TypeError, the store untouched", async (expected, next, part, shown) => {
    const store = new InMemoryChatMessageHistory(letters("a", "b"));
    const listOf = () => (store as unknown as { messages: BaseMessage[] }).messages;
    const before = listOf();
    const rewrite = inMemoryRewrite(store as never);
    const error = await rewrite(expected as never, next as never).then(
      () => null,
      (caught: unknown) => caught as Error,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toContain(part);
    expect(error!.message).toContain(shown);
    // A plain object in the list would make every later read of the session reject.
    expect(listOf()).toBe(before);
    expect(texts(listOf())).toEqual(["a", "b"]);
  });

  test.each(BAD_LISTS)("redisListRewrite and postgresRewrite(%p, %p): TypeError before any call to the server", async (expected, next, part, shown) => {
    const calls: string[] = [];
    const client = {
      isReady: false,
      isOpen: false,
      connect: async () => void calls.push("connect"),
      lRange: async () => (calls.push("lRange"), []),
      eval: async () => (calls.push("eval"), 1),
    };
    const pool = {
      connect: async () => {
        calls.push("pool.connect");
        return {} as PostgresPoolClient;
      },
    };
    const ensureTable = async () => void calls.push("ensureTable");
    for (const rewrite of [redisListRewrite({ client, sessionId: "s" }), postgresRewrite(Object.assign({ pool, tableName: "t", sessionId: "s" }, { ensureTable }))]) {
      const error = await rewrite(expected as never, next as never).then(
        () => null,
        (caught: unknown) => caught as Error,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(error!.message).toContain(part);
      expect(error!.message).toContain(shown);
    }
    expect(calls).toEqual([]);
  });
});

describe("redisListRewrite: sessionTTL", () => {
  const client = { eval: async () => 1, lRange: async () => [], isReady: true, connect: async () => undefined };

  test.each<[unknown, typeof RangeError | typeof TypeError, string]>([
    [-5, RangeError, "-5"],
    [1.5, RangeError, "1.5"],
    [Number.NaN, RangeError, "NaN"],
    [Number.POSITIVE_INFINITY, RangeError, "Infinity"],
    ["3600", TypeError, '"3600"'],
    [{}, TypeError, "an object"],
  ])("%p is refused naming it, when the rewrite is made (the script would fail after its writes)", (sessionTTL, type, shown) => {
    const make = () => redisListRewrite({ client, sessionId: "s", sessionTTL: sessionTTL as number });
    expect(make).toThrow(type);
    expect(make).toThrow(`\`sessionTTL\` must be a whole number of at least 0, got ${shown}`);
  });

  test("missing, null and 0 mean no TTL, as in the store; a whole number of seconds is taken", () => {
    for (const sessionTTL of [undefined, null, 0, 3600]) expect(() => redisListRewrite({ client, sessionId: "s", sessionTTL: sessionTTL as number })).not.toThrow();
  });

  test("a RedisChatMessageHistory with a fractional TTL makes commit mode fail when it is set up, not at the first compaction", () => {
    const store = new RedisChatMessageHistory({ sessionId: "s", client: createClient({ url: REDIS_URL }) as never, sessionTTL: 1.5 });
    const build = () => new CompactingChatMessageHistory({ history: store, targetTokens: 100, mode: "commit" });
    expect(build).toThrow(RangeError);
    expect(build).toThrow("`sessionTTL` must be a whole number of at least 0, got 1.5");
  });
});

describe("redisListRewrite on the server", () => {
  let up = false;
  const clients: ReturnType<typeof createClient>[] = [];
  const sessions: string[] = [];
  const session = (name: string) => {
    const id = `lcc-test:store-rewrites:${process.pid}:${Date.now()}:${name}`;
    sessions.push(id);
    return id;
  };
  const client = () => {
    const made = createClient({ url: REDIS_URL });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    up = await requireServer("Redis", REDIS_URL);
  });
  afterAll(async () => {
    const open = clients.filter((c) => c.isOpen);
    if (open.length > 0 && sessions.length > 0) await open[0]!.del(sessions);
    await Promise.all(open.map((c) => c.quit()));
  });

  test("a client that is not connected yet is connected by the rewrite", async () => {
    if (!up) return;
    const id = session("connect");
    const writer = client();
    await writer.connect();
    await new RedisChatMessageHistory({ sessionId: id, client: writer }).addMessages(letters("a", "b", "c"));
    const idle = client();
    expect(idle.isReady).toBe(false);
    const rewrite = redisListRewrite({ client: idle as never, sessionId: id });
    expect(await rewrite(letters("a", "b"), [new HumanMessage("ab")])).toBe(true);
    expect(idle.isReady).toBe(true);
    expect(texts(await new RedisChatMessageHistory({ sessionId: id, client: writer }).getMessages())).toEqual(["ab", "c"]);
  });

  test("the script refuses when the oldest message changes between the client's check and the script", async () => {
    if (!up) return;
    const id = session("race");
    const writer = client();
    await writer.connect();
    const store = new RedisChatMessageHistory({ sessionId: id, client: writer });
    await store.addMessages(letters("a", "b", "c"));
    const competitor = JSON.stringify(mapChatMessagesToStoredMessages([new HumanMessage("A, rewritten by a competitor")])[0]);
    // The store keeps the oldest message at the tail (index -1).
    const racing = {
      isReady: true,
      connect: async () => undefined,
      lRange: (key: string, start: number, stop: number) => writer.lRange(key, start, stop),
      eval: async (script: string, options: { keys: string[]; arguments: string[] }) => {
        await writer.lSet(id, -1, competitor);
        return writer.eval(script, options);
      },
    };
    expect(await redisListRewrite({ client: racing, sessionId: id })(letters("a", "b"), [new HumanMessage("ab")])).toBe(false);
    expect(texts(await store.getMessages())).toEqual(["A, rewritten by a competitor", "b", "c"]);
  });

  test("refuses when the list is shorter than the expected messages", async () => {
    if (!up) return;
    const id = session("short");
    const writer = client();
    await writer.connect();
    const store = new RedisChatMessageHistory({ sessionId: id, client: writer });
    await store.addMessages(letters("a", "b"));
    expect(await redisListRewrite({ client: writer as never, sessionId: id })(letters("a", "b", "c"), [new HumanMessage("x")])).toBe(false);
    expect(texts(await store.getMessages())).toEqual(["a", "b"]);
  });
});

describe("postgresRewrite on the server", () => {
  let up = false;
  let pool: Pool | null = null;
  const table = `store_rewrites_${process.pid}`;
  const fresh = `store_rewrites_fresh_${process.pid}`;
  let counter = 0;
  const sessionId = (name: string) => `store-rewrites:${process.pid}:${(counter += 1)}:${name}`;

  beforeAll(async () => {
    up = await requireServer("PostgreSQL", POSTGRES_URL);
    if (up) pool = new Pool({ connectionString: POSTGRES_URL, max: 4 });
  });
  afterAll(async () => {
    if (pool) {
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
      await pool.query(`DROP TABLE IF EXISTS ${fresh}`);
      await pool.end();
    }
  });

  async function storeWith(id: string, messages: BaseMessage[]) {
    const store = new PostgresChatMessageHistory({ sessionId: id, pool: pool!, tableName: table });
    await store.addMessages(messages);
    return store;
  }

  test("creates the store's table when nothing has used it yet", async () => {
    if (!up) return;
    const id = sessionId("fresh");
    const store = new PostgresChatMessageHistory({ sessionId: id, pool: pool!, tableName: fresh });
    expect(await postgresRewrite(store)([], [new SystemMessage("first")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["first"]);
  });

  test("a store-like object without the store's table method works on an existing table", async () => {
    if (!up) return;
    const id = sessionId("plain");
    const store = await storeWith(id, letters("a", "b"));
    expect(await postgresRewrite({ pool: pool!, tableName: table, sessionId: id })(letters("a"), [new HumanMessage("A")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["A", "b"]);
  });

  test("a longer replacement is written in order, and the rows it overtakes move behind it", async () => {
    if (!up) return;
    const id = sessionId("longer");
    const store = await storeWith(id, letters("a", "b", "c", "d"));
    expect(await postgresRewrite(store)(letters("a"), letters("x", "y", "z"))).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["x", "y", "z", "b", "c", "d"]);
    await store.addMessage(new HumanMessage("e"));
    expect(texts(await store.getMessages())).toEqual(["x", "y", "z", "b", "c", "d", "e"]);
  });

  test("a replacement no longer than the rows it replaces never touches the rows behind them", async () => {
    if (!up) return;
    const id = sessionId("untouched");
    const store = await storeWith(id, letters("a", "b", "c", "d"));
    const idsBehind = async () => (await pool!.query(`SELECT id FROM ${table} WHERE session_id = $1 ORDER BY id`, [id])).rows.slice(-2).map((row) => row.id);
    const before = await idsBehind();
    expect(await postgresRewrite(store)(letters("a", "b"), letters("x", "y"))).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["x", "y", "c", "d"]);
    expect(await idsBehind()).toEqual(before);
    expect(await postgresRewrite(store)(letters("x", "y"), [new HumanMessage("xy")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["xy", "c", "d"]);
    expect(await idsBehind()).toEqual(before);
  });

  test("an empty replacement deletes the expected rows and keeps the rest", async () => {
    if (!up) return;
    const id = sessionId("empty");
    const store = await storeWith(id, letters("a", "b", "c"));
    expect(await postgresRewrite(store)(letters("a", "b"), [])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["c"]);
  });

  test("refuses when the session holds fewer rows than expected", async () => {
    if (!up) return;
    const id = sessionId("fewer");
    const store = await storeWith(id, letters("a", "b"));
    expect(await postgresRewrite(store)(letters("a", "b", "c"), [new HumanMessage("x")])).toBe(false);
    expect(texts(await store.getMessages())).toEqual(["a", "b"]);
  });

  test("a DELETE that removes fewer rows than it locked rolls everything back and refuses", async () => {
    if (!up) return;
    const id = sessionId("vanished");
    const store = await storeWith(id, letters("a", "b", "c"));
    // Inside the transaction, just before the rewrite's DELETE, one expected row disappears (a trigger, a rule, a bug).
    const losingPool = {
      connect: async () => {
        const inner = await pool!.connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            if (text.startsWith("DELETE")) await inner.query(`DELETE FROM ${table} WHERE id = (SELECT min(id) FROM ${table} WHERE session_id = $1)`, [id]);
            return inner.query(text, values);
          },
          release: (destroy?: boolean | Error) => inner.release(destroy),
        };
      },
    };
    expect(await postgresRewrite({ pool: losingPool, tableName: table, sessionId: id })(letters("a", "b"), [new HumanMessage("x")])).toBe(false);
    expect(texts(await store.getMessages())).toEqual(["a", "b", "c"]);
  });

  test("the connection goes back to the pool after a rewrite, and is destroyed after a failure", async () => {
    if (!up) return;
    const id = sessionId("release");
    await storeWith(id, letters("a", "b"));
    const released: (boolean | Error | undefined)[] = [];
    let failing = false;
    const watchedPool = {
      connect: async () => {
        const inner = await pool!.connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            if (failing && text.startsWith("INSERT")) throw new Error("connection lost");
            return inner.query(text, values);
          },
          release: (destroy?: boolean | Error) => {
            released.push(destroy);
            inner.release(destroy);
          },
        };
      },
    };
    const rewrite = postgresRewrite({ pool: watchedPool, tableName: table, sessionId: id });
    expect(await rewrite(letters("a"), [new HumanMessage("A")])).toBe(true);
    expect(await rewrite(letters("b"), [])).toBe(false);
    failing = true;
    await expect(rewrite(letters("A"), [new HumanMessage("x")])).rejects.toThrow("connection lost");
    expect(released).toEqual([false, false, true]);
    expect(keys(await new PostgresChatMessageHistory({ sessionId: id, pool: pool!, tableName: table }).getMessages())).toEqual(keys(letters("A", "b")));
  });
});
