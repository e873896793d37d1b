import { BaseMessage } from "@langchain/core/messages";
import type { AIMessage, ToolMessage } from "@langchain/core/messages";

/**
 * The one place that decides what a message is. Every other module asks
 * {@link roleOf} (or a predicate built on it), so that a message is never a
 * user's message to one rule and nothing to another.
 *
 * Roles are read from `message.type`, the non-deprecated discriminator of
 * `@langchain/core` 1.x. Chunks (`AIMessageChunk`, ...) carry the same type as
 * their message class, so they are recognised too. A `ChatMessage` (type
 * `"generic"`, also what history stores hand back for one) has a free-form
 * `role`; it is read the way the providers' converters and LangChain's own
 * message coercion read it: `"user"`/`"human"`, `"assistant"`/`"ai"`,
 * `"system"`/`"developer"` and `"tool"`. Any other type or role is `"other"`:
 * kept with the turn or step it stands in, never the task, never a call.
 */
export type MessageRole = "system" | "human" | "ai" | "tool" | "other";

const GENERIC_ROLES: Readonly<Record<string, MessageRole>> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  system: "system",
  developer: "system",
  tool: "tool",
};

/** The role a `ChatMessage` plays, from its `role` field (case as the providers accept it: lower case). */
function genericRole(message: BaseMessage): MessageRole {
  const role = (message as { role?: unknown }).role;
  return typeof role === "string" && Object.prototype.hasOwnProperty.call(GENERIC_ROLES, role) ? GENERIC_ROLES[role]! : "other";
}

/** What `message` is to the rules: see the module comment. */
export function roleOf(message: BaseMessage): MessageRole {
  switch (message.type) {
    case "system":
      return "system";
    case "human":
      return "human";
    case "ai":
      return "ai";
    case "tool":
      return "tool";
    case "generic":
      return genericRole(message);
    default:
      return "other";
  }
}

export function isMessage(value: unknown): value is BaseMessage {
  return BaseMessage.isInstance(value);
}

export function isSystem(message: BaseMessage): boolean {
  return roleOf(message) === "system";
}

export function isHuman(message: BaseMessage): boolean {
  return roleOf(message) === "human";
}

/**
 * An assistant message: an `AIMessage` (or chunk), or a `ChatMessage` with
 * role `"assistant"`/`"ai"`, which has none of `AIMessage`'s own fields, hence
 * the `Partial`.
 */
export function isAI(message: BaseMessage): message is BaseMessage & Partial<Pick<AIMessage, "tool_calls" | "invalid_tool_calls" | "usage_metadata">> {
  return roleOf(message) === "ai";
}

/** A tool result: a `ToolMessage`, or a `ChatMessage` with role `"tool"` (which carries no `tool_call_id`). */
export function isTool(message: BaseMessage): message is BaseMessage & Partial<Pick<ToolMessage, "tool_call_id">> {
  return roleOf(message) === "tool";
}

/** The id a tool result answers, or `undefined` when the store lost it (or a `ChatMessage` never had one). */
export function toolCallIdOf(message: BaseMessage): string | undefined {
  if (!isTool(message)) return undefined;
  const id = message.tool_call_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}
