import type { BaseMessage } from "@langchain/core/messages";
import { compactionStrategyOf } from "./compaction-metadata";
import { isHuman, isSystem } from "./roles";

/** A human message that the user wrote: not an omission note or a summary of ours. */
export function isRealHuman(message: BaseMessage): boolean {
  return isHuman(message) && compactionStrategyOf(message) === undefined;
}

/**
 * End (exclusive) of the leading run of system messages: the agent's
 * instructions, always kept. The run stops at the first message that is not a
 * system message (a compaction note is a human message, so it stops it too).
 */
export function leadingSystemEnd(messages: readonly BaseMessage[]): number {
  let end = 0;
  while (end < messages.length && isSystem(messages[end]!)) end += 1;
  return end;
}

/**
 * Index of the current task: the latest real human message at or after
 * `from`, or -1 when there is none (then everything after the instructions is
 * the task's own work).
 */
export function latestUserIndex(messages: readonly BaseMessage[], from: number): number {
  for (let index = messages.length - 1; index >= from; index -= 1) {
    if (isRealHuman(messages[index]!)) return index;
  }
  return -1;
}
