import type { BaseMessage } from "@langchain/core/messages";
import type { CompactionReport, RewrittenMessage, StageFailure, StandsFor } from "./report";

/** What a rewriting or summarizing stage did, before it is shaped into a report. */
export interface StageOutcome {
  strategy: string;
  input: readonly BaseMessage[];
  /** The result, or `null` for "left as it was". */
  messages: BaseMessage[] | null;
  removed: BaseMessage[];
  rewritten: RewrittenMessage[];
  added: BaseMessage[];
  /** Which removed messages each added message stands for (see `StageReport.standsFor`). Default: none. */
  standsFor?: StandsFor[];
  /** What the stage tried and could not do (see `StageReport.failures`). Default: none. */
  failures?: StageFailure[];
  tokensBefore: number;
  tokensAfter: number;
}

/** A report of a stage other than the sliding window: it writes no omission note and trims no steps of its own. */
export function stageReport(outcome: StageOutcome): CompactionReport {
  const { strategy, input, messages, removed, rewritten, added, standsFor = [], failures, tokensBefore, tokensAfter } = outcome;
  const stage = { strategy, messages, removed, rewritten, added, standsFor, ...(failures === undefined || failures.length === 0 ? {} : { failures }), tokensBefore, tokensAfter };
  return {
    ...stage,
    keptCount: input.length - removed.length,
    note: null,
    stepsTrimmed: false,
    stages: [stage],
  };
}

/** The report of a stage that changed nothing. */
export function unchangedReport(strategy: string, input: readonly BaseMessage[], tokens: number): CompactionReport {
  return stageReport({ strategy, input, messages: null, removed: [], rewritten: [], added: [], tokensBefore: tokens, tokensAfter: tokens });
}
