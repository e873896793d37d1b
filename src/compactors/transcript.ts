import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { CALL_BLOCK_TYPES, toolCallsIn } from "../messages/exchanges";
import { isTool } from "../messages/roles";

/** How each role is named in a transcript handed to a summary model. */
const ROLE_NAMES: Record<string, string> = { system: "system", human: "user", ai: "assistant", tool: "tool" };

/** Longest data URL kept in a placeholder: the payload itself means nothing to a summary model. */
const MAX_URL_CHARS = 120;

function urlOf(block: Record<string, unknown>): string | undefined {
  const url = block.image_url ?? block.url;
  if (typeof url === "string") return url;
  if (typeof url === "object" && url !== null && typeof (url as { url?: unknown }).url === "string") return (url as { url: string }).url;
  return undefined;
}

/**
 * The text of one content block as the summary model sees it: text as is,
 * anything else (images, files, audio) as a short placeholder that keeps
 * what identifies it, since the summary is all that remains of it afterwards.
 */
function blockText(block: unknown): string {
  if (typeof block === "string") return block;
  if (typeof block !== "object" || block === null) return "";
  const fields = block as Record<string, unknown>;
  if (fields.type === "text" && typeof fields.text === "string") return fields.text;
  if (typeof fields.type === "string" && CALL_BLOCK_TYPES.has(fields.type)) return ""; // rendered with the message's calls
  const url = urlOf(fields);
  const shown = url === undefined ? "" : `: ${url.startsWith("data:") ? `${url.slice(0, MAX_URL_CHARS)}…` : url}`;
  return `<${typeof fields.type === "string" ? fields.type : "attachment"}${shown}>`;
}

/** The text of a message's content, blocks joined by newlines. */
export function contentText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as unknown[]).map(blockText).filter((text) => text !== "").join("\n");
}

/**
 * A plain-text transcript of `messages` for a summary model: one entry per
 * message with its role, tool calls with their names, ids and arguments, and
 * tool results with the call they answer, so identifiers survive verbatim.
 */
export function renderTranscript(messages: readonly BaseMessage[]): string {
  return messages
    .map((message) => {
      const role = ROLE_NAMES[message.type] ?? message.type;
      const lines: string[] = [];
      if (isTool(message)) {
        const status = (message as ToolMessage).status === "error" ? ", error" : "";
        lines.push(`[tool result of ${message.name ?? "a tool"} (call ${message.tool_call_id ?? "unknown"}${status})]`);
      } else lines.push(`[${role}]`);
      const text = contentText(message.content);
      if (text !== "") lines.push(text);
      // Every call, in whatever shape its provider put it (toolCallsIn is empty for all but assistant messages).
      for (const call of toolCallsIn(message)) lines.push(`calls ${call.name ?? "a tool"}(${argumentsText(call.args)}) with id ${call.id ?? "none"}`);
      return lines.join("\n");
    })
    .join("\n\n");
}

/** A call's arguments as text: raw JSON (or what failed to parse) as it stands, parsed arguments as JSON. */
export function argumentsText(args: unknown): string {
  return typeof args === "string" ? args : JSON.stringify(args ?? {});
}
