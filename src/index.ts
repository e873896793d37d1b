/**
 * langchain-compaction: keep LangChain.js agents and chats inside their
 * model's context window by removing the oldest history in whole units.
 *
 * @packageDocumentation
 */
export { SlidingWindowCompactor } from "./compactors/sliding-window";
export type { SlidingWindowCompactorOptions } from "./compactors/sliding-window";
export type { CompactionReport, RewrittenMessage, StageReport, StandsFor } from "./compactors/report";
export { evictionsOf } from "./compactors/evictions";
export type { EvictedMessage, EvictionCallback, EvictionFate } from "./compactors/evictions";
export { isCompactor } from "./compactors/compactor";
export type { Compactor, CompactOptions, RequestOverhead, ToolLike } from "./compactors/compactor";
export type { ProtectPredicate } from "./compactors/protection";
export { ToolResultPruningCompactor, DEFAULT_PRUNING_PLACEHOLDER } from "./compactors/tool-result-pruning";
export type { ToolResultPruningCompactorOptions } from "./compactors/tool-result-pruning";
export {
  SummarizationCompactor,
  SummarizationError,
  DEFAULT_SUMMARY_INSTRUCTION,
  SUMMARY_RUN_NAME,
  SUMMARY_RUN_TAGS,
} from "./compactors/summarization";
export type { SummarizationCompactorOptions, SummaryModel, SummarySource } from "./compactors/summarization";
export { ToolResultOffloadCompactor } from "./compactors/tool-result-offload";
export type { ToolResultOffloadCompactorOptions } from "./compactors/tool-result-offload";
export { createOffloadReaderTool } from "./compactors/offload-reader";
export type { OffloadReaderToolOptions } from "./compactors/offload-reader";
export { DEFAULT_OFFLOAD_NAMESPACE, OFFLOAD_READER_TOOL_NAME } from "./compactors/offload-store";
export type { OffloadedResult, OffloadStore } from "./compactors/offload-store";
export { CompactionPipeline } from "./compactors/pipeline";
export type { CompactionPipelineOptions } from "./compactors/pipeline";

export { isOmissionNote, omissionNoteMetadata, DEFAULT_OMISSION_NOTE } from "./messages/omission-note";
export type { OmissionNoteMetadata } from "./messages/omission-note";
export {
  isCompactionMessage,
  isSummaryMessage,
  compactionMetadataOf,
  COMPACTION_METADATA_KEY,
  COMPACTION_STRATEGIES,
} from "./messages/compaction-metadata";
export type {
  CompactionMetadata,
  CompactionStrategy,
  OffloadedResultMetadata,
  PrunedResultMetadata,
  SummaryMetadata,
} from "./messages/compaction-metadata";

export {
  approximateTokenCounter,
  APPROXIMATE_CHARS_PER_TOKEN,
  IMAGE_BLOCK_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
} from "./counting/approximate";
export { tiktokenCounter } from "./counting/tiktoken";
export type { TiktokenEncodingName } from "./counting/tiktoken";
export { TokenCountCache, sharedTokenCountCache } from "./counting/cache";
export type { TokenCounter, TokenCountingModel, TokenCounterLike } from "./counting/types";

export { TokenCounterError } from "./errors";

export { CompactionHook } from "./compactors/compaction-hook";
export type { CompactionHookOptions, CompactionHookReport, CompactionRunOptions, DeclinedCompaction, OverflowLesson } from "./compactors/compaction-hook";
export type { CompactionTarget, CompactionTrigger } from "./compactors/triggers";
export type { TokenBreakdown } from "./compactors/breakdown";

export { compactMessages, COMPACT_MESSAGES_RUN_NAME } from "./integrations/runnable";
export type { CompactMessagesInput, CompactMessagesOptions } from "./integrations/runnable";

// The LangGraph node needs no LangGraph import; its state annotations live in `langchain-compaction/langgraph`.
export { createCompactionNode, COMPACTION_VIEW_KEY } from "./integrations/compaction-node";
export type {
  CompactionNode,
  CompactionNodeConfig,
  CompactionNodeOptions,
  CompactionNodeState,
  CompactionNodeUpdate,
} from "./integrations/compaction-node";
export { applyCompactionView } from "./integrations/view-window";
export { withOverflowRecovery, OverflowRecoveringChatModel } from "./integrations/overflow-recovery";
export { contextOverflowOf } from "./integrations/context-overflow";
export type { ContextOverflow } from "./integrations/context-overflow";
export { createCompactionTool, COMPACTION_TOOL_NAME } from "./integrations/compaction-tool";
export type { CompactionToolOptions } from "./integrations/compaction-tool";
export {
  COMPACTION_EVENT,
  COMPACTION_DECLINED_EVENT,
  COMPACTION_OVERFLOW_RETRY_EVENT,
  COMPACTION_SUMMARY_FAILED_EVENT,
} from "./integrations/events";
export type { CompactionEventData } from "./integrations/events";
export { repairDanglingCalls, isRepairedCallResult, INTERRUPTED_CALL_RESULT } from "./messages/dangling-calls";
export type { DanglingCallRepair } from "./messages/dangling-calls";
export type { CompactionView, ViewAddition } from "./integrations/view-window";

export { CompactingChatMessageHistory, SINGLE_WRITER_CLEAR_AND_ADD } from "./integrations/history";
export type { CompactingChatMessageHistoryOptions, WrappableChatMessageHistory } from "./integrations/history";
export type { StoreRewrite, StoreRewriteOptions } from "./integrations/store-rewrite";
export { inMemoryRewrite } from "./integrations/in-memory-rewrite";
export type { InMemoryHistoryLike } from "./integrations/in-memory-rewrite";
export { redisListRewrite } from "./integrations/redis-rewrite";
export type { RedisListHistoryLike, RedisRewriteClient } from "./integrations/redis-rewrite";
export { postgresRewrite } from "./integrations/postgres-rewrite";
export type { PostgresHistoryLike, PostgresPoolClient, PostgresQueryResult } from "./integrations/postgres-rewrite";
// Types a public signature names: a report's failures, and the rewrites a stage may offer a pipeline.
export type { StageFailure } from "./compactors/report";
export type { InPlaceRewrites } from "./compactors/compactor";
export { isNativeCompaction, latestNativeCompaction } from "./messages/native-compaction";
export { cacheAwareMinGain } from "./compactors/cache-pricing";
export type { CacheAwareMinGainOptions } from "./compactors/cache-pricing";
export { CLEARED_TOOL_INPUT } from "./messages/cleared-assistant";
export { agentCompactor, RECOMMENDED_AGENT_COMPACT_TO } from "./compactors/agent-compactor";
export type { AgentCompactorOptions } from "./compactors/agent-compactor";
