import type { BaseMessage } from "@langchain/core/messages";
import { isAI } from "./roles";

/**
 * Every tool-call id an assistant message asks for, wherever a provider's
 * converter reads it from, so that the grouping keeps each of them with its
 * result:
 *
 * - `tool_calls`: parsed calls (every converter);
 * - `invalid_tool_calls`: calls whose arguments did not parse (ChatOpenAI puts
 *   malformed JSON there, and the raw call stays in `additional_kwargs`);
 * - `additional_kwargs.tool_calls`: OpenAI's raw format, which the OpenAI
 *   converters send whenever `tool_calls` is empty, for any message;
 * - content blocks `tool_use` (Anthropic, which its converter sends as they
 *   stand), `tool_call` (LangChain's standard blocks) and `function_call`
 *   (OpenAI Responses items, by `call_id`).
 *
 * Grouping by an id that a particular converter would not send costs nothing
 * but keeping two messages together; missing one sends an unanswered call.
 */
export function toolCallIdsOf(message: BaseMessage): readonly string[] {
  const ids: string[] = [];
  collectToolCallIds(message, ids);
  return ids;
}

/**
 * {@link toolCallIdsOf}, appending to `out` (each id once per message) and
 * returning how many it added: the layout collects every message's ids into
 * one array instead of one array per message.
 */
export function collectToolCallIds(message: BaseMessage, out: string[]): number {
  return isAI(message) ? collectAssistantCallIds(message, out) : 0;
}

/** Appends an id found in a call or block, unless this message already gave it. */
function pushCallId(item: unknown, key: "id" | "call_id", out: string[], start: number): void {
  if (typeof item !== "object" || item === null) return;
  const id = (item as { id?: unknown; call_id?: unknown })[key];
  if (typeof id === "string" && id.length > 0 && (out.length === start || out.indexOf(id, start) < 0)) out.push(id);
}

/**
 * {@link collectToolCallIds} for a message already known to be an assistant
 * message. Written out without helper arrays or closures: it runs once per AI
 * message of every new history, and the usual message (parsed `tool_calls`,
 * string content, nothing else) costs a few field reads.
 */
export function collectAssistantCallIds(message: BaseMessage, out: string[]): number {
  const start = out.length;
  const ai = message as BaseMessage & { tool_calls?: unknown; invalid_tool_calls?: unknown };
  const calls = ai.tool_calls;
  if (Array.isArray(calls)) for (let k = 0; k < calls.length; k += 1) pushCallId(calls[k], "id", out, start);
  const invalid = ai.invalid_tool_calls;
  if (Array.isArray(invalid)) for (let k = 0; k < invalid.length; k += 1) pushCallId(invalid[k], "id", out, start);
  const kwargs = message.additional_kwargs as { tool_calls?: unknown } | undefined;
  const raw = kwargs === undefined || kwargs === null ? undefined : kwargs.tool_calls;
  if (Array.isArray(raw)) for (let k = 0; k < raw.length; k += 1) pushCallId(raw[k], "id", out, start);
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      if (typeof block !== "object" || block === null) continue;
      const type = (block as { type?: unknown }).type;
      if (type === "tool_use" || type === "tool_call") pushCallId(block, "id", out, start);
      // OpenAI Responses blocks name the call by `call_id`, falling back to `id`.
      else if (type === "function_call") pushCallId(block, (block as { call_id?: unknown }).call_id == null ? "id" : "call_id", out, start);
    }
  }
  return out.length - start;
}

/**
 * Whether an assistant message asks for any tool at all, with or without an
 * id: a result without an id may then answer it by standing right after it.
 */
export function asksForTools(message: BaseMessage, idCount: number): boolean {
  if (idCount > 0) return true;
  if (!isAI(message)) return false;
  const calls = message.tool_calls;
  return Array.isArray(calls) && calls.length > 0;
}
