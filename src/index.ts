/**
 * langchain-compaction: keep LangChain.js agents and chats inside their
 * model's context window by removing the oldest history in whole units.
 *
 * @packageDocumentation
 */
export { SlidingWindowCompactor } from "./compactors/sliding-window";
export type { SlidingWindowCompactorOptions } from "./compactors/sliding-window";
export type { CompactionReport } from "./compactors/report";

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
export type { CompactionHookOptions, RequestOverhead, ToolLike } from "./compactors/compaction-hook";
