import type { BaseMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { throwIfAborted } from "../compactors/abort";
import { nextSlice, sliceUsedUp } from "../time-slices";
import { assertRewriteLists, comparableOne, namespaceOf } from "./store-rewrite";
import type { StoreRewrite } from "./store-rewrite";

/** Where `InMemoryChatMessageHistory` keeps a session: its `messages` array. */
export interface InMemoryHistoryLike {
  /** The session's messages, oldest first; the rewrite replaces them in place. */
  messages: BaseMessage[];
}

/** Whether `history` is `@langchain/core`'s `InMemoryChatMessageHistory` (by its namespace and its list; no `instanceof`). */
export function isInMemoryHistory(history: unknown): history is InMemoryHistoryLike {
  return namespaceOf(history) === "langchain/stores/message/in_memory" && Array.isArray((history as InMemoryHistoryLike).messages);
}

/**
 * An atomic {@link StoreRewrite} for `InMemoryChatMessageHistory`. JavaScript
 * runs one thing at a time, and the compare and the swap of the store's list
 * happen with no `await` between them, so no append, clear or other rewrite
 * can interleave: appends made before it stay behind the new list, and a
 * competing rewrite that landed first makes it refuse.
 */
export function inMemoryRewrite(history: InMemoryHistoryLike): StoreRewrite {
  if (typeof history !== "object" || history === null || !Array.isArray(history.messages)) {
    throw new TypeError(`\`history\` must be an InMemoryChatMessageHistory (an object with a \`messages\` array), got ${describeValue(history)}`);
  }
  return async (expected, next, options) => {
    assertRewriteLists(expected, next);
    const signal = options?.signal;
    // A message the store still holds as the very object expected is the one expected; the others are compared by
    // their stored form, serialized before the critical section (in time slices: a long list takes a while).
    const held = history.messages;
    const forms = new Map<BaseMessage, string>();
    for (let index = 0; index < expected.length; index += 1) {
      const message = expected[index]!;
      if (held[index] === message) continue;
      forms.set(message, comparableOne(message));
      if (held[index] !== undefined) forms.set(held[index]!, comparableOne(held[index]!));
      if (sliceUsedUp()) await nextSlice(signal);
    }
    const formOf = (message: BaseMessage) => forms.get(message) ?? comparableOne(message);
    const replacement = [...next];
    // Abandoned meanwhile: nothing is written. Nothing below awaits, so no append, clear or rewrite interleaves.
    throwIfAborted(signal);
    const current = history.messages;
    if (current.length < expected.length) return false;
    for (let index = 0; index < expected.length; index += 1) {
      if (current[index] !== expected[index] && formOf(current[index]!) !== formOf(expected[index]!)) return false;
    }
    history.messages = [...replacement, ...current.slice(expected.length)];
    return true;
  };
}
