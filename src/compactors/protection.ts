import type { BaseMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { exchangesOf } from "../messages/exchanges";
import { nextSlice, sliceUsedUp } from "../time-slices";

/**
 * Names messages a compaction must leave exactly as they are: a plan, a todo
 * list, a standing instruction. Called once per message per compaction with the
 * message and its index in the list being compacted.
 */
export type ProtectPredicate = (message: BaseMessage, index: number) => boolean;

/** Throws a `TypeError` unless `value` is a function or `undefined`. */
export function assertProtect(value: unknown): asserts value is ProtectPredicate | undefined {
  if (value !== undefined && typeof value !== "function") {
    throw new TypeError(`\`protect\` must be a function (message, index) => boolean, got ${describeValue(value)}`);
  }
}

/**
 * The messages no compaction may remove or rewrite, as a mask over indices
 * (`null` when nothing is protected): the protected messages, and with them
 * every message of their exchanges (`exchangesOf`: a protected call keeps
 * the results answering it, a protected result keeps the call(s) asking for
 * it and so every other result of those calls), read in every shape a
 * provider puts calls in.
 */
export function protectedMessages(messages: readonly BaseMessage[], protect: ProtectPredicate | undefined): Uint8Array | null {
  if (protect === undefined) return null;
  const protectedAt = new Uint8Array(messages.length);
  const protectedIndices: number[] = [];
  messages.forEach((message, index) => {
    if (protect(message, index) === true) protectedIndices.push(index);
  });
  if (protectedIndices.length === 0) return null;
  const exchanges = exchangesOf(messages);
  for (const index of protectedIndices) {
    protectedAt[index] = 1;
    const exchange = exchanges.of[index]!;
    if (exchange >= 0) for (const member of exchanges.members[exchange]!) protectedAt[member] = 1;
  }
  return protectedAt;
}

/**
 * {@link protectedMessages}, with `protect` (user code, called once per message)
 * asked in time slices (see `time-slices.ts`): between two slices the event
 * loop turns, and an aborted `signal` stops it with its reason.
 */
export async function protectedMessagesInSlices(
  messages: readonly BaseMessage[],
  protect: ProtectPredicate | undefined,
  signal: AbortSignal | undefined,
): Promise<Uint8Array | null> {
  if (protect === undefined) return null;
  const asked = new Uint8Array(messages.length);
  for (let index = 0; index < messages.length; index += 1) {
    if (protect(messages[index]!, index) === true) asked[index] = 1;
    if ((index & 63) === 63 && sliceUsedUp()) await nextSlice(signal);
  }
  return protectedMessages(messages, (_message, index) => asked[index] === 1);
}
