/**
 * Small builders for the stage tests: messages whose token counts can be
 * read off their content (one token per character of string content), so
 * expected results are worked out by hand from the rules.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { DEFAULT_PRUNING_PLACEHOLDER } from "../../src";
import type { ProtectPredicate } from "../../src";

/** One token per character of string content (0 for block content); additive over messages. */
export const lengthCounter = (messages: BaseMessage[]): number =>
  messages.reduce((sum, m) => sum + (typeof m.content === "string" ? m.content.length : 0), 0);

/** A `protect` predicate pinning the messages with these ids. */
export const protectIds =
  (...ids: string[]): ProtectPredicate =>
  (message) =>
    ids.includes(message.id ?? "");

export const x = (n: number, label = "") => (label + "x".repeat(n)).slice(0, n);
export const system = (n = 10, label = "S") => new SystemMessage(x(n, label));
export const human = (n = 10, label = "H") => new HumanMessage(x(n, label));
export const answer = (n = 10, label = "A") => new AIMessage(x(n, label));
export const calling = (ids: string[], n = 10, name = "lookup") =>
  new AIMessage({ content: x(n, "C"), tool_calls: ids.map((id) => ({ id, name, args: { id }, type: "tool_call" as const })) });
export const result = (id: string, n = 10, fields: Partial<{ name: string; status: "success" | "error"; id: string }> = {}) =>
  new ToolMessage({ tool_call_id: id, content: x(n, `T${id}:`), name: fields.name ?? "lookup", ...fields });

/** The conversation's tokens under {@link lengthCounter}. */
export const tokens = (messages: BaseMessage[]) => lengthCounter(messages);

/** A signal that is already aborted with `reason`. */
export function abortedSignal(reason: unknown = new Error("stop")): AbortSignal {
  const controller = new AbortController();
  controller.abort(reason);
  return controller.signal;
}

/** The default pruning placeholder for a tool named `name`. */
export const placeholderFor = (name: string) => DEFAULT_PRUNING_PLACEHOLDER.replace("{tool_name}", name);

/** system, task, then `n` steps each with one result of `size` tokens, then (by default) a final answer. */
export function agentRun(n: number, size = 300, withAnswer = true): BaseMessage[] {
  const messages: BaseMessage[] = [system(), human()];
  for (let i = 0; i < n; i += 1) messages.push(calling([`c${i}`]), result(`c${i}`, size));
  if (withAnswer) messages.push(answer());
  return messages;
}
