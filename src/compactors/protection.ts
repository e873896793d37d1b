import type { BaseMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { exchangesOf } from "../messages/exchanges";
import { latestNativeCompaction } from "../messages/native-compaction";
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
 * Whether a compaction of `messages` has anything protected to respect: a
 * `protect` predicate, or a provider-native compaction marker
 * (`native-compaction.ts`). A stage's shortcuts that decide one message at a
 * time (see `Compactor.rewritesInPlace`) are taken only when it has not.
 */
export function hasProtection(messages: readonly BaseMessage[], protect: ProtectPredicate | undefined): boolean {
  return protect !== undefined || latestNativeCompaction(messages) >= 0;
}

/**
 * The messages no compaction may remove or rewrite, as a mask over indices
 * (`null` when nothing is protected): the messages `protect` names, the
 * latest provider-native compaction marker and everything before it (the
 * provider compacted that already: see `native-compaction.ts`), and with
 * them every message of their exchanges (`exchangesOf`: a protected call
 * keeps the results answering it, a protected result keeps the call(s)
 * asking for it and so every other result of those calls), read in every
 * shape a provider puts calls in.
 */
export function protectedMessages(messages: readonly BaseMessage[], protect: ProtectPredicate | undefined): Uint8Array | null {
  const boundary = latestNativeCompaction(messages);
  if (protect === undefined && boundary < 0) return null;
  const protectedAt = new Uint8Array(messages.length);
  const protectedIndices: number[] = [];
  messages.forEach((message, index) => {
    if (index <= boundary || protect?.(message, index) === true) protectedIndices.push(index);
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
  if (protect === undefined) return protectedMessages(messages, undefined);
  const asked = new Uint8Array(messages.length);
  for (let index = 0; index < messages.length; index += 1) {
    if (protect(messages[index]!, index) === true) asked[index] = 1;
    if ((index & 63) === 63 && sliceUsedUp()) await nextSlice(signal);
  }
  return protectedMessages(messages, (_message, index) => asked[index] === 1);
}
