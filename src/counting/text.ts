import type { BaseMessage } from "@langchain/core/messages";
import { asksForTools, CALL_BLOCK_TYPES, toolCallsIn } from "../messages/exchanges";
import { toolCallIdOf } from "../messages/roles";

/**
 * The pieces of a message that a counter charges for, walked once without
 * building an intermediate string. Both built-in counters use this walk, so
 * they agree on what a message contains: its text (string content or text
 * blocks), other blocks as JSON, images as a fixed charge, every tool call
 * once (name, arguments and id, in whatever shape its provider put it:
 * `toolCallsIn`), `tool_call_id` and `name`.
 */
export interface MessageTextVisitor {
  text(value: string): void;
  image(): void;
}

const IMAGE_BLOCK_TYPES = new Set(["image", "image_url", "input_image"]);

function visitBlock(block: unknown, visitor: MessageTextVisitor): void {
  if (typeof block === "string") {
    visitor.text(block);
    return;
  }
  if (typeof block !== "object" || block === null) return;
  const { type, text } = block as { type?: unknown; text?: unknown };
  if (typeof type === "string" && CALL_BLOCK_TYPES.has(type)) {
    // A call block is counted once, as a call, below (the same call often stands in `tool_calls` too).
  } else if (typeof type === "string" && IMAGE_BLOCK_TYPES.has(type)) {
    visitor.image();
  } else if (typeof text === "string") {
    visitor.text(text);
  } else {
    // Tool-use, reasoning and provider-specific blocks: their JSON is the best local stand-in.
    visitor.text(JSON.stringify(block));
  }
}

export function visitMessageText(message: BaseMessage, visitor: MessageTextVisitor): void {
  const content: unknown = message.content;
  if (typeof content === "string") {
    visitor.text(content);
  } else if (Array.isArray(content)) {
    for (const block of content) visitBlock(block, visitor);
  }
  visitToolCalls(message, visitor);
  const toolCallId = toolCallIdOf(message);
  if (toolCallId) visitor.text(toolCallId);
  if (typeof message.name === "string" && message.name.length > 0) visitor.text(message.name);
}

/** One call's pieces: its name, its arguments (as JSON unless already text) and its id. */
function visitCall(name: unknown, args: unknown, id: unknown, visitor: MessageTextVisitor): void {
  visitor.text(typeof name === "string" ? name : "");
  visitor.text(typeof args === "string" ? args : JSON.stringify(args ?? {}));
  if (typeof id === "string" && id.length > 0) visitor.text(id);
}

/** The rule: every call of {@link toolCallsIn}, once, in its order. */
export function visitToolCallsByRule(message: BaseMessage, visitor: MessageTextVisitor): void {
  if (asksForTools(message)) for (const call of toolCallsIn(message)) visitCall(call.name, call.args, call.id, visitor);
}

/**
 * {@link visitToolCallsByRule}, without building the calls for the usual
 * message (every message is walked each time it is counted): one whose only
 * calls are parsed `tool_calls`, each an object with its own id, is read in
 * place; any other goes through the rule. The tests check both give the same
 * pieces on every shape.
 */
export function visitToolCalls(message: BaseMessage, visitor: MessageTextVisitor): void {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls) || calls.length === 0 || !onlyParsedCalls(message, calls)) return visitToolCallsByRule(message, visitor);
  for (const call of calls as { name?: unknown; args?: unknown; id?: unknown }[]) visitCall(call.name, call.args, call.id, visitor);
}

/** Whether `calls` (the message's `tool_calls`) are objects with distinct ids, and no other place holds a call. */
function onlyParsedCalls(message: BaseMessage, calls: unknown[]): boolean {
  if (message.type !== "ai") return false;
  for (let k = 0; k < calls.length; k += 1) {
    const id = (calls[k] as { id?: unknown } | null)?.id;
    if (typeof calls[k] !== "object" || typeof id !== "string" || id.length === 0) return false;
    for (let j = 0; j < k; j += 1) if ((calls[j] as { id: string }).id === id) return false;
  }
  const invalid = (message as { invalid_tool_calls?: unknown }).invalid_tool_calls;
  if (Array.isArray(invalid) && invalid.length > 0) return false;
  const kwargs = message.additional_kwargs as { tool_calls?: unknown } | null | undefined;
  if (kwargs != null && Array.isArray(kwargs.tool_calls) && kwargs.tool_calls.length > 0) return false;
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      const type = typeof block === "object" && block !== null ? (block as { type?: unknown }).type : undefined;
      if (typeof type === "string" && CALL_BLOCK_TYPES.has(type)) return false;
    }
  }
  return true;
}
