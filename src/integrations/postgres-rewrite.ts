import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } from "@langchain/core/messages";
import type { StoredMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { mapInSlices, nextSlice, sliceUsedUp } from "../time-slices";
import { assertRewriteLists, comparableForm, comparableFormInSlices, namespaceOf } from "./store-rewrite";
import type { StoreRewrite } from "./store-rewrite";

/** A result row set: the part of `pg`'s `QueryResult` this helper reads. */
export interface PostgresQueryResult {
  /** The rows the statement returned. */
  rows: unknown[];
  /** The rows the statement affected (`null` when it does not say). */
  rowCount: number | null;
}

/** One checked-out connection: the part of `pg`'s `PoolClient` this helper uses. */
export interface PostgresPoolClient {
  /** Runs one statement with its parameters (`$1`, `$2`, ...). */
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** Gives the connection back to the pool; with `destroy` (true or the error that broke it) the pool closes it instead. */
  release(destroy?: boolean | Error): void;
  /**
   * `pg`'s client is an `EventEmitter` that emits `'error'` when its
   * connection breaks while no query is running; the helper listens while it
   * holds the client. A client without these methods cannot emit.
   */
  on?(event: "error", listener: (error: Error) => void): unknown;
  /** Detaches a listener attached with `on`. */
  removeListener?(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * Listens for the `'error'` a `pg` client emits when its connection breaks
 * between two statements: while the pool has lent it out, the pool's own
 * listener is detached, and an `'error'` with no listener kills the process.
 * `lost` is the first such error; `stop()` detaches the listener (only for a
 * healthy client going back to the pool: a broken one keeps it, as its dying
 * connection can still emit).
 */
function watchConnection(client: PostgresPoolClient): { readonly lost: unknown; stop(): void } {
  let lost: unknown = null;
  const listener = (error: Error) => {
    lost ??= error;
  };
  if (typeof client.on !== "function") return { lost: null, stop: () => undefined };
  client.on("error", listener);
  return {
    get lost() {
      return lost;
    },
    stop: () => client.removeListener?.("error", listener),
  };
}

/** Where `PostgresChatMessageHistory` from `@langchain/community` keeps a session: its `pg` pool, table and `sessionId`. */
export interface PostgresHistoryLike {
  /** The `pg` pool the history was given. */
  pool: {
    /** Checks out one connection, for the rewrite's transaction. */
    connect(): Promise<PostgresPoolClient>;
  };
  /** The table the messages are stored in. */
  tableName: string;
  /** The session's id, in the table's `session_id` column. */
  sessionId: string;
}

/** Whether `history` is `@langchain/community`'s `PostgresChatMessageHistory` (by its namespace and fields; no `instanceof`). */
export function isPostgresHistory(history: unknown): history is PostgresHistoryLike {
  const candidate = history as Partial<PostgresHistoryLike> | null;
  return (
    namespaceOf(history) === "langchain/stores/message/postgres" &&
    typeof candidate?.sessionId === "string" &&
    typeof candidate.tableName === "string" &&
    typeof candidate.pool?.connect === "function"
  );
}

interface MessageRow {
  id: number;
  message: { type: string } & Record<string, unknown>;
}

/** A message as the store inserts it: its stored `data` with its `type` beside. */
function rowValue(stored: StoredMessage): string {
  return JSON.stringify({ ...stored.data, type: stored.type });
}

/** A row read back as the store's `getMessages` reads it, in comparable form. */
function rowForm(row: MessageRow): string {
  const { type, ...data } = row.message;
  return comparableForm(mapStoredMessagesToChatMessages([{ type, data } as unknown as StoredMessage]))[0]!;
}

/** Whether `rows` read back are the messages of `want`, compared in time slices (the rows stay locked meanwhile). */
async function rowsAre(rows: readonly MessageRow[], want: readonly string[], signal: AbortSignal | undefined): Promise<boolean> {
  for (let index = 0; index < rows.length; index += 1) {
    if (rowForm(rows[index]!) !== want[index]) return false;
    if ((index & 63) === 63 && sliceUsedUp()) await nextSlice(signal);
  }
  return true;
}

/**
 * An atomic {@link StoreRewrite} for `PostgresChatMessageHistory` (its own
 * table: `id SERIAL`, `session_id`, `message JSONB`, read `ORDER BY id`). One
 * transaction locks the session's rows (`SELECT ... FOR UPDATE`), checks that
 * the oldest are still the expected messages, deletes them and inserts the
 * new list under the smallest of their ids: a compacted list is never longer
 * than the messages it replaces, so it keeps sorting ahead of rows appended
 * meanwhile, which are never touched. A competing rewrite waits for the lock,
 * then finds its expected rows gone and refuses; a crash (a dropped
 * connection) rolls the whole transaction back.
 *
 * A connection that breaks while the rewrite holds it (a failover,
 * `idle_in_transaction_session_timeout`, `pg_terminate_backend`) makes the
 * rewrite reject with the connection's own error (its SQLSTATE `code`
 * intact) and destroys the client; the process never sees an unhandled
 * `'error'`. Nothing is retried: the compare makes a second call safe, and
 * the history wrapper's next read makes it. A break during `COMMIT` itself
 * cannot tell whether the server committed: the rewrite rejects and the
 * table holds the old list or the new one. A connection that breaks while
 * idle in the pool is the pool's to report (`pool.on("error")`).
 *
 * Should `next` be longer than `expected` (no built-in strategy does that),
 * the rows after the replaced ones are moved behind it under new ids, in
 * their order; a row appended during that rewrite may then sort before them.
 */
export function postgresRewrite(history: PostgresHistoryLike): StoreRewrite {
  if (typeof history !== "object" || history === null || typeof history.pool?.connect !== "function") {
    throw new TypeError(`\`history\` must be a PostgresChatMessageHistory (with a \`pg\` pool), got ${describeValue(history)}`);
  }
  if (typeof history.sessionId !== "string" || history.sessionId === "") {
    throw new TypeError(`\`sessionId\` must be a non-empty string, got ${describeValue(history.sessionId)}`);
  }
  if (typeof history.tableName !== "string" || history.tableName === "") {
    throw new TypeError(`\`tableName\` must be a non-empty string, got ${describeValue(history.tableName)}`);
  }
  const { pool, sessionId } = history;
  // Already escaped by the store when it was asked to (`escapeTableName`): used exactly as its own queries use it.
  const table = history.tableName;
  // The store creates its table lazily; its own (TypeScript-private) method knows the layout.
  const ensureTable = (history as unknown as { ensureTable?: () => Promise<void> }).ensureTable;
  return async (expected, next, options) => {
    assertRewriteLists(expected, next);
    const signal = options?.signal;
    if (typeof ensureTable === "function") await ensureTable.call(history);
    // Serialized in time slices: a long session's messages take hundreds of milliseconds.
    const want = await comparableFormInSlices(expected, signal);
    const values = await mapInSlices(mapChatMessagesToStoredMessages([...next]), rowValue, signal);
    const client = await pool.connect();
    const connection = watchConnection(client);
    let broken = false;
    try {
      await client.query("BEGIN");
      const rows = (await client.query(`SELECT id, message FROM ${table} WHERE session_id = $1 ORDER BY id FOR UPDATE`, [sessionId])).rows as MessageRow[];
      const oldest = rows.slice(0, want.length);
      if (oldest.length < want.length || !(await rowsAre(oldest, want, signal))) {
        await client.query("ROLLBACK");
        return false;
      }
      const ids = oldest.map((row) => Number(row.id));
      const moved = values.length > ids.length ? rows.slice(ids.length) : [];
      const deleteIds = [...ids, ...moved.map((row) => Number(row.id))];
      const deleted = await client.query(`DELETE FROM ${table} WHERE session_id = $1 AND id = ANY($2::int[])`, [sessionId, deleteIds]);
      if (deleted.rowCount !== deleteIds.length) {
        await client.query("ROLLBACK");
        return false;
      }
      const inPlace = values.slice(0, ids.length);
      if (inPlace.length > 0) {
        await client.query(`INSERT INTO ${table} (id, session_id, message) SELECT id, $1, message FROM unnest($2::int[], $3::jsonb[]) AS t(id, message)`, [
          sessionId,
          ids.slice(0, inPlace.length),
          inPlace,
        ]);
      }
      const behind = [...values.slice(ids.length), ...moved.map((row) => JSON.stringify(row.message))];
      if (behind.length > 0) {
        await client.query(
          `INSERT INTO ${table} (session_id, message) SELECT $1, message FROM unnest($2::jsonb[]) WITH ORDINALITY AS t(message, position) ORDER BY position`,
          [sessionId, behind],
        );
      }
      // Abandoned meanwhile: the transaction is rolled back and nothing is written. Once sent, COMMIT is one step.
      if (signal?.aborted === true) {
        await client.query("ROLLBACK");
        throw signal.reason;
      }
      await client.query("COMMIT");
      return true;
    } catch (error) {
      broken = true;
      // After a break the next query only says "not queryable": the connection's own error says why.
      throw connection.lost ?? error;
    } finally {
      // A connection that failed mid-transaction (or broke after COMMIT) is destroyed, not reused: the server
      // rolls an open transaction back.
      broken ||= connection.lost !== null;
      if (!broken) connection.stop();
      client.release(broken);
    }
  };
}
