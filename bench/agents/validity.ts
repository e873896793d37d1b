/**
 * Would a provider accept this request? A strict ordering check on the
 * LangChain messages, then the request converted offline by the converters
 * of `@langchain/openai` (Chat Completions and Responses) and
 * `@langchain/anthropic`, with each provider's own rules checked on the
 * converted payload (as property 9 of `__tests__/properties.test.ts` does).
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";

/**
 * Ordering rules every chat provider enforces: system messages only at the
 * start, a user message first after them, every tool call answered by the
 * tool messages directly after its AI message (before anything else), and
 * no tool message that answers no open call.
 */
export function orderingProblem(messages: readonly BaseMessage[]): string | null {
  let leading = true;
  let open: Set<string> | null = null;
  for (const [index, message] of messages.entries()) {
    if (message.type === "system") {
      if (!leading) return `#${index}: a system message after the start`;
      continue;
    }
    if (leading && message.type !== "human") return `#${index}: the first message after the system prompt is ${message.type}, not human`;
    leading = false;
    if (message.type === "tool") {
      const id = (message as ToolMessage).tool_call_id;
      if (open === null || !open.has(id)) return `#${index}: tool result ${id} answers no open call`;
      open.delete(id);
      continue;
    }
    if (open !== null && open.size > 0) return `#${index}: calls ${[...open].join(", ")} unanswered before a ${message.type} message`;
    open = null;
    if (AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0) open = new Set(message.tool_calls!.map((call) => call.id ?? ""));
  }
  if (leading) return "no message besides the system prompt";
  if (open !== null && (open as Set<string>).size > 0) return `the request ends with unanswered calls ${[...(open as Set<string>)].join(", ")}`;
  return null;
}

type Param = Record<string, unknown>;

function completionsProblem(params: readonly Param[]): string | null {
  let open: Set<string> | null = null;
  for (const [index, param] of params.entries()) {
    if (param.role === "tool") {
      if (open === null || !open.has(param.tool_call_id as string)) return `openai: tool message at ${index} answers no preceding tool_calls`;
      open.delete(param.tool_call_id as string);
      continue;
    }
    if (open !== null && open.size > 0) return `openai: tool_calls unanswered before message ${index}`;
    const calls = param.tool_calls as { id: string }[] | undefined;
    open = param.role === "assistant" && calls && calls.length > 0 ? new Set(calls.map((call) => call.id)) : null;
  }
  return open !== null && (open as Set<string>).size > 0 ? "openai: the request ends with unanswered tool_calls" : null;
}

function responsesProblem(items: readonly Param[]): string | null {
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const [index, item] of items.entries()) {
    if (item.type === "function_call") called.add(item.call_id as string);
    if (item.type === "function_call_output") {
      if (!called.has(item.call_id as string)) return `responses: function_call_output at ${index} without its call`;
      answered.add(item.call_id as string);
    }
  }
  for (const id of called) if (!answered.has(id)) return `responses: function_call ${id} without output`;
  return null;
}

type AnthropicBlock = { type: string; id?: string; tool_use_id?: string };
type AnthropicPayload = { messages: { role: string; content: string | AnthropicBlock[] }[] };

function anthropicProblem({ messages }: AnthropicPayload): string | null {
  if (messages.length === 0) return "anthropic: no messages";
  if (messages[0]!.role !== "user") return `anthropic: the first message is ${messages[0]!.role}`;
  const blocks = (i: number): AnthropicBlock[] => {
    const content = messages[i]?.content;
    return Array.isArray(content) ? content : [];
  };
  for (let i = 0; i < messages.length; i += 1) {
    const uses = blocks(i).filter((b) => b.type === "tool_use").map((b) => b.id!);
    if (uses.length > 0) {
      const results = new Set(blocks(i + 1).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!));
      if (messages[i + 1]?.role !== "user" || uses.some((id) => !results.has(id))) return `anthropic: tool_use at ${i} without tool_result blocks right after`;
    }
    const results = blocks(i).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!);
    if (results.length > 0) {
      const before = new Set(blocks(i - 1).filter((b) => b.type === "tool_use").map((b) => b.id!));
      if (results.some((id) => !before.has(id))) return `anthropic: tool_result at ${i} answers no tool_use of the message before`;
    }
  }
  return null;
}

/** The first reason a provider would reject `messages`, or `null` when the strict checker and all three converters accept it. */
export function providerProblem(messages: BaseMessage[]): string | null {
  const ordering = orderingProblem(messages);
  if (ordering !== null) return ordering;
  try {
    const completions = completionsProblem(convertMessagesToCompletionsMessageParams({ messages, model: "gpt-4o" }) as unknown as Param[]);
    if (completions !== null) return completions;
    const responses = responsesProblem(convertMessagesToResponsesInput({ messages, model: "gpt-4o", zdrEnabled: false }) as unknown as Param[]);
    if (responses !== null) return responses;
    return anthropicProblem(convertPromptToAnthropic(new ChatPromptValue(messages)) as unknown as AnthropicPayload);
  } catch (error) {
    return `a converter threw: ${(error as Error).message}`;
  }
}
