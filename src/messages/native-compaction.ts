import type { BaseMessage } from "@langchain/core/messages";
import { PrefixMemory } from "./prefix-memory";

/**
 * Provider-native compaction markers: the one definition every stage reads
 * (through `compactors/protection.ts`, and the window's note placement).
 *
 * A provider that compacts on its server hands back a marker standing for
 * everything before it, and reads the conversation from that marker on:
 *
 * 1. Anthropic (context management `compact_20260112`): a content block
 *    `{ type: "compaction", content: "<summary>" }` in the assistant's
 *    content, which `ChatAnthropic` keeps as a content block. A block whose
 *    `content` is `null` is a failed compaction the server treats as a no-op,
 *    so it marks nothing.
 * 2. OpenAI Responses (`context_management` compaction, or the output of
 *    `/responses/compact`): an output item `{ type: "compaction",
 *    encrypted_content }`. `ChatOpenAI` keeps an output item it has no
 *    field for in `additional_kwargs.tool_outputs`, and every output item in
 *    `response_metadata.output` (which its converter sends back verbatim); a
 *    caller building messages from `/responses/compact` may put the item in
 *    the content. Any of the three marks the message.
 *
 * The message carrying a marker is never split, rewritten, removed or
 * summarized, and neither is anything before the latest marker: the provider
 * has compacted that already, and a second compaction of it would only break
 * the marker's place and the prompt cache after it.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Whether `item` is a compaction block or item that stands for earlier context (not a failed, empty one). */
function isCompactionItem(item: unknown): boolean {
  if (!isRecord(item) || item.type !== "compaction") return false;
  // Anthropic's failed compaction: `content: null` (the server ignores it). OpenAI's item carries `encrypted_content`.
  if ("content" in item && item.content === null && !("encrypted_content" in item)) return false;
  return true;
}

function holdsCompactionItem(items: unknown): boolean {
  if (!Array.isArray(items)) return false;
  for (const item of items as unknown[]) if (isCompactionItem(item)) return true;
  return false;
}

/**
 * Whether `message` carries a provider-native compaction marker (an
 * Anthropic `compaction` content block, or an OpenAI Responses `compaction`
 * item in its content, `additional_kwargs.tool_outputs` or
 * `response_metadata.output`).
 */
export function isNativeCompaction(message: BaseMessage): boolean {
  if (!isRecord(message)) return false;
  if (holdsCompactionItem(message.content)) return true;
  const kwargs = message.additional_kwargs as Record<string, unknown> | undefined;
  if (isRecord(kwargs) && holdsCompactionItem(kwargs.tool_outputs)) return true;
  const metadata = message.response_metadata as Record<string, unknown> | undefined;
  return isRecord(metadata) && holdsCompactionItem(metadata.output);
}

/** The markers' indices in the last list seen per conversation (ascending; usually none). */
const memory = new PrefixMemory<{ markers: number[] }>();

/**
 * The index of the latest message carrying a native compaction marker, or
 * `-1` when none does. Every stage asks on every compaction, so the markers
 * of the last list seen for a conversation are remembered (by message
 * identity, as the layout is: `prefix-memory.ts`), and a list that continues
 * it is read only from where it differs.
 */
export function latestNativeCompaction(messages: readonly BaseMessage[]): number {
  const { entry, common } = memory.recall(messages);
  const state = entry?.state ?? { markers: [] };
  const markers = state.markers;
  while (markers.length > 0 && markers[markers.length - 1]! >= common) markers.pop();
  for (let index = common; index < messages.length; index += 1) if (isNativeCompaction(messages[index]!)) markers.push(index);
  memory.remember(entry, state, messages, common);
  return markers.length === 0 ? -1 : markers[markers.length - 1]!;
}
