/** The checks the agent tests share: tool-call pairing of what a model was sent. */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";

/**
 * Problems with tool-call pairing in a request, as a provider would reject
 * them: a tool result without its call earlier, or a call not answered
 * before the next message that is not a tool result. Empty when valid.
 */
export function toolPairingProblems(messages: readonly BaseMessage[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  const called = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (ToolMessage.isInstance(message)) {
      if (!called.has(message.tool_call_id)) problems.push(`#${index}: tool result ${message.tool_call_id} without its call`);
      open.delete(message.tool_call_id);
      continue;
    }
    if (open.size > 0) problems.push(`#${index}: calls ${[...open].join(", ")} not answered before a ${message.type} message`);
    open = new Set();
    if (AIMessage.isInstance(message)) {
      for (const call of message.tool_calls ?? []) {
        if (call.id) {
          open.add(call.id);
          called.add(call.id);
        }
      }
    }
  }
  if (open.size > 0) problems.push(`end: calls ${[...open].join(", ")} never answered`);
  return problems;
}

/**
 * Expects every tool result to answer a call made earlier and not yet
 * answered, and every call to be answered by the end.
 */
export function assertToolPairs(messages: readonly BaseMessage[]): void {
  const open = new Set<string>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) open.add(call.id!);
    if (ToolMessage.isInstance(message)) expect(open.delete(message.tool_call_id)).toBe(true);
  }
  expect(open.size).toBe(0);
}
