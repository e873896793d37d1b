import { BaseMessage } from "@langchain/core/messages";

/**
 * Every message a compaction writes (an omission note, a summary, a pruned or
 * offloaded tool result) says so under `response_metadata.compaction`, with
 * the `strategy` that wrote it. `response_metadata` is what survives:
 * `toDict()` / `mapChatMessagesToStoredMessages` keep it, LangGraph's
 * serializer keeps it, and no provider integration sends it to the model
 * (unlike `additional_kwargs`, which some spread into requests).
 */
export const COMPACTION_METADATA_KEY = "compaction";

/** The strategies of this library, as they appear in `response_metadata.compaction.strategy`. */
export const COMPACTION_STRATEGIES = [
  "sliding_window",
  "summarization",
  "tool_result_pruning",
  "tool_result_offloading",
] as const;

/** One of {@link COMPACTION_STRATEGIES}. */
export type CompactionStrategy = (typeof COMPACTION_STRATEGIES)[number];

/** What every compaction message carries under `response_metadata.compaction`: its strategy, and that strategy's own fields. */
export interface CompactionMetadata {
  /** The strategy that wrote the message. */
  strategy: CompactionStrategy;
  [field: string]: unknown;
}

/** A summary's metadata (`strategy: "summarization"`). */
export interface SummaryMetadata extends CompactionMetadata {
  /** Always `"summarization"`. */
  strategy: "summarization";
  /** How many messages of the conversation the summary stands for (earlier summaries count as one each). */
  summarized_messages: number;
  /** What it summarized: `historical_turns`, `historical_summaries`, `current_task_steps` or `current_task_summaries`. */
  source: string;
}

/** A pruned tool result's metadata. */
export interface PrunedResultMetadata extends CompactionMetadata {
  /** Always `"tool_result_pruning"`. */
  strategy: "tool_result_pruning";
  /** Tokens of the original result, by the counter of the compaction that pruned it. */
  original_tokens: number;
}

/** An offloaded tool result's metadata. */
export interface OffloadedResultMetadata extends CompactionMetadata {
  /** Always `"tool_result_offloading"`. */
  strategy: "tool_result_offloading";
  /** Tokens of the original result, by the counter of the compaction that offloaded it. */
  original_tokens: number;
  /** The key the original is stored under (in the compactor's namespace). */
  key: string;
}

const KNOWN = new Set<string>(COMPACTION_STRATEGIES);

/**
 * The compaction metadata of `message`, or `undefined` when no strategy of
 * this library wrote it. Only the known strategy names count: metadata another
 * tool happened to store under the same key does not make a message ours.
 */
export function compactionMetadataOf(message: BaseMessage): CompactionMetadata | undefined {
  const meta = (message.response_metadata as Record<string, unknown> | undefined)?.[COMPACTION_METADATA_KEY];
  if (typeof meta !== "object" || meta === null) return undefined;
  const strategy = (meta as { strategy?: unknown }).strategy;
  return typeof strategy === "string" && KNOWN.has(strategy) ? (meta as CompactionMetadata) : undefined;
}

/** The strategy that wrote `message`, or `undefined` for a message no compaction wrote. */
export function compactionStrategyOf(message: BaseMessage): CompactionStrategy | undefined {
  return compactionMetadataOf(message)?.strategy;
}

/**
 * Whether `message` was written by a compaction of this library: an omission
 * note, a summary, a pruned or an offloaded tool result. Decided by the
 * metadata only (it survives stores and checkpointers), never by the text.
 */
export function isCompactionMessage(message: unknown): message is BaseMessage {
  return BaseMessage.isInstance(message) && compactionMetadataOf(message) !== undefined;
}

/**
 * Whether `message` is a summary written by `SummarizationCompactor` (a human
 * message). As a sliding window's `protect`, it keeps the summaries when the
 * window cuts: `new SlidingWindowCompactor({ protect: isSummaryMessage })`.
 */
export function isSummaryMessage(message: BaseMessage): boolean {
  return message.type === "human" && compactionStrategyOf(message) === "summarization";
}

/** `response_metadata` of `message` with `compaction` set to `metadata` (a new object; the message's own is not touched). */
export function withCompactionMetadata(
  message: BaseMessage,
  metadata: CompactionMetadata,
): Record<string, unknown> {
  return { ...(message.response_metadata as Record<string, unknown> | undefined), [COMPACTION_METADATA_KEY]: metadata };
}
