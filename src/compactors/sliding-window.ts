import type { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { sharedTokenCountCache, TokenCountCache } from "../counting/cache";
import { AsyncCountNeeded, countTotal, MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertWholeNumber, describeValue } from "../errors";
import { layoutConversation } from "../messages/layout";
import type { ConversationLayout, MessageGroup } from "../messages/layout";
import { compactionNoteMetadata, createCompactionNote, DEFAULT_OMISSION_NOTE } from "../messages/note";
import { isMessage } from "../messages/roles";
import { assertCompactOptions, raceAbort, throwIfAborted } from "./abort";
import type { CompactOptions } from "./compactor";
import type { CompactionReport } from "./report";
import { selectWindow } from "./selection";

/** The `strategy` of the sliding window's reports and notes. */
const SLIDING_WINDOW_STRATEGY = "sliding_window";
import type { WindowSelection } from "./selection";

/** Options of {@link SlidingWindowCompactor}. */
export interface SlidingWindowCompactorOptions {
  /**
   * The newest steps of the current task to keep whatever their size.
   * `0` lets every step go. Default `1`.
   */
  minKeepSteps?: number;
  /**
   * Text of the note that stands in for what was removed; `{num_removed}` is
   * replaced by the number of messages removed. `null` or `""` removes
   * history silently. Default {@link DEFAULT_OMISSION_NOTE}.
   */
  omissionNote?: string | null;
  /**
   * Where token counts are remembered between compactions. Default: one cache
   * shared by every compactor; `null` counts afresh every time.
   */
  cache?: TokenCountCache | null;
}

/** Which input messages a selection keeps, as a mask over indices. */
function keptMask(length: number, layout: ConversationLayout, groups: readonly MessageGroup[]): Uint8Array {
  const keep = new Uint8Array(length);
  keep.fill(1, 0, layout.systemEnd);
  if (layout.anchor >= 0) keep[layout.anchor] = 1;
  for (const group of groups) for (const index of group.members) keep[index] = 1;
  return keep;
}

/**
 * Removes the oldest history in whole units until a conversation fits a token
 * target, so that what is left is always a conversation a provider accepts:
 *
 * - leading system messages (the instructions) and the latest real human
 *   message (the current task) are always kept;
 * - history before the task goes in whole turns, oldest first;
 * - only when that is not enough do the task's own steps go, oldest first: an
 *   AI message together with every tool result answering its calls, so a call
 *   is never separated from its result;
 * - one omission note stands where messages were removed, and earlier notes
 *   are folded into it.
 *
 * The target is a goal, not a guarantee: protected messages and the newest
 * `minKeepSteps` steps stay whatever their size, and the note is not counted.
 *
 * @example
 * ```ts
 * const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });
 * const compacted = (await compactor.compact(messages, 8_000)) ?? messages;
 * ```
 */
export class SlidingWindowCompactor {
  readonly minKeepSteps: number;
  readonly omissionNote: string | null;
  /** Where this compactor remembers token counts (`null`: nowhere). */
  readonly cache: TokenCountCache | null;

  constructor(options: SlidingWindowCompactorOptions = {}) {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new TypeError(`SlidingWindowCompactor options must be an object, got ${describeValue(options)}`);
    }
    const { minKeepSteps = 1, omissionNote = DEFAULT_OMISSION_NOTE, cache = sharedTokenCountCache } = options;
    assertWholeNumber("minKeepSteps", minKeepSteps);
    if (omissionNote !== null && typeof omissionNote !== "string") {
      throw new TypeError(`\`omissionNote\` must be a string or null, got ${describeValue(omissionNote)}`);
    }
    if (cache !== null && !(cache instanceof TokenCountCache)) {
      throw new TypeError(`\`cache\` must be a TokenCountCache or null, got ${describeValue(cache)}`);
    }
    this.minKeepSteps = minKeepSteps;
    this.omissionNote = omissionNote === "" ? null : omissionNote;
    this.cache = cache;
  }

  /**
   * Compacts `messages` toward `targetTokens`.
   *
   * @returns the compacted conversation (kept messages are the same objects,
   * in their original order, plus at most one note), or `null` when the
   * conversation fits or nothing can usefully be removed. Neither the array
   * nor its messages are modified.
   */
  async compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null> {
    return (await this.run(messages, targetTokens, tokenCounter, false, options)).messages;
  }

  /**
   * Like {@link compact}, but returns what was done: removed messages, kept
   * count, the note, and tokens before and after. It counts every message (to
   * report `tokensBefore`), where {@link compact} counts only what the rules
   * read.
   */
  async compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport> {
    return this.run(messages, targetTokens, tokenCounter, true, options);
  }

  private async run(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounterLike: TokenCounterLike | undefined,
    fullReport: boolean,
    options: CompactOptions | undefined,
  ): Promise<CompactionReport> {
    assertConversation(messages);
    assertTokenBudget("targetTokens", targetTokens);
    assertCompactOptions(options);
    // An asynchronous counter is awaited in `countAll`: raced against the signal, so one that never settles cannot hang us.
    const signal = options?.signal;
    throwIfAborted(signal);
    const counter = resolveTokenCounter(tokenCounterLike);
    const counts = new MessageCounts(messages, counter, this.cache);
    const layout = layoutConversation(messages);

    let selection: WindowSelection;
    try {
      selection = this.select(layout, counts, targetTokens);
    } catch (error) {
      if (!(error instanceof AsyncCountNeeded)) throw error;
      await raceAbort(counts.countAll(), signal);
      selection = this.select(layout, counts, targetTokens);
    }
    if (fullReport) await raceAbort(counts.countAll(), signal);
    const tokensOf = (indices: Iterable<number>): number => {
      if (!fullReport) return Number.NaN;
      let total = 0;
      for (const index of indices) total += counts.of(index);
      return total;
    };
    const allIndices = () => messages.keys();
    const unchanged = (): CompactionReport => {
      const tokens = tokensOf(allIndices());
      return withStage({ messages: null, removed: [], rewritten: [], added: [], keptCount: messages.length, note: null, stepsTrimmed: false, tokensBefore: tokens, tokensAfter: tokens });
    };
    if (selection.fits) return unchanged();

    const keep = keptMask(messages.length, layout, [...selection.turns, ...selection.steps]);
    const kept: BaseMessage[] = [];
    const removed: BaseMessage[] = [];
    let removedSoFar = 0;
    let onlyNotesRemoved = true;
    messages.forEach((message, index) => {
      if (keep[index]) {
        kept.push(message);
        return;
      }
      removed.push(message);
      const folded = compactionNoteMetadata(message);
      if (folded === undefined) {
        onlyNotesRemoved = false;
        removedSoFar += 1;
      } else {
        removedSoFar += folded.removed_messages;
      }
    });
    // Swapping one note for another frees nothing.
    if (removed.length === 0 || onlyNotesRemoved) return unchanged();

    const note = this.omissionNote === null ? null : createCompactionNote(this.omissionNote, removedSoFar, kept.length);
    const result = note === null ? kept : insertNote(kept, note, layout, keep, selection.stepsTrimmed);
    const tokensBefore = tokensOf(allIndices());
    const tokensKept = tokensOf(keptIndices(keep));
    const tokensAfter = fullReport && note !== null ? tokensKept + (await raceAbort(countTotal([note], counter, this.cache), signal)) : tokensKept;
    return withStage({
      messages: result,
      removed,
      rewritten: [],
      added: note === null ? [] : [note],
      keptCount: kept.length,
      note,
      stepsTrimmed: selection.stepsTrimmed,
      tokensBefore,
      tokensAfter,
    });
  }

  private select(layout: ConversationLayout, counts: MessageCounts, targetTokens: number): WindowSelection {
    const groupTokens = new Map<MessageGroup, number>();
    return selectWindow(
      layout,
      {
        protectedTokens: () => {
          let total = 0;
          for (let index = 0; index < layout.systemEnd; index += 1) total += counts.of(index);
          return layout.anchor >= 0 ? total + counts.of(layout.anchor) : total;
        },
        groupTokens: (group) => {
          let tokens = groupTokens.get(group);
          if (tokens === undefined) {
            tokens = counts.sum(group.members);
            groupTokens.set(group, tokens);
          }
          return tokens;
        },
        ungroupedTokens: () => counts.sum(layout.notes) + counts.sum(layout.loose),
      },
      targetTokens,
      this.minKeepSteps,
    );
  }
}

/** A sliding-window report, which is its own one stage. */
function withStage(report: Omit<CompactionReport, "strategy" | "stages">): CompactionReport {
  const { messages, removed, rewritten, added, tokensBefore, tokensAfter } = report;
  return {
    strategy: SLIDING_WINDOW_STRATEGY,
    ...report,
    stages: [{ strategy: SLIDING_WINDOW_STRATEGY, messages, removed, rewritten, added, tokensBefore, tokensAfter }],
  };
}

function* keptIndices(keep: Uint8Array): Generator<number> {
  for (let index = 0; index < keep.length; index += 1) if (keep[index]) yield index;
}

/**
 * Puts the note where the removed messages stood: right after the
 * instructions when only history went, right after the task message when the
 * task's own steps were trimmed.
 */
function insertNote(
  kept: BaseMessage[],
  note: HumanMessage,
  layout: ConversationLayout,
  keep: Uint8Array,
  stepsTrimmed: boolean,
): BaseMessage[] {
  let position = layout.systemEnd;
  if (stepsTrimmed && layout.anchor >= 0) {
    // Kept messages before the anchor are the system block plus anything a kept step drew in.
    position = 0;
    for (let index = 0; index <= layout.anchor; index += 1) if (keep[index]) position += 1;
  }
  return [...kept.slice(0, position), note, ...kept.slice(position)];
}


/** Throws a `TypeError` naming the first element that is not a `BaseMessage`. */
export function assertConversation(messages: unknown, name = "messages"): asserts messages is BaseMessage[] {
  if (!Array.isArray(messages)) {
    throw new TypeError(`\`${name}\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  }
  for (let index = 0; index < messages.length; index += 1) {
    if (!isMessage(messages[index])) {
      throw new TypeError(`\`${name}[${index}]\` must be a BaseMessage, got ${describeValue(messages[index])}`);
    }
  }
}
