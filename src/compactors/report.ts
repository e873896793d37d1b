import type { BaseMessage, HumanMessage } from "@langchain/core/messages";

/** A message a compaction replaced by a smaller one standing in its place (same `id`, same position). */
export interface RewrittenMessage {
  /** The input's message. */
  original: BaseMessage;
  /** What stands in its place in the result. */
  replacement: BaseMessage;
}

/**
 * An added message that stands for removed ones: a summary and the messages
 * it summarizes, an omission note and the messages it counts. Lets a caller
 * link what left a conversation to what replaced it (an archive, `onEvict`).
 */
export interface StandsFor {
  /** The added message, as it stands in the result. */
  added: BaseMessage;
  /** The input messages it stands for, in their original order; each of them is in `removed`. */
  originals: BaseMessage[];
}

/** Something a stage tried and could not do, which it worked around rather than failing the compaction. */
export interface StageFailure {
  /** The stage's strategy. */
  strategy: string;
  /** Why, in a word (for a summary: `"model_error"`, `"empty"`, `"too_large"`, `"not_a_message"`, `"circuit_open"`). */
  reason: string;
  /** The error: the model's own, or the stage's explanation. */
  error: unknown;
}

/** What one strategy did: the part of a report every stage of a pipeline gives. */
export interface StageReport {
  /** The strategy that ran, as in `response_metadata.compaction.strategy` (`"sliding_window"`, ...); `"pipeline"` for a pipeline's own report. */
  strategy: string;
  /** The compacted conversation, or `null` when it was left as it was. */
  messages: BaseMessage[] | null;
  /** Messages of the input that are not in the result, in their original order (earlier notes included); rewritten ones are in `rewritten` instead. */
  removed: BaseMessage[];
  /** Messages of the input replaced in place by a smaller stand-in, in their original order. */
  rewritten: RewrittenMessage[];
  /** Messages the compaction added (omission notes, summaries), in their order in the result. */
  added: BaseMessage[];
  /**
   * For each added message that stands for removed ones, which: a summary
   * for the messages it summarizes, the omission note for every message
   * removed. A removed message listed under none had nothing put in its place.
   * Every report of this library's compactors has it; a compactor of your
   * own may leave it out, which reads as empty.
   */
  standsFor?: StandsFor[];
  /** What the stage tried and could not do (a summary that failed); absent or empty when nothing failed. */
  failures?: StageFailure[];
  /** Tokens of the whole input (`NaN` where `compact` skipped counting it). */
  tokensBefore: number;
  /** Tokens of the result, added messages included; equal to `tokensBefore` when nothing changed. */
  tokensAfter: number;
}

/** What one compaction did, for logging and for the integrations. */
export interface CompactionReport extends StageReport {
  /** How many input messages the result keeps, rewritten ones included (added messages not included). */
  keptCount: number;
  /** The new omission note of the sliding window, or `null` (nothing removed, notes disabled, or another strategy). */
  note: HumanMessage | null;
  /** Whether the current task's own steps were trimmed (then the note follows the task message). */
  stepsTrimmed: boolean;
  /** One entry per strategy that ran, in order; a single compactor reports itself as its one stage. */
  stages: StageReport[];
}
