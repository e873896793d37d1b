import type { BaseMessage } from "@langchain/core/messages";
import { isSystem } from "./roles";

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
