import type { BaseMessage } from "@langchain/core/messages";
import { CALL_BLOCK_TYPES, toolCallsIn } from "../messages/exchanges";
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
  for (const call of toolCallsIn(message)) {
    visitor.text(call.name ?? "");
    visitor.text(typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {}));
    if (call.id !== undefined) visitor.text(call.id);
  }
  const toolCallId = toolCallIdOf(message);
  if (toolCallId) visitor.text(toolCallId);
  if (typeof message.name === "string" && message.name.length > 0) visitor.text(message.name);
}
