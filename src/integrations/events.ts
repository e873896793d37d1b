import type { Serialized } from "@langchain/core/load/serializable";
import { ensureConfig, getCallbackManagerForConfig } from "@langchain/core/runnables";
import type { CompactionHookReport } from "../compactors/compaction-hook";
import type { TokenBreakdown } from "../compactors/breakdown";
import { reasonOf } from "../errors";

/**
 * What the integrations tell LangChain's callbacks about compaction, as
 * custom events (as `dispatchCustomEvent` sends them), which show in `streamEvents` as
 * `on_custom_event` with the name and data below, and as a short child run
 * of the same name whose outputs are that data, under the run of the model
 * call or graph node that compacted. The child run is what a tracer sees:
 * LangSmith's tracer does not record custom events, but it records runs.
 */

/** A compaction was applied. */
export const COMPACTION_EVENT = "compaction";
/** A compaction was computed and not applied (it would have freed too little), or nothing could be removed. */
export const COMPACTION_DECLINED_EVENT = "compaction_declined";
/** The provider refused a request as too long; the integration compacted harder and sent it again. */
export const COMPACTION_OVERFLOW_RETRY_EVENT = "compaction_overflow_retry";
/** A summary the summarization stage asked for failed; the compaction went on without it. */
export const COMPACTION_SUMMARY_FAILED_EVENT = "compaction_summary_failed";

/** The data of a compaction event: JSON, no messages (their count and their tokens only). */
export interface CompactionEventData {
  /** The integration that compacted: `"middleware"`, `"langgraph"` or `"history"`. */
  integration: string;
  /** The compactor's strategy (`"pipeline"` for a pipeline). */
  strategy: string;
  /** The strategies of its stages, in order (one, the strategy itself, for a single compactor). */
  stages: string[];
  /** Tokens of the messages before (the compactor's count). */
  tokensBefore: number;
  /** Tokens of the messages after (the compactor's count). */
  tokensAfter: number;
  /** How many messages were removed. */
  removed: number;
  /** How many messages were replaced in place by a smaller stand-in. */
  rewritten: number;
  /** How many messages were added (omission notes, summaries). */
  added: number;
  /** How long it took, in milliseconds. */
  durationMs: number;
  /** The request's tokens by category, before and after (see `TokenBreakdown`). */
  breakdown: {
    /** The request as it came. */
    before: TokenBreakdown;
    /** The request as compacted. */
    after: TokenBreakdown;
  };
  /** Whether it was asked for (the compaction tool, an overflow retry) rather than set off by the trigger. */
  forced: boolean;
  /** For a declined compaction: why (`"min_gain"`, or `"unchanged"` when nothing could be removed) and what it would have freed. */
  declined?: {
    /** `"min_gain"` or `"unchanged"`. */
    reason: string;
    /** Tokens the compaction would have freed (with `"min_gain"`). */
    gainTokens?: number;
    /** The hook's `minGainTokens` (with `"min_gain"`). */
    minGainTokens?: number;
  };
  /** For an overflow retry: what the provider's error said, and what the request was estimated at when it was sent. */
  overflow?: {
    /** The request's tokens by the provider's count, when its error said. */
    requestTokens?: number;
    /** The provider's limit, when its error said. */
    limitTokens?: number;
    /** What the request was estimated at locally when it was sent. */
    estimatedTokens: number;
    /** The provider's error message. */
    error: string;
  };
  /** For a failed summary: why, and the error's message. */
  failure?: {
    /** The stage's strategy (`"summarization"`). */
    strategy: string;
    /** Why, in a word (see `StageFailure.reason`). */
    reason: string;
    /** The error's message. */
    error: string;
  };
}

/** The serialized form of the child runs' "chain": not a Runnable, so not constructible from the trace. */
const TRACED_AS: Serialized = { lc: 1, type: "not_implemented", id: ["langchain_compaction", "events"] };

/**
 * Sends one event to the current run's callbacks (what `dispatchCustomEvent`
 * does), then records it as a child run named `name`, started and ended at
 * once, its inputs the event's name and its outputs the data. Nothing
 * outside a run (no parent to send it to). A callback that fails is never
 * the compaction's failure.
 */
async function dispatch(name: string, data: CompactionEventData): Promise<void> {
  try {
    const manager = await getCallbackManagerForConfig(ensureConfig());
    const parentRunId = manager?.getParentRunId();
    if (manager === undefined || parentRunId === undefined) return;
    await manager.handleCustomEvent?.(name, data, parentRunId);
    const run = await manager.handleChainStart(TRACED_AS, { event: name }, undefined, undefined, undefined, undefined, name);
    await run.handleChainEnd({ ...data });
  } catch {
    // Events are for observers: a handler's error must not break the conversation.
  }
}

/** The event data a hook report gives, for `integration`. */
export function eventDataOf(report: CompactionHookReport, integration: string): CompactionEventData {
  return {
    integration,
    strategy: report.strategy,
    stages: report.stages.map((stage) => stage.strategy),
    tokensBefore: report.tokensBefore,
    tokensAfter: report.tokensAfter,
    removed: report.removed.length,
    rewritten: report.rewritten.length,
    added: report.added.length,
    durationMs: Math.round(report.durationMs * 1000) / 1000,
    breakdown: report.breakdown,
    forced: report.forced,
  };
}

/**
 * The events of one hook run: each summary failure, then the compaction or
 * its refusal. Nothing for a run the trigger did not set off (`null`).
 */
export async function emitCompactionEvents(report: CompactionHookReport | null, integration: string, extra: Partial<CompactionEventData> = {}): Promise<void> {
  if (report === null) return;
  const data = { ...eventDataOf(report, integration), ...extra };
  for (const stage of report.stages) {
    for (const failure of stage.failures ?? []) {
      await dispatch(COMPACTION_SUMMARY_FAILED_EVENT, { ...data, failure: { strategy: failure.strategy, reason: failure.reason, error: reasonOf(failure.error) } });
    }
  }
  if (extra.overflow !== undefined) {
    await dispatch(COMPACTION_OVERFLOW_RETRY_EVENT, data);
    return;
  }
  if (report.messages !== null) await dispatch(COMPACTION_EVENT, data);
  else {
    const { declined } = report;
    await dispatch(COMPACTION_DECLINED_EVENT, {
      ...data,
      declined: declined === undefined ? { reason: "unchanged" } : { reason: declined.reason, gainTokens: declined.gainTokens, minGainTokens: declined.minGainTokens },
    });
  }
}
