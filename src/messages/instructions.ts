import type { BaseMessage } from "@langchain/core/messages";
import { isSystem } from "./roles";

/**
 * End (exclusive) of the instructions: the leading run of system messages,
 * which every compaction keeps. The run stops at the first message that is
 * not a system message (an omission note or a summary is a human message,
 * so it stops it too). `from`: where a caller that already knows the run
 * reaches at least that far starts reading.
 */
export function leadingSystemEnd(messages: readonly BaseMessage[], from = 0): number {
  let end = from;
  while (end < messages.length && isSystem(messages[end]!)) end += 1;
  return end;
}
