/**
 * The recommended compactor for tool-using agents, in one call: large tool
 * results offloaded first when a store is given (the agent reads one back
 * instead of redoing the work), then summaries (so what the agent learned
 * stays in view), then a sliding window that never removes a summary (so
 * the window cannot drop what the summaries hold, and the request always
 * fits).
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
import { ToolResultOffloadCompactor } from "./tool-result-offload";
import type { ToolResultOffloadCompactorOptions } from "./tool-result-offload";

/**
 * The `compactTo` the agent benchmark recommends with {@link agentCompactor}
 * (`agentCompactionMiddleware`'s default): deeper than the hook's default
 * 0.4, so compactions, each a rewrite of the provider's cached prefix, come
 * less often.
 */
export const RECOMMENDED_AGENT_COMPACT_TO = 0.3;

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
   * Offload large tool results before summarizing: each leaves a short
   * reference in context and is kept in `offload.store`, where the agent
   * reads it back with `createOffloadReaderTool({ store })` (bind that tool
   * to the agent, with the same namespace). A result read back costs one
   * tool call; one summarized or dropped may cost redoing the work. Default:
   * no offloading.
   */
  offload?: Omit<ToolResultOffloadCompactorOptions, "protect">;
  /** Further stages to run first (after offloading), such as a `ToolResultPruningCompactor`. Default none. */
  before?: readonly Compactor[];
}

/**
 * The recommended compactor for agents: summarization (the summary call
 * resends the conversation for the provider's cache) then a sliding window
 * that keeps every summary. Pass it as the `compactor` of
 * `compactionMiddleware`, `createCompactionNode` or the history wrapper:
 *
 * ```ts
 * const store = new InMemoryStore();
 * createAgent({
 *   model,
 *   tools: [...tools, createOffloadReaderTool({ store })],
 *   middleware: [compactionMiddleware({ contextWindow: 200_000, compactTo: 0.3, compactor: agentCompactor({ model, offload: { store } }) })],
 * });
 * ```
 *
 * That is the configuration the project's agent benchmark recommends
 * (offloading first, and `compactTo: 0.3` on the hook: fewer, deeper
 * compactions, each a cache rewrite). Without a store, leave `offload` out
 * and the reader tool off: summaries then carry what the results held.
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
  const { before = [], offload, protect, summaryPrompt = "conversation", ...summary } = options;
  if (!Array.isArray(before)) throw new TypeError(`agentCompactor \`before\` must be an array of compactors, got ${describeValue(before)}`);
  before.forEach((stage, index) => {
    if (!isCompactor(stage)) throw new TypeError(`agentCompactor \`before[${index}]\` must be a compactor (compact and compactWithReport), got ${describeValue(stage)}`);
  });
  const keep: ProtectPredicate = protect === undefined ? isSummaryMessage : (message, index) => isSummaryMessage(message) || protect(message, index);
  if (offload !== undefined && (typeof offload !== "object" || offload === null)) {
    throw new TypeError(`agentCompactor \`offload\` must be the options of a ToolResultOffloadCompactor (with a store), got ${describeValue(offload)}`);
  }
  const offloading = offload === undefined ? [] : [new ToolResultOffloadCompactor({ ...offload, ...(protect === undefined ? {} : { protect }) })];
  return new CompactionPipeline([
    ...offloading,
    ...before,
    new SummarizationCompactor({ ...summary, summaryPrompt, ...(protect === undefined ? {} : { protect }) }),
    new SlidingWindowCompactor({ protect: keep }),
  ]);
}
