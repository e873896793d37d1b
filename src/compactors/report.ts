import type { BaseMessage, HumanMessage } from "@langchain/core/messages";

/** What one compaction did, for logging and for the integrations. */
export interface CompactionReport {
  /** The compacted conversation, or `null` when it was left as it was. */
  messages: BaseMessage[] | null;
  /** Messages of the input that are not in the result, in their original order (earlier notes included). */
  removed: BaseMessage[];
  /** How many input messages the result keeps (the new note not included). */
  keptCount: number;
  /** The new omission note, or `null` (nothing removed, or notes disabled). */
  note: HumanMessage | null;
  /** Whether the current task's own steps were trimmed (then the note follows the task message). */
  stepsTrimmed: boolean;
  /** Tokens of the whole input. */
  tokensBefore: number;
  /** Tokens of the result (the note included); equal to `tokensBefore` when nothing changed. */
  tokensAfter: number;
}
