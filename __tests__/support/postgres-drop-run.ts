/**
 * Run in a child process by `__tests__/integrations/connection-drops.test.ts`: a rewrite of a PostgreSQL session
 * whose backend is terminated (`pg_terminate_backend`, from a second connection) right after its statement k
 * resolves, for k = 0, 1, ... until a run has no statement k. After each kill it waits until `pg` has noticed (the
 * client's `'end'`), appends one message through the store, then lets the rewrite go on. An unhandled `'error'`
 * kills this process, which is what the parent checks (its exit code and stderr); jest, in-process, could swallow it.
 *
 * Usage: `postgres-drop-run.ts <path> <table> <session prefix>` with path `rewrite` (postgresRewrite directly, with
 * a replacement longer than what it replaces, so both INSERTs run) or `history` (CompactingChatMessageHistory in
 * commit mode over PostgresChatMessageHistory, its rewrite picked by itself). Prints one JSON line per run (a
 * {@link DropRun}). No `'error'` listener is put on the pool: an error that reached it would kill the process too.
 */
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { HumanMessage } from "@langchain/core/messages";
import { Pool } from "pg";
import type { PoolClient, QueryResult } from "pg";
import { CompactingChatMessageHistory, postgresRewrite } from "../../src";
import { APPENDED_DURING_DROP, dropConversation, DROP_REPLACED, dropReplacement } from "./connection-drops";
import type { DropRun } from "./connection-drops";
import { POSTGRES_URL } from "./servers";

const [path, table, prefix] = process.argv.slice(2) as ["rewrite" | "history", string, string];

/** The pool the store and the rewrite use; its promise-form `connect()` (the rewrite's checkout) hands out instrumented clients. */
const pool = new Pool({ connectionString: POSTGRES_URL, max: 3 });
const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });

let killAfter = -1;
let statements: string[] = [];
let inserted: string[] = [];
let killed: string | null = null;
let onKilled: () => Promise<void> = async () => undefined;

/** Makes statement `killAfter` of this checkout terminate the backend once it has resolved. */
async function instrument(client: PoolClient): Promise<PoolClient> {
  const pid = ((await client.query("SELECT pg_backend_pid() AS pid")).rows[0] as { pid: number }).pid;
  const query = client.query;
  const run = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<QueryResult>;
  const release = client.release;
  const instrumented = async (text: string, values?: unknown[]) => {
    const index = statements.length;
    statements.push(text.split(" ")[0]!);
    if (text.startsWith("INSERT")) inserted.push(...((values?.at(-1) as string[] | undefined) ?? []));
    const result = await run(text, values);
    if (index === killAfter) {
      killed = statements[index]!;
      const noticed = new Promise<void>((resolve) => client.once("end", () => resolve()));
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await noticed;
      await onKilled();
    }
    return result;
  };
  (client as unknown as { query: unknown }).query = instrumented;
  client.release = (destroy?: boolean | Error) => {
    (client as unknown as { query: unknown }).query = query;
    client.release = release;
    release.call(client, destroy);
  };
  return client;
}

const connect = pool.connect.bind(pool);
pool.connect = ((callback?: never) => (callback === undefined ? connect().then(instrument) : connect(callback))) as typeof pool.connect;

async function main(): Promise<void> {
  for (let k = 0; k < 12; k += 1) {
    killAfter = k;
    statements = [];
    inserted = [];
    killed = null;
    const sessionId = `${prefix}:${k}`;
    const store = new PostgresChatMessageHistory({ sessionId, pool, tableName: table });
    await store.addMessages(dropConversation());
    onKilled = () => store.addMessage(new HumanMessage(APPENDED_DURING_DROP));
    let run: Pick<DropRun, "outcome" | "value" | "error" | "code">;
    try {
      const value =
        path === "rewrite"
          ? await postgresRewrite(store)(dropConversation().slice(0, DROP_REPLACED), dropReplacement())
          : (await new CompactingChatMessageHistory({ history: store, targetTokens: 60, mode: "commit" }).getMessages()).length;
      run = { outcome: "resolved", value };
    } catch (error) {
      run = { outcome: "rejected", error: (error as Error).message, code: (error as { code?: string }).code };
    }
    const line: DropRun = { k, sessionId, killedAfter: killed, statements, inserted, ...run };
    console.log(JSON.stringify(line));
    if (killed === null) break;
  }
  await pool.end();
  await admin.end();
}

void main();
