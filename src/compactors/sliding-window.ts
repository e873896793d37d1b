import type { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { assertCacheOption, sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { AsyncCountNeeded, countTotal, MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertWholeNumber, describeValue } from "../errors";
import type { ConversationLayout, MessageGroup } from "../messages/grouping";
import { layoutCheckedConversationInSlices } from "../messages/layout";
import { latestNativeCompaction } from "../messages/native-compaction";
import { createOmissionNote, DEFAULT_OMISSION_NOTE, omissionNoteMetadata } from "../messages/omission-note";
import { assertCompactOptions, raceAbort, signalOf, throwIfAborted } from "./abort";
import type { CompactOptions, Compactor, InPlaceRewrites } from "./compactor";
import { assertProtect, hasProtection, protectedMessagesInSlices } from "./protection";
import type { ProtectPredicate } from "./protection";
import type { CompactionReport } from "./report";
import { listAfterRewrites } from "./rewrites-then-window";
import { selectWindow } from "./selection";
import type { WindowSelection } from "./selection";

/** The `strategy` of the sliding window's reports and notes. */
const SLIDING_WINDOW_STRATEGY = "sliding_window";

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
  /**
   * Messages never to remove: each protected message is kept with the whole
   * unit it belongs to (its turn or step), so a protected call keeps its
   * results and a protected result keeps its call. Its tokens count against
   * the target like the instructions'. Default: none.
   */
  protect?: ProtectPredicate;
}

/**
 * The indices a selection keeps, ascending: the protected messages and the
 * kept groups' members. Built from the kept groups alone, so a compaction that
 * keeps a few dozen messages of a long history reads a few dozen indices.
 */
function keptIndicesOf(layout: ConversationLayout, groups: readonly MessageGroup[], protectedAt: Uint8Array | null): number[] {
  const kept: number[] = [];
  for (let index = 0; index < layout.systemEnd; index += 1) kept.push(index);
  if (layout.task >= 0) kept.push(layout.task);
  for (const group of groups) for (const index of group.members) kept.push(index);
  // Protected notes and loose messages stay where they are.
  if (protectedAt !== null) for (const index of [...layout.notes, ...layout.loose]) if (protectedAt[index]) kept.push(index);
  return kept.sort((a, b) => a - b);
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
 * The target is a goal, not a guarantee: protected messages (and everything
 * up to a provider's native compaction marker: `messages/native-compaction.ts`)
 * and the newest `minKeepSteps` steps stay whatever their size, and the note
 * is not counted.
 *
 * @example
 * ```ts
 * const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });
 * const compacted = (await compactor.compact(messages, 8_000)) ?? messages;
 * ```
 */
export class SlidingWindowCompactor implements Compactor {
  /** Messages never removed (see {@link SlidingWindowCompactorOptions.protect}). */
  readonly protect: ProtectPredicate | undefined;
  /** The newest steps always kept (see {@link SlidingWindowCompactorOptions.minKeepSteps}; default `1`). */
  readonly minKeepSteps: number;
  /** The note's text, `{num_removed}` still unfilled; `null` when history is removed silently (see {@link SlidingWindowCompactorOptions.omissionNote}). */
  readonly omissionNote: string | null;
  /** Where this compactor remembers token counts (`null`: nowhere). */
  readonly cache: TokenCountCache | null;

  constructor(options: SlidingWindowCompactorOptions = {}) {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new TypeError(`SlidingWindowCompactor options must be an object, got ${describeValue(options)}`);
    }
    const { minKeepSteps = 1, omissionNote = DEFAULT_OMISSION_NOTE, cache = sharedTokenCountCache, protect } = options;
    assertProtect(protect);
    assertWholeNumber("minKeepSteps", minKeepSteps);
    if (omissionNote !== null && typeof omissionNote !== "string") {
      throw new TypeError(`\`omissionNote\` must be a string or null, got ${describeValue(omissionNote)}`);
    }
    assertCacheOption(cache);
    this.minKeepSteps = minKeepSteps;
    this.omissionNote = omissionNote === "" ? null : omissionNote;
    this.cache = cache;
    this.protect = protect;
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

  /**
   * The window's compaction of the list `rewrites` leave (see
   * `Compactor.compactAfterRewrites` and `rewrites-then-window.ts`), asking
   * them only about the messages the window reads; `undefined` when that
   * cannot tell the result (then a pipeline runs the stages one after the
   * other) and with `protect` or a native compaction marker (protection is
   * decided over the whole list).
   */
  async compactAfterRewrites(
    rewrites: InPlaceRewrites,
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter: TokenCounterLike | undefined,
    options: CompactOptions | undefined,
    withReport: boolean,
  ): Promise<CompactionReport | undefined> {
    if (hasProtection(messages, this.protect)) return undefined;
    assertTokenBudget("targetTokens", targetTokens);
    const decided = await listAfterRewrites(rewrites, messages, targetTokens, this.minKeepSteps, signalOf(options));
    if (decided === undefined) return undefined;
    const report = await this.run(decided.messages, targetTokens, tokenCounter, withReport, options, decided.layout);
    return report.messages === null ? undefined : report;
  }

  private async run(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounterLike: TokenCounterLike | undefined,
    fullReport: boolean,
    options: CompactOptions | undefined,
    laidOut?: ConversationLayout,
  ): Promise<CompactionReport> {
    // A long list is laid out in time slices, which the signal stops (the options are checked after the list, as before).
    const signal = signalOf(options);
    // Checks the list and lays it out in one pass over what is new since the last list seen (see `layoutCheckedConversation`).
    const layout = laidOut ?? (await layoutCheckedConversationInSlices(messages, signal));
    assertTokenBudget("targetTokens", targetTokens);
    assertCompactOptions(options);
    // An asynchronous counter is awaited in `settle`: raced against the signal, so one that never settles cannot hang us.
    throwIfAborted(signal);
    const counter = resolveTokenCounter(tokenCounterLike);
    const counts = new MessageCounts(messages, counter, this.cache, signal);
    const protectedAt = await protectedMessagesInSlices(messages, this.protect, signal);
    const protectedGroups =
      protectedAt === null ? null : new Set([...layout.turns, ...layout.steps].filter((group) => group.members.some((index) => protectedAt[index])));

    // A pass stopped to wait (an asynchronous counter, a time slice used up) runs again with the counts made so far.
    const groupTokens = new Map<MessageGroup, number>();
    let selection: WindowSelection | undefined;
    while (selection === undefined) {
      try {
        selection = this.select(layout, counts, targetTokens, protectedAt, protectedGroups, groupTokens);
      } catch (error) {
        if (!(error instanceof AsyncCountNeeded)) throw error;
        await raceAbort(counts.settle(), signal);
      }
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
      return withStage({ messages: null, removed: [], rewritten: [], added: [], standsFor: [], keptCount: messages.length, note: null, stepsTrimmed: false, tokensBefore: tokens, tokensAfter: tokens });
    };
    if (selection.fits) return unchanged();

    const keptAt = keptIndicesOf(layout, [...selection.turns, ...selection.steps], protectedAt);
    const kept = keptAt.map((index) => messages[index]!);
    // Earlier notes are in no group, so every one of them goes (unless protected); what else goes is every message not kept.
    const removedNotes = protectedAt === null ? layout.notes : layout.notes.filter((index) => !protectedAt[index]);
    const removedCount = messages.length - kept.length;
    let removedSoFar = removedCount - removedNotes.length;
    // A note repeated by a store's race (two writers re-adding one list) stands for the same messages: fold it once,
    // or each round would add every copy and the count would double.
    const foldedNotes = new Set<string>();
    for (const index of removedNotes) {
      const message = messages[index]!;
      const folded = omissionNoteMetadata(message);
      if (folded === undefined) continue;
      const identity = message.id ?? JSON.stringify([message.content, folded.removed_messages, folded.kept_messages]);
      if (!foldedNotes.has(identity)) removedSoFar += folded.removed_messages;
      foldedNotes.add(identity);
    }
    // Swapping one note for another frees nothing.
    if (removedCount === 0 || removedCount === removedNotes.length) return unchanged();
    // Listed only for a report: `compact` returns the kept messages, and a long history's removed part is long.
    const removed = fullReport ? removedMessages(messages, keptAt) : [];

    const note = this.omissionNote === null ? null : createOmissionNote(this.omissionNote, removedSoFar, kept.length);
    const result = note === null ? kept : insertNote(kept, note, layout, keptAt, selection.stepsTrimmed, nativeBoundaryEnd(messages, layout));
    const tokensBefore = tokensOf(allIndices());
    const tokensKept = tokensOf(keptAt);
    const tokensAfter = fullReport && note !== null ? tokensKept + (await raceAbort(countTotal([note], counter, this.cache, signal), signal)) : tokensKept;
    throwIfAborted(signal);
    return withStage({
      messages: result,
      removed,
      rewritten: [],
      added: note === null ? [] : [note],
      // The note stands for everything removed, earlier notes included (it folds their counts in).
      standsFor: note === null || !fullReport ? [] : [{ added: note, originals: removed }],
      keptCount: kept.length,
      note,
      stepsTrimmed: selection.stepsTrimmed,
      tokensBefore,
      tokensAfter,
    });
  }

  private select(
    layout: ConversationLayout,
    counts: MessageCounts,
    targetTokens: number,
    protectedAt: Uint8Array | null,
    protectedGroups: ReadonlySet<MessageGroup> | null,
    /** Sizes of the groups summed so far, kept from one run of the pass to the next. */
    groupTokens: Map<MessageGroup, number>,
  ): WindowSelection {
    const ungrouped = protectedAt === null ? null : [...layout.notes, ...layout.loose];
    return selectWindow(
      layout,
      {
        protectedTokens: () => {
          let total = 0;
          for (let index = 0; index < layout.systemEnd; index += 1) total += counts.of(index);
          if (layout.task >= 0) total += counts.of(layout.task);
          if (protectedGroups !== null) for (const group of protectedGroups) total += counts.sum(group.members);
          if (protectedAt !== null) for (const index of ungrouped!) if (protectedAt[index]) total += counts.of(index);
          return total;
        },
        ...(protectedGroups === null ? {} : { isProtected: (group: MessageGroup) => protectedGroups.has(group) }),
        groupTokens: (group) => {
          let tokens = groupTokens.get(group);
          if (tokens === undefined) {
            tokens = counts.sum(group.members);
            groupTokens.set(group, tokens);
          }
          return tokens;
        },
        ungroupedTokens: () =>
          protectedAt === null
            ? counts.sum(layout.notes) + counts.sum(layout.loose)
            : ungrouped!.reduce((total, index) => (protectedAt[index] ? total : total + counts.of(index)), 0),
      },
      targetTokens,
      this.minKeepSteps,
    );
  }
}

/** A sliding-window report, which is its own one stage. */
function withStage(report: Omit<CompactionReport, "strategy" | "stages">): CompactionReport {
  const { messages, removed, rewritten, added, standsFor, tokensBefore, tokensAfter } = report;
  return {
    strategy: SLIDING_WINDOW_STRATEGY,
    ...report,
    stages: [{ strategy: SLIDING_WINDOW_STRATEGY, messages, removed, rewritten, added, standsFor, tokensBefore, tokensAfter }],
  };
}

/** The messages not at `keptAt` (ascending), in order. */
function removedMessages(messages: readonly BaseMessage[], keptAt: readonly number[]): BaseMessage[] {
  const removed: BaseMessage[] = [];
  let next = 0;
  for (let index = 0; index < messages.length; index += 1) {
    if (keptAt[next] === index) next += 1;
    else removed.push(messages[index]!);
  }
  return removed;
}

/**
 * The last index of the unit holding the latest native compaction marker
 * (the marker's turn or step, which keeps its exchanges whole), or -1 when
 * there is no marker. Everything up to it is protected, so it is all kept.
 */
function nativeBoundaryEnd(messages: readonly BaseMessage[], layout: ConversationLayout): number {
  const boundary = latestNativeCompaction(messages);
  if (boundary < 0) return -1;
  for (const group of [...layout.turns, ...layout.steps]) {
    if (group.members.includes(boundary)) return Math.max(boundary, group.members[group.members.length - 1]!);
  }
  return boundary;
}

/**
 * Puts the note where the removed messages stood: right after the
 * instructions when only history went, right after the task message when the
 * task's own steps were trimmed; never before the unit of a native
 * compaction marker (`boundaryEnd`, -1 for none), which the provider reads
 * from: what stands before it is left as it was, and the provider reads the note.
 */
function insertNote(
  kept: BaseMessage[],
  note: HumanMessage,
  layout: ConversationLayout,
  keptAt: readonly number[],
  stepsTrimmed: boolean,
  boundaryEnd: number,
): BaseMessage[] {
  let position = layout.systemEnd;
  if (stepsTrimmed && layout.task >= 0) {
    // Kept messages before the task are the system block plus anything a kept step drew in.
    position = keptAt.indexOf(layout.task) + 1;
  }
  if (boundaryEnd >= 0) {
    let afterBoundary = 0;
    while (afterBoundary < keptAt.length && keptAt[afterBoundary]! <= boundaryEnd) afterBoundary += 1;
    position = Math.max(position, afterBoundary);
  }
  return [...kept.slice(0, position), note, ...kept.slice(position)];
}
