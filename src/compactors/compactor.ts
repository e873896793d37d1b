import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCounterLike } from "../counting/types";
import type { CompactionReport } from "./report";

/** Per-call options every compactor accepts. */
export interface CompactOptions {
  /**
   * Aborts the compaction: a counter or a summary model still running is
   * abandoned and the call rejects with the signal's reason. Nothing is
   * half-applied: a compactor only returns a new list, it never edits its input.
   */
  signal?: AbortSignal;
}

/**
 * What every compaction strategy offers, and what every integration accepts
 * (`CompactionHook`, `compactMessages`, `createCompactionNode`,
 * `compactionMiddleware`, `CompactingChatMessageHistory`). An array of
 * compactors given to an integration means a `CompactionPipeline` of them.
 *
 * Recognised by its methods ({@link isCompactor}), never by `instanceof`: a
 * compactor may come from another copy of this package (ESM and CommonJS
 * loaded side by side), or be the user's own object.
 */
export interface Compactor {
  /**
   * Compacts `messages` toward `targetTokens`: the compacted list, or `null`
   * when it fits or nothing can usefully be changed. Neither the array nor its
   * messages are modified.
   */
  compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null>;
  /** Like `compact`, with a report of what was done. */
  compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport>;
}

/** Whether `value` offers the {@link Compactor} methods (a duck check: no `instanceof`). */
export function isCompactor(value: unknown): value is Compactor {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<Compactor>).compact === "function" &&
    typeof (value as Partial<Compactor>).compactWithReport === "function"
  );
}
