/**
 * All the text a model is shown in a request, as the scripted models read
 * it: every message's content (text blocks and any other block as JSON) and
 * the string values of every tool call's arguments (a `write_file` call
 * shows the file it wrote).
 */
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";

function contentText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      const fields = block as { type?: unknown; text?: unknown };
      return fields.type === "text" && typeof fields.text === "string" ? fields.text : JSON.stringify(block);
    })
    .join("\n");
}

function stringsOf(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) stringsOf(item, out);
}

/** The text of one message: its content, then its tool calls' argument strings. */
export function messageText(message: BaseMessage): string {
  const parts = [contentText(message.content)];
  if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) stringsOf(call.args, parts);
  return parts.join("\n");
}

/** The text of a whole request. */
export function requestText(messages: readonly BaseMessage[]): string {
  return messages.map(messageText).join("\n");
}
