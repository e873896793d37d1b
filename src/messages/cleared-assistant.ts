import { AIMessage } from "@langchain/core/messages";
import type { AIMessageFields, BaseMessage } from "@langchain/core/messages";
import { toolCallsIn } from "./exchanges";

/**
 * An assistant message with its reasoning and some of its tool-call inputs
 * cleared, in every shape a provider's LangChain integration keeps them, so
 * that no converter sends back what was cleared and every request stays valid:
 *
 * - reasoning: content blocks `thinking` and `redacted_thinking` (Anthropic)
 *   and `reasoning` (OpenAI Responses, LangChain's standard blocks);
 *   `additional_kwargs.reasoning` (the Responses reasoning item) and
 *   `additional_kwargs.reasoning_content` (providers that return reasoning as
 *   text); `reasoning` items of `response_metadata.output`, which
 *   `ChatOpenAI`'s Responses converter sends back verbatim. With the
 *   reasoning item gone, the other output items of that response lose their
 *   item `id` (the API rejects an item sent by id without the reasoning item
 *   it was produced with), and so do the call ids `ChatOpenAI` keeps for them;
 * - a call's input (read through `toolCallsIn`): `tool_calls[].args` and
 *   `tool_use`/`tool_call` blocks become {@link CLEARED_TOOL_INPUT}, an
 *   object; `invalid_tool_calls[].args`, `additional_kwargs.tool_calls[]
 *   .function.arguments`, `function_call` blocks and `function_call` items of
 *   `response_metadata.output` become its JSON text (a rewritten item loses its
 *   item `id`: it is no longer the item the provider stored).
 *
 * The call ids, names, text and everything else stay as they were.
 */

/** Content block types that hold a model's reasoning. */
export const REASONING_BLOCK_TYPES: ReadonlySet<string> = new Set(["thinking", "redacted_thinking", "reasoning"]);

/** What a cleared call's input becomes: a JSON object, as every provider requires of a call's input. */
export const CLEARED_TOOL_INPUT: Readonly<Record<string, string>> = Object.freeze({
  input_removed: "The input of this call was removed to free up context.",
});
const CLEARED_TOOL_INPUT_JSON = JSON.stringify(CLEARED_TOOL_INPUT);

/** `ChatOpenAI`'s map from call id to Responses item id, in `additional_kwargs`. */
const FUNCTION_CALL_IDS_KEY = "__openai_function_call_ids__";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isReasoningBlock(block: unknown): boolean {
  return isRecord(block) && typeof block.type === "string" && REASONING_BLOCK_TYPES.has(block.type);
}

/** Whether `message` carries reasoning in any of the shapes this module clears. */
export function holdsReasoning(message: BaseMessage): boolean {
  if (Array.isArray(message.content) && (message.content as unknown[]).some(isReasoningBlock)) return true;
  const kwargs = message.additional_kwargs as Record<string, unknown> | undefined;
  if (isRecord(kwargs) && (kwargs.reasoning !== undefined || kwargs.reasoning_content !== undefined)) return true;
  const output = (message.response_metadata as Record<string, unknown> | undefined)?.output;
  return Array.isArray(output) && (output as unknown[]).some((item) => isRecord(item) && item.type === "reasoning");
}

/** The text of a call's input, as a counter would read it. */
export function toolInputText(args: unknown): string {
  return typeof args === "string" ? args : JSON.stringify(args ?? {});
}

/** What to clear from one assistant message. */
export interface AssistantClearing {
  /** Clear its reasoning. */
  reasoning: boolean;
  /** The ids of the calls whose input to clear. */
  inputs: ReadonlySet<string>;
}

/**
 * `message` with `clearing` applied (a new message; the original is not
 * touched), or `null` when that changes nothing or would leave an assistant
 * message with neither content nor calls (which providers reject).
 */
export function clearedAssistant(message: AIMessage, clearing: AssistantClearing): AIMessage | null {
  const reasoning = clearing.reasoning && holdsReasoning(message);
  const inputs = new Set([...clearing.inputs].filter((id) => toolCallsIn(message).some((call) => call.id === id)));
  if (!reasoning && inputs.size === 0) return null;
  const clearsInput = (id: unknown) => typeof id === "string" && inputs.has(id);

  let content: AIMessage["content"] = message.content;
  if (Array.isArray(content)) {
    const blocks: unknown[] = [];
    for (const block of content as unknown[]) {
      if (reasoning && isReasoningBlock(block)) continue;
      if (!isRecord(block)) {
        blocks.push(block);
        continue;
      }
      if ((block.type === "tool_use" || block.type === "tool_call") && clearsInput(block.id)) {
        blocks.push(block.type === "tool_use" ? { ...block, input: { ...CLEARED_TOOL_INPUT } } : { ...block, args: { ...CLEARED_TOOL_INPUT } });
      } else if (block.type === "function_call" && clearsInput(block.call_id ?? block.id)) {
        blocks.push({ ...block, arguments: CLEARED_TOOL_INPUT_JSON });
      } else blocks.push(block);
    }
    content = blocks as AIMessage["content"];
  }
  const toolCalls = (message.tool_calls ?? []).map((call) => (clearsInput(call.id) ? { ...call, args: { ...CLEARED_TOOL_INPUT } } : call));
  const invalidToolCalls = (message.invalid_tool_calls ?? []).map((call) => (clearsInput(call.id) ? { ...call, args: CLEARED_TOOL_INPUT_JSON } : call));
  if (Array.isArray(content) && content.length === 0 && toolCalls.length === 0 && invalidToolCalls.length === 0) return null;

  const kwargs: Record<string, unknown> = { ...(message.additional_kwargs as Record<string, unknown>) };
  if (reasoning) {
    delete kwargs.reasoning;
    delete kwargs.reasoning_content;
    delete kwargs[FUNCTION_CALL_IDS_KEY];
  } else if (isRecord(kwargs[FUNCTION_CALL_IDS_KEY])) {
    const itemIds = { ...(kwargs[FUNCTION_CALL_IDS_KEY] as Record<string, unknown>) };
    for (const id of inputs) delete itemIds[id];
    kwargs[FUNCTION_CALL_IDS_KEY] = itemIds;
  }
  if (Array.isArray(kwargs.tool_calls)) {
    kwargs.tool_calls = (kwargs.tool_calls as unknown[]).map((call) =>
      isRecord(call) && clearsInput(call.id) && isRecord(call.function) ? { ...call, function: { ...call.function, arguments: CLEARED_TOOL_INPUT_JSON } } : call,
    );
  }

  const metadata: Record<string, unknown> = { ...(message.response_metadata as Record<string, unknown>) };
  if (Array.isArray(metadata.output)) {
    const items: unknown[] = [];
    for (const item of metadata.output as unknown[]) {
      if (!isRecord(item)) {
        items.push(item);
        continue;
      }
      if (reasoning && item.type === "reasoning") continue;
      const rewritten = item.type === "function_call" && clearsInput(item.call_id);
      if (!reasoning && !rewritten) {
        items.push(item);
        continue;
      }
      const { id: _itemId, ...rest } = item;
      // A compaction item keeps its id: it is the provider's own record of the compacted context.
      const kept = item.type === "compaction" ? item : rest;
      items.push(rewritten ? { ...kept, arguments: CLEARED_TOOL_INPUT_JSON } : kept);
    }
    metadata.output = items;
  }

  const fields: AIMessageFields = {
    content,
    tool_calls: toolCalls,
    invalid_tool_calls: invalidToolCalls,
    additional_kwargs: kwargs,
    response_metadata: metadata,
  };
  if (message.id !== undefined) fields.id = message.id;
  if (message.name !== undefined) fields.name = message.name;
  if (message.usage_metadata !== undefined) fields.usage_metadata = message.usage_metadata;
  return new AIMessage(fields);
}
