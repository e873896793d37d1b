import { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";

/**
 * Role predicates over `message.type`, the non-deprecated discriminator of
 * `@langchain/core` 1.x. Chunks (`AIMessageChunk`, ...) carry the same type as
 * their message class, so they are recognised too.
 */

export function isMessage(value: unknown): value is BaseMessage {
  return BaseMessage.isInstance(value);
}

export function isSystem(message: BaseMessage): boolean {
  return message.type === "system";
}

export function isHuman(message: BaseMessage): boolean {
  return message.type === "human";
}

export function isAI(message: BaseMessage): message is AIMessage {
  return message.type === "ai";
}

export function isTool(message: BaseMessage): message is ToolMessage {
  return message.type === "tool";
}

/** The tool calls an AI message asks for; an empty list for every other message. */
export function toolCallsOf(message: BaseMessage): readonly ToolCall[] {
  if (!isAI(message)) return [];
  const calls = message.tool_calls;
  return Array.isArray(calls) ? calls : [];
}

/** The id a tool result answers, or `undefined` when the store lost it. */
export function toolCallIdOf(message: BaseMessage): string | undefined {
  if (!isTool(message)) return undefined;
  const id = message.tool_call_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}
