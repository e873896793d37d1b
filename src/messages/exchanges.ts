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
  if (!isAI(message)) return 0;
  // Written out without helpers or closures: this runs once per AI message of every new history.
  const start = out.length;
  const lists = [message.tool_calls, message.invalid_tool_calls, (message.additional_kwargs as { tool_calls?: unknown } | undefined)?.tool_calls];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const item of list as unknown[]) {
      const id = typeof item === "object" && item !== null ? (item as { id?: unknown }).id : undefined;
      if (typeof id === "string" && id.length > 0 && out.indexOf(id, start) < 0) out.push(id);
    }
  }
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      if (typeof block !== "object" || block === null) continue;
      const { type, id, call_id: callId } = block as { type?: unknown; id?: unknown; call_id?: unknown };
      const found = type === "tool_use" || type === "tool_call" ? id : type === "function_call" ? (callId ?? id) : undefined;
      if (typeof found === "string" && found.length > 0 && out.indexOf(found, start) < 0) out.push(found);
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
