/**
 * langchain-compaction: keep LangChain.js agents and chats inside their
 * model's context window by removing the oldest history in whole units.
 *
 * @packageDocumentation
 */
export { SlidingWindowCompactor } from "./compactors/sliding-window";
export type { SlidingWindowCompactorOptions } from "./compactors/sliding-window";
export type { CompactionReport, RewrittenMessage, StageReport } from "./compactors/report";
export { isCompactor } from "./compactors/compactor";
export type { Compactor, CompactOptions } from "./compactors/compactor";

export { isCompactionNote, compactionNoteMetadata, DEFAULT_OMISSION_NOTE } from "./messages/note";
export type { CompactionNoteMetadata } from "./messages/note";

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
export type {
  CompactionHookOptions,
  CompactionHookReport,
  DeclinedCompaction,
  RequestOverhead,
  ToolLike,
} from "./compactors/compaction-hook";

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
export type { CompactionView, ViewAddition } from "./integrations/view-window";

export { CompactingChatMessageHistory } from "./integrations/history";
export type {
  CompactingChatMessageHistoryOptions,
  EvictionCallback,
  MessageRewrite,
  WrappableChatMessageHistory,
} from "./integrations/history";
export { redisListRewrite } from "./integrations/redis-rewrite";
export type { RedisListHistoryLike, RedisRewriteClient } from "./integrations/redis-rewrite";
