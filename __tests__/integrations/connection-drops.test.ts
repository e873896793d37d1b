/**
 * A database connection that drops while a commit-mode rewrite holds it never kills the process: the call rejects with the connection's own error (or, when the drop came after COMMIT, resolves), and the
 * store holds exactly the old list or exactly the new one, plus what was appended meanwhile. PostgreSQL backends
 * are terminated with `pg_terminate_backend` after each statement of the rewrite in turn, in a child process whose
 * exit code shows an unhandled `'error'`; Redis connections are cut with `CLIENT KILL`. Real servers (REDIS_URL,
 * POSTGRES_URL).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { RedisChatMessageHistory } from "@langchain/redis";
import { Pool } from "pg";
import { createClient } from "redis";
import { isOmissionNote, postgresRewrite, redisListRewrite } from "../../src";
import type { RedisRewriteClient } from "../../src";
import { APPENDED_DURING_DROP, dropConversation, DROP_REPLACED, dropReplacement, rowOf } from "../support/connection-drops";
import type { DropRun } from "../support/connection-drops";
import { POSTGRES_URL, REDIS_URL, requireServer } from "../support/servers";

const TABLE = `connection_drops_${process.pid}`;
const texts = (messages: readonly BaseMessage[]) => messages.map((message) => message.text);

interface ChildRun {
  code: number | null;
  stderr: string;
  runs: DropRun[];
}

/** Runs `postgres-drop-run.ts` for `path` in a child process. */
function runChild(path: "rewrite" | "history", prefix: string): Promise<ChildRun> {
  const script = join(__dirname, "..", "support", "postgres-drop-run.ts");
  return new Promise((resolve) => {
    execFile(process.execPath, ["--require", require.resolve("tsx/cjs"), script, path, TABLE, prefix], { timeout: 60_000 }, (error, stdout, stderr) => {
      const runs = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as DropRun);
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stderr, runs });
    });
  });
}

describe("PostgreSQL: a backend terminated after each statement of the rewrite", () => {
  let up = false;
  let pool: Pool | null = null;
  const rows = async (sessionId: string) =>
    (await pool!.query(`SELECT message FROM ${TABLE} WHERE session_id = $1 ORDER BY id`, [sessionId])).rows.map((row) => row.message as unknown);

  beforeAll(async () => {
    up = await requireServer("PostgreSQL", POSTGRES_URL);
    if (up) pool = new Pool({ connectionString: POSTGRES_URL, max: 2 });
  });
  afterAll(async () => {
    if (pool) {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await pool.end();
    }
  });

  /** Checks every run of a child: the process survived, each call rejected with the connection's error or resolved after COMMIT, and the table holds `landed` or the old list, plus the append. */
  function expectSurvived(child: ChildRun): DropRun[] {
    // An unhandled 'error' event ends the child with exit code 1 and its stack on stderr.
    expect(child.stderr).toBe("");
    expect(child.code).toBe(0);
    const killed = child.runs.filter((run) => run.killedAfter !== null);
    // The last run had no statement k left: the earlier ones covered every statement.
    expect(child.runs.at(-1)!.killedAfter).toBeNull();
    expect(killed.map((run) => run.killedAfter)).toEqual(child.runs.at(-1)!.statements);
    for (const run of killed) {
      if (run.killedAfter === "COMMIT") {
        expect(run.outcome).toBe("resolved");
      } else {
        expect(run.outcome).toBe("rejected");
        // The connection's own error (its SQLSTATE: admin shutdown), not pg's "not queryable".
        expect(run.code).toBe("57P01");
        expect(run.error).toMatch(/terminating connection/);
      }
    }
    return killed;
  }

  test("postgresRewrite directly: rejects (resolves when the drop came after COMMIT); the table holds the old or the new list, plus the append", async () => {
    if (!up) return;
    const prefix = `drops:${process.pid}:rewrite`;
    const child = await runChild("rewrite", prefix);
    const killed = expectSurvived(child);
    expect(killed.map((run) => run.killedAfter)).toEqual(["BEGIN", "SELECT", "DELETE", "INSERT", "INSERT", "COMMIT"]);
    const old = dropConversation().map(rowOf);
    const landed = [...dropReplacement(), ...dropConversation().slice(DROP_REPLACED)].map(rowOf);
    const appended = rowOf(new HumanMessage(APPENDED_DURING_DROP));
    for (const run of killed) {
      const expected = run.outcome === "resolved" ? [...landed, appended] : [...old, appended];
      if (run.outcome === "resolved") expect(run.value).toBe(true);
      expect(await rows(run.sessionId)).toEqual(expected);
    }
  }, 90_000);

  test("CompactingChatMessageHistory in commit mode over PostgresChatMessageHistory: the read rejects or returns the compacted list; the table holds the old or the compacted list, plus the append", async () => {
    if (!up) return;
    const prefix = `drops:${process.pid}:history`;
    const child = await runChild("history", prefix);
    const killed = expectSurvived(child);
    expect(killed.map((run) => run.killedAfter)).toEqual(["BEGIN", "SELECT", "DELETE", "INSERT", "COMMIT"]);
    const old = dropConversation().map(rowOf);
    const appended = rowOf(new HumanMessage(APPENDED_DURING_DROP));
    for (const run of killed) {
      const stored = await rows(run.sessionId);
      if (run.outcome === "resolved") {
        // The compacted list, as its INSERT carried it: shorter than the old one.
        const compacted = run.inserted.map((value) => JSON.parse(value) as unknown);
        expect(compacted.length).toBeGreaterThan(0);
        expect(compacted.length).toBeLessThan(old.length);
        expect(stored).toEqual([...compacted, appended]);
        expect(run.value).toBe(compacted.length + 1);
      } else {
        expect(stored).toEqual([...old, appended]);
      }
    }
    const store = new PostgresChatMessageHistory({ sessionId: killed.at(-1)!.sessionId, pool: pool!, tableName: TABLE });
    expect((await store.getMessages()).some((message) => isOmissionNote(message))).toBe(true);
  }, 90_000);

  test("a healthy client goes back to the pool with only the pool's own 'error' listener", async () => {
    if (!up) return;
    const single = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      const store = new PostgresChatMessageHistory({ sessionId: `drops:${process.pid}:listeners`, pool: single, tableName: TABLE });
      await store.addMessages(dropConversation());
      const client = await single.connect();
      client.release();
      // Idle in the pool: the pool's listener alone.
      const idle = client.listenerCount("error");
      for (let round = 0; round < 3; round += 1) {
        const current = await store.getMessages();
        expect(await postgresRewrite(store)(current.slice(0, 1), current.slice(0, 1))).toBe(true);
        expect(client.listenerCount("error")).toBe(idle);
      }
    } finally {
      await single.end();
    }
  });

  test("a client whose backend is terminated while idle in the pool is the pool's to report; the next rewrite gets a fresh one", async () => {
    if (!up) return;
    const single = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    const poolErrors: Error[] = [];
    // pg's contract: the pool re-emits an idle client's 'error', and its owner listens.
    single.on("error", (error) => poolErrors.push(error));
    try {
      const store = new PostgresChatMessageHistory({ sessionId: `drops:${process.pid}:idle`, pool: single, tableName: TABLE });
      await store.addMessages(dropConversation());
      const client = await single.connect();
      const pid = ((await client.query("SELECT pg_backend_pid() AS pid")).rows[0] as { pid: number }).pid;
      client.release();
      const ended = new Promise((resolve) => client.once("end", resolve));
      await pool!.query("SELECT pg_terminate_backend($1)", [pid]);
      await ended;
      expect(poolErrors.length).toBeGreaterThan(0);
      const current = await store.getMessages();
      expect(await postgresRewrite(store)(current.slice(0, 2), [new HumanMessage("ab")])).toBe(true);
      expect(texts(await store.getMessages())).toEqual(["ab", ...texts(current.slice(2))]);
    } finally {
      await single.end();
    }
  });
});

describe("Redis: a connection cut (CLIENT KILL) around the rewrite", () => {
  let up = false;
  const clients: ReturnType<typeof createClient>[] = [];
  const sessions: string[] = [];
  const errors: Error[] = [];
  const session = (name: string) => {
    const id = `lcc-test:connection-drops:${process.pid}:${name}`;
    sessions.push(id);
    return id;
  };
  /** A client as node-redis asks its owner to set one up: with an 'error' listener (without one, any dropped connection kills the process, ours or not). */
  const client = () => {
    const made = createClient({ url: REDIS_URL });
    made.on("error", (error: Error) => errors.push(error));
    clients.push(made);
    return made;
  };
  let admin: ReturnType<typeof createClient>;

  beforeAll(async () => {
    up = await requireServer("Redis", REDIS_URL);
    if (up) {
      admin = client();
      await admin.connect();
    }
  });
  afterAll(async () => {
    const open = clients.filter((c) => c.isOpen);
    if (open.length > 0 && sessions.length > 0) await open[0]!.del(sessions);
    await Promise.all(open.map((c) => c.quit()));
  });

  /** Cuts `target`'s connection and waits until the client has seen it. */
  async function cut(target: ReturnType<typeof createClient>): Promise<void> {
    const id = await target.clientId();
    const seen = new Promise((resolve) => target.once("error", resolve));
    await admin.sendCommand(["CLIENT", "KILL", "ID", String(id)]);
    await seen;
  }

  test("a client that is reconnecting is not connected again: the rewrite waits for it instead of failing with 'Socket already opened'", async () => {
    if (!up) return;
    const id = session("reconnecting");
    const user = client();
    await user.connect();
    const store = new RedisChatMessageHistory({ sessionId: id, client: user });
    await store.addMessages(dropConversation());
    await cut(user);
    expect(user.isOpen).toBe(true);
    expect(user.isReady).toBe(false);
    expect(await redisListRewrite({ client: user, sessionId: id })(dropConversation().slice(0, 2), [new HumanMessage("ab")])).toBe(true);
    expect(texts(await store.getMessages())).toEqual(["ab", ...texts(dropConversation().slice(2))]);
  });

  test.each(["lRange", "eval"] as const)("cut right after %s: the rewrite settles, the list is the old or the new one, and no listener of ours is left on the user's client", async (step) => {
    if (!up) return;
    const id = session(`cut-${step}`);
    const user = client();
    await user.connect();
    const store = new RedisChatMessageHistory({ sessionId: id, client: user });
    await store.addMessages(dropConversation());
    const listeners = user.listenerCount("error");
    const cutting: RedisRewriteClient = {
      get isReady() {
        return user.isReady;
      },
      get isOpen() {
        return user.isOpen;
      },
      connect: () => user.connect(),
      lRange: async (key, start, stop) => {
        const result = await user.lRange(key, start, stop);
        if (step === "lRange") await cut(user);
        return result;
      },
      eval: async (script, options) => {
        const result = await user.eval(script, options);
        if (step === "eval") await cut(user);
        return result;
      },
    };
    const outcome = await redisListRewrite({ client: cutting, sessionId: id })(dropConversation().slice(0, 2), [new AIMessage("ab")]).then(
      (value) => value,
      (error: Error) => error,
    );
    // Read through the admin client: @langchain/redis's own readiness check calls connect() on a client that is
    // still reconnecting, and fails with "Socket already opened".
    const stored = texts(await new RedisChatMessageHistory({ sessionId: id, client: admin }).getMessages());
    const old = texts(dropConversation());
    const landed = ["ab", ...old.slice(2)];
    if (outcome === true) expect(stored).toEqual(landed);
    else expect(stored).toEqual(old);
    // Either way, the cut was seen by the user's listener, and none was added for it.
    expect(user.listenerCount("error")).toBe(listeners);
  });
});
