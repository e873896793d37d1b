import type { BaseMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { isAI, isTool, toolCallIdOf, toolCallsOf } from "../messages/roles";
import { nextSlice, sliceUsedUp } from "../time-slices";

/**
 * Names messages a compaction must leave exactly as they are: a plan, a todo
 * list, a pinned instruction. Called once per message per compaction with the
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
 * every message that must stay for the conversation to stay valid. A
 * protected AI message keeps the results answering its calls; a protected
 * result keeps the AI message(s) that asked for it, and so every other result
 * of those calls. Results without a `tool_call_id` belong to the AI message
 * they directly follow, as in the layout.
 *
 * One pass to index exchanges by tool-call id, then a walk over what the
 * protected messages reach: O(n).
 */
export function pinnedMessages(messages: readonly BaseMessage[], protect: ProtectPredicate | undefined): Uint8Array | null {
  if (protect === undefined) return null;
  const pinned = new Uint8Array(messages.length);
  const work: number[] = [];
  messages.forEach((message, index) => {
    if (protect(message, index) === true) {
      pinned[index] = 1;
      work.push(index);
    }
  });
  if (work.length === 0) return null;

  // Who shares an exchange with whom: every message naming a call id, and results without an id with their caller.
  const byId = new Map<string, number[]>();
  const idlessResults = new Map<number, number[]>(); // caller -> results without id right after it
  const callerOf = new Map<number, number>();
  let caller = -1;
  messages.forEach((message, index) => {
    if (isTool(message)) {
      const id = toolCallIdOf(message);
      if (id !== undefined) push(byId, id, index);
      else if (caller >= 0) {
        push(idlessResults, caller, index);
        callerOf.set(index, caller);
      }
      return;
    }
    caller = isAI(message) && toolCallsOf(message).length > 0 ? index : -1;
    for (const call of toolCallsOf(message)) if (typeof call.id === "string" && call.id.length > 0) push(byId, call.id, index);
  });

  const reach = (index: number) => {
    if (pinned[index]) return;
    pinned[index] = 1;
    work.push(index);
  };
  while (work.length > 0) {
    const index = work.pop()!;
    const message = messages[index]!;
    const ids = isTool(message) ? [toolCallIdOf(message)] : toolCallsOf(message).map((call) => call.id);
    // No empty id was indexed above, so an empty one finds nothing.
    for (const id of ids) if (typeof id === "string") for (const other of byId.get(id) ?? []) reach(other);
    for (const other of idlessResults.get(index) ?? []) reach(other);
    const owner = callerOf.get(index);
    if (owner !== undefined) reach(owner);
  }
  return pinned;
}

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value); // a message listed twice (a call id asked twice in one message) is reached once anyway
}

/**
 * {@link pinnedMessages}, with `protect` (user code, called once per message)
 * asked in time slices (see `time-slices.ts`): between two slices the event
 * loop turns, and an aborted `signal` stops it with its reason.
 */
export async function pinnedMessagesInSlices(
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
  return pinnedMessages(messages, (_message, index) => asked[index] === 1);
}
