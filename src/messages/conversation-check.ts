import type { BaseMessage } from "@langchain/core/messages";
import { assertMessagesFrom, describeValue } from "../errors";
import { nextSlice, sliceUsedUp } from "../time-slices";
import { PrefixMemory } from "./prefix-memory";

/** Lists recently checked, so that a history checked before is not checked again message by message. */
const checkedLists = new PrefixMemory<true>();

/**
 * Throws a `TypeError` naming the first element that is not a `BaseMessage`
 * (or whose getters throw). Leading messages that are the very objects of a
 * list checked before, at the same positions, are not checked again: an agent's
 * history is checked once, and then only what each call adds to it.
 */
export function assertConversation(messages: unknown, name = "messages"): asserts messages is BaseMessage[] {
  if (!Array.isArray(messages)) {
    throw new TypeError(`\`${name}\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  }
  const { entry, common } = checkedLists.recall(messages);
  assertMessagesFrom(messages, common, name);
  checkedLists.remember(entry, true, messages as BaseMessage[], common);
}

/** Messages checked between two looks at the time slice. */
const CHECKS_PER_STEP = 4_096;

/**
 * {@link assertConversation} in time slices (see `time-slices.ts`): a long
 * list never checked before is checked a few thousand messages at a time,
 * and an aborted `signal` stops it with its reason.
 */
export async function assertConversationInSlices(messages: unknown, signal?: AbortSignal, name = "messages"): Promise<void> {
  if (!Array.isArray(messages)) {
    throw new TypeError(`\`${name}\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  }
  const { entry, common } = checkedLists.recall(messages);
  for (let from = common; from < messages.length; from += CHECKS_PER_STEP) {
    assertMessagesFrom(messages, from, name, Math.min(messages.length, from + CHECKS_PER_STEP));
    if (sliceUsedUp()) await nextSlice(signal);
  }
  // Every element is a message that was checked, whatever another check did meanwhile: what is remembered stays true.
  checkedLists.remember(entry, true, messages as BaseMessage[], common);
}
