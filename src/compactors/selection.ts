import type { ConversationLayout, MessageGroup } from "../messages/layout";

/** What the sliding window keeps. */
export type WindowSelection =
  | { fits: true }
  | {
      fits: false;
      /** Kept steps of the current task, oldest first. */
      steps: MessageGroup[];
      /** Kept history turns, oldest first. */
      turns: MessageGroup[];
      /** Whether any of the task's own steps had to go (decides where the note stands). */
      stepsTrimmed: boolean;
    };

/** Sizes the selection asks for, counted lazily by the caller. */
export interface SelectionSizes {
  protectedTokens(): number;
  groupTokens(group: MessageGroup): number;
  /** Tokens of the loose messages and earlier notes; asked for only when everything else fits. */
  ungroupedTokens(): number;
}

/**
 * The sliding-window rules, read top to bottom:
 *
 * 1. The budget for everything but the instructions and the task is
 *    `target − protected`.
 * 2. If the task's steps do not all fit in it, every history turn goes, and
 *    steps are kept newest to oldest while they fit (stopping at the first that
 *    does not), never fewer than the newest `minKeepSteps`.
 * 3. Otherwise every step stays, and history turns are kept newest to oldest
 *    while they fit in what is left, stopping at the first that does not.
 *
 * Sizes are asked for newest first and only as far as a rule reads, so old
 * history that cannot be kept is never counted. A list that fits as a whole is
 * reported as `fits` (it can only fit when every turn did).
 */
export function selectWindow(
  layout: ConversationLayout,
  sizes: SelectionSizes,
  targetTokens: number,
  minKeepSteps: number,
): WindowSelection {
  const { steps, turns } = layout;
  const available = targetTokens - sizes.protectedTokens();

  let stepTokens = 0;
  let stepsFit = true;
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    stepTokens += sizes.groupTokens(steps[i]!);
    if (stepTokens > available) {
      stepsFit = false;
      break;
    }
  }

  if (!stepsFit) {
    const kept = Math.max(newestThatFit(steps, sizes, available), Math.min(minKeepSteps, steps.length));
    return { fits: false, steps: steps.slice(steps.length - kept), turns: [], stepsTrimmed: kept < steps.length };
  }

  const remaining = available - stepTokens;
  const keptTurns = newestThatFit(turns, sizes, remaining);
  if (keptTurns === turns.length) {
    const left = remaining - turns.reduce((sum, turn) => sum + sizes.groupTokens(turn), 0);
    if (sizes.ungroupedTokens() <= left) return { fits: true };
  }
  return { fits: false, steps, turns: turns.slice(turns.length - keptTurns), stepsTrimmed: false };
}

/** How many of the newest groups fit in `budget`, taken newest first and stopping at the first that does not. */
function newestThatFit(groups: readonly MessageGroup[], sizes: SelectionSizes, budget: number): number {
  let used = 0;
  let kept = 0;
  for (let i = groups.length - 1; i >= 0; i -= 1) {
    const tokens = sizes.groupTokens(groups[i]!);
    if (used + tokens > budget) break;
    used += tokens;
    kept += 1;
  }
  return kept;
}
