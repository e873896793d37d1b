/**
 * The recommended compactor for tool-using agents, in one call: summaries
 * first (so what the agent learned stays in view), then a sliding window
 * that never removes a summary (so the window cannot drop what the
 * summaries hold, and the request always fits).
 */
import { describeValue } from "../errors";
import { isSummaryMessage } from "../messages/compaction-metadata";
import type { Compactor } from "./compactor";
import { isCompactor } from "./compactor";
import { CompactionPipeline } from "./pipeline";
import type { ProtectPredicate } from "./protection";
import { SlidingWindowCompactor } from "./sliding-window";
import { SummarizationCompactor } from "./summarization";
import type { SummarizationCompactorOptions } from "./summarization";

/** Options of {@link agentCompactor}: the summary model, and any summarization option to override. */
export interface AgentCompactorOptions extends Omit<SummarizationCompactorOptions, "protect"> {
  /**
   * What a summary call is sent. Default `"conversation"`: the conversation
   * as the agent's model last saw it, with the request to summarize at the
   * end, so that a provider's prompt cache serves all of it but the request
   * when `model` is the agent's own model. `"transcript"` sends a plain
   * transcript of only the messages replaced (better when the summary
   * model is another, cheaper model that shares no cache with the agent).
   */
  summaryPrompt?: "transcript" | "conversation";
  /** Messages neither summarized nor removed by the window (summaries are always kept by the window). */
  protect?: ProtectPredicate;
  /**
   * Stages run before summarization, such as a `ToolResultOffloadCompactor`
   * or a `ToolResultPruningCompactor`. Default none: a summary reads what
   * the agent saw, and placeholders hold nothing to summarize.
   */
  before?: readonly Compactor[];
}

/**
 * The recommended compactor for agents: summarization (the summary call
 * resends the conversation for the provider's cache) then a sliding window
 * that keeps every summary. Pass it as the `compactor` of
 * `compactionMiddleware`, `createCompactionNode` or the history wrapper:
 *
 * ```ts
 * compactionMiddleware({ contextWindow: 200_000, compactor: agentCompactor({ model }) })
 * ```
 *
 * `model` is best the agent's own chat model: then a summary call reads
 * the conversation from the provider's cache instead of paying for a fresh
 * transcript. Every option of `SummarizationCompactor` may be overridden.
 *
 * @returns a new pipeline; each call builds its own stages (a summarization
 * stage's circuit breaker is shared by the conversations it compacts).
 */
export function agentCompactor(options: AgentCompactorOptions): CompactionPipeline {
  if (typeof options !== "object" || options === null) throw new TypeError(`agentCompactor options must be an object, got ${describeValue(options)}`);
  const { before = [], protect, summaryPrompt = "conversation", ...summary } = options;
  if (!Array.isArray(before)) throw new TypeError(`agentCompactor \`before\` must be an array of compactors, got ${describeValue(before)}`);
  before.forEach((stage, index) => {
    if (!isCompactor(stage)) throw new TypeError(`agentCompactor \`before[${index}]\` must be a compactor (compact and compactWithReport), got ${describeValue(stage)}`);
  });
  const keep: ProtectPredicate = protect === undefined ? isSummaryMessage : (message, index) => isSummaryMessage(message) || protect(message, index);
  return new CompactionPipeline([
    ...before,
    new SummarizationCompactor({ ...summary, summaryPrompt, ...(protect === undefined ? {} : { protect }) }),
    new SlidingWindowCompactor({ protect: keep }),
  ]);
}
