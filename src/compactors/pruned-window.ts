import type { BaseMessage } from "@langchain/core/messages";
import { AsyncCountNeeded, MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { layoutCheckedConversationInSlices } from "../messages/layout";
import type { ConversationLayout } from "../messages/grouping";
import { throwIfAborted } from "./abort";
import type { CompactOptions } from "./compactor";
import type { CompactionReport, RewrittenMessage } from "./report";
import type { SlidingWindowCompactor } from "./sliding-window";
import { stageReport } from "./stage-report";
import type { ToolResultPruningCompactor } from "./tool-result-pruning";

/**
 * The pipeline `[pruning, sliding window]` without deciding the results the
 * window drops anyway: the same list as running the two stages in turn, at
 * about the window's own cost on a long history.
 *
 * Why it is the same: the groups are walked newest first, as the window reads
 * them, each message at the size pruning leaves it (a candidate result is
 * decided as pruning decides it: counted, and replaced when eligible). Once
 * the groups walked exceed the target, (1) pruning cannot reach the target
 * (what it leaves of those groups alone exceeds it), so it prunes every
 * eligible candidate, in whatever order; and (2) the window stops within the
 * groups walked, so it reads no other group and keeps none but those and its
 * newest `minKeepSteps` steps. Deciding the candidates of those groups alone
 * gives the window the same sizes to read and the same messages to keep.
 *
 * Each function returns `undefined` when that does not hold or cannot be
 * known cheaply (protected messages, an asynchronous counter, a history that
 * does not exceed the target after pruning, a window that changes nothing):
 * the caller then runs the stages one after the other.
 */

/** The input with the results the window can keep decided by pruning, and what pruning did to them. */
interface PrunedForWindow {
  /** The input, with the decided results that pruning replaces replaced (the other candidates as they were). */
  pruned: BaseMessage[];
  /** The input's layout, which is also the layout of `pruned` (a replacement keeps its call id). */
  layout: ConversationLayout;
  /** The results replaced, in their order in the input. */
  rewritten: RewrittenMessage[];
  /** Tokens the replacements free, in all. */
  saved: number;
}

/** `compact` of the pipeline `[pruning, window]`, or `undefined` (see above). */
export async function pruneThenSlide(
  pruning: ToolResultPruningCompactor,
  window: SlidingWindowCompactor,
  messages: BaseMessage[],
  targetTokens: number,
  tokenCounter: TokenCounterLike | undefined,
  options: CompactOptions | undefined,
): Promise<BaseMessage[] | undefined> {
  const decided = await pruneForWindow(pruning, window, messages, targetTokens, tokenCounter, options);
  if (decided === undefined) return undefined;
  // The rewritten list divides into the same groups (a replacement keeps its call id): the window is given them.
  const result = await window.compactLaidOut(decided.pruned, decided.layout, targetTokens, tokenCounter, options);
  return result ?? undefined;
}

/**
 * The two stage reports of the pipeline `[pruning, window]`, or `undefined`
 * (see above). The window's is its full report on the pruning entry's list.
 * The pruning entry lists only the results decided (those the window reads):
 * its `messages` hold the other candidates as they were, and `tokensAfter` is
 * that list's size. Either way the window removes every result not decided,
 * so the pipeline's own report (relative to its input) is the one of running
 * the stages in turn.
 */
export async function pruneThenSlideReports(
  pruning: ToolResultPruningCompactor,
  window: SlidingWindowCompactor,
  messages: BaseMessage[],
  tokensBefore: number,
  targetTokens: number,
  tokenCounter: TokenCounterLike | undefined,
  options: CompactOptions | undefined,
): Promise<[CompactionReport, CompactionReport] | undefined> {
  const decided = await pruneForWindow(pruning, window, messages, targetTokens, tokenCounter, options);
  if (decided === undefined) return undefined;
  const { pruned, layout, rewritten, saved } = decided;
  const windowReport = await window.compactLaidOutWithReport(pruned, layout, targetTokens, tokenCounter, options);
  if (windowReport.messages === null) return undefined;
  const pruningReport = stageReport({
    strategy: "tool_result_pruning",
    input: messages,
    messages: rewritten.length === 0 ? null : pruned,
    removed: [],
    rewritten,
    added: [],
    tokensBefore,
    tokensAfter: tokensBefore - saved,
  });
  return [pruningReport, windowReport];
}

async function pruneForWindow(
  pruning: ToolResultPruningCompactor,
  window: SlidingWindowCompactor,
  messages: BaseMessage[],
  targetTokens: number,
  tokenCounter: TokenCounterLike | undefined,
  options: CompactOptions | undefined,
): Promise<PrunedForWindow | undefined> {
  if (pruning.protect !== undefined || window.protect !== undefined) return undefined;
  const counter = resolveTokenCounter(tokenCounter);
  const candidates = pruning.candidatesOf(messages);
  if (candidates.length === 0) return undefined;
  const isCandidate = new Uint8Array(messages.length);
  for (const index of candidates) isCandidate[index] = 1;

  const signal = options?.signal;
  const layout = await layoutCheckedConversationInSlices(messages, signal);
  const counts = new MessageCounts(messages, counter, pruning.cache, signal);
  const prune = pruning.pruner(messages, counts, counter);
  const pruned = messages.slice();
  // Each candidate's size once pruning is done with it (NaN: not decided yet).
  const after = new Float64Array(messages.length).fill(Number.NaN);
  let saved = 0;
  /** The count of message `index`, waiting for the next time slice (or a long text counted in slices) when asked to; an asynchronous counter gives up. */
  const countOf = async (index: number): Promise<number> => {
    for (;;) {
      try {
        return counts.of(index);
      } catch (error) {
        if (!(error instanceof AsyncCountNeeded) || error.everything) throw error;
        await counts.settle();
      }
    }
  };
  const sizeAfterPruning = async (index: number): Promise<number> => {
    if (isCandidate[index] === 0) return countOf(index);
    if (Number.isNaN(after[index]!)) {
      throwIfAborted(signal);
      // Counted first, so that pruning's own count of it is a lookup.
      await countOf(index);
      const pending = prune(index);
      const decision = pending === null || "replacement" in pending ? pending : await pending;
      if (decision !== null) {
        pruned[index] = decision.replacement;
        saved += decision.saved;
      }
      after[index] = counts.of(index) - (decision === null ? 0 : decision.saved);
    }
    return after[index]!;
  };
  let tokens = 0;
  let filled = false;
  try {
    const newestFirst = [...layout.steps].reverse().concat([...layout.turns].reverse());
    for (const group of newestFirst) {
      for (const index of group.members) tokens += await sizeAfterPruning(index);
      if (tokens > targetTokens) {
        filled = true;
        break;
      }
    }
    if (!filled) return undefined;
    // The newest steps the window keeps whatever their size: their results as pruning leaves them.
    for (let i = Math.max(0, layout.steps.length - window.minKeepSteps); i < layout.steps.length; i += 1) {
      for (const index of layout.steps[i]!.members) await sizeAfterPruning(index);
    }
  } catch (error) {
    if (error instanceof AsyncCountNeeded) return undefined;
    throw error;
  }
  throwIfAborted(signal);
  const rewritten: RewrittenMessage[] = [];
  for (const index of candidates) if (pruned[index] !== messages[index]) rewritten.push({ original: messages[index]!, replacement: pruned[index]! });
  return { pruned, layout, rewritten, saved };
}
