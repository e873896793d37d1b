import { mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { assertConversation } from "../messages/conversation-check";
import { mapInSlices } from "../time-slices";

/**
 * In one atomic step, replaces the store's oldest messages by `next` if they
 * are still `expected`, keeping every message appended after them; resolves
 * `false` (and changes nothing) when they are not. A store that offers this
 * makes a commit safe against crashes, concurrent appends and competing
 * compactions: see `inMemoryRewrite`, `redisListRewrite`, `postgresRewrite`.
 *
 * `options.signal` aborts when the compaction is abandoned (its timeout, the
 * wrapper's signal): a rewrite should then write nothing, rejecting with the
 * signal's reason, wherever it is before its write is sent. The write itself,
 * once sent, is one atomic step, and completes. The built-in rewrites check
 * the signal right before it (and PostgreSQL's again before `COMMIT`).
 */
export type StoreRewrite = (expected: readonly BaseMessage[], next: readonly BaseMessage[], options?: StoreRewriteOptions) => Promise<boolean>;

/** What a {@link StoreRewrite} is given besides the lists. */
export interface StoreRewriteOptions {
  /** Aborts when the compaction is abandoned: nothing may be written after that. */
  signal?: AbortSignal;
}

/** One message in comparable form: what a store keeps of it, as JSON. */
function storedOne(message: BaseMessage): string {
  return JSON.stringify(mapChatMessagesToStoredMessages([message])[0]);
}

/**
 * Throws a `TypeError` naming the bad value unless `expected` and `next` are
 * arrays of `BaseMessage`. Every rewrite calls it before it reads or writes
 * the store: a plain object written there would make every later read of the
 * session reject.
 */
export function assertRewriteLists(expected: unknown, next: unknown): asserts expected is BaseMessage[] {
  assertConversation(expected, "expected");
  assertConversation(next, "next");
}

/** Messages in a comparable form: what a store keeps of them, as JSON. */
export function storedForm(messages: readonly BaseMessage[]): string[] {
  return messages.map(storedOne);
}

/** {@link storedForm} in time slices (see `time-slices.ts`): a long history serializes for hundreds of milliseconds. */
export function storedFormInSlices(messages: readonly BaseMessage[], signal?: AbortSignal): Promise<string[]> {
  return mapInSlices(messages, storedOne, signal);
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, sortedKeys(record[key])]));
}

/** One message in {@link comparableForm}. */
export function comparableOne(message: BaseMessage): string {
  return JSON.stringify(sortedKeys(mapChatMessagesToStoredMessages([message])[0]));
}

/**
 * Like {@link storedForm}, with object keys in a fixed order: a store that
 * keeps JSON as a document (PostgreSQL `jsonb`) hands keys back reordered.
 */
export function comparableForm(messages: readonly BaseMessage[]): string[] {
  return messages.map(comparableOne);
}

/** {@link comparableForm} in time slices. */
export function comparableFormInSlices(messages: readonly BaseMessage[], signal?: AbortSignal): Promise<string[]> {
  return mapInSlices(messages, comparableOne, signal);
}

/** Whether `list` begins with `prefix`, item for item. */
export function startsWith(list: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= list.length && prefix.every((item, index) => list[index] === item);
}

/** The `lc_namespace` of a LangChain serializable, joined with "/", or `undefined`. */
export function namespaceOf(value: unknown): string | undefined {
  const namespace = (value as { lc_namespace?: unknown } | null)?.lc_namespace;
  return Array.isArray(namespace) ? namespace.join("/") : undefined;
}
