import type { ConversationLayout, MessageGroup } from "../messages/grouping";

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
  /** Tokens of everything always kept: instructions, task, and every protected group and message. */
  protectedTokens(): number;
  /** Whether a group holds a protected message: it is kept whatever its size, and its tokens are in `protectedTokens`. */
  isProtected?(group: MessageGroup): boolean;
  groupTokens(group: MessageGroup): number;
  /** Tokens of the loose messages and earlier notes that are not protected; asked for only when everything else fits. */
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
  const isProtected = sizes.isProtected ?? noneOf;
  const available = targetTokens - sizes.protectedTokens();

  let stepTokens = 0;
  let stepsFit = true;
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    if (isProtected(steps[i]!)) continue;
    stepTokens += sizes.groupTokens(steps[i]!);
    if (stepTokens > available) {
      stepsFit = false;
      break;
    }
  }

  if (!stepsFit) {
    const kept = newestThatFit(steps, sizes, available, isProtected);
    // The newest `minKeepSteps` stay whatever their size.
    for (let i = Math.max(0, steps.length - minKeepSteps); i < steps.length; i += 1) kept.add(steps[i]!);
    return {
      fits: false,
      steps: steps.filter((step) => kept.has(step)),
      turns: isProtected === noneOf ? [] : turns.filter(isProtected),
      stepsTrimmed: kept.size < steps.length,
    };
  }

  const remaining = available - stepTokens;
  const keptTurns = newestThatFit(turns, sizes, remaining, isProtected);
  if (keptTurns.size === turns.length) {
    let left = remaining;
    for (const turn of turns) if (!isProtected(turn)) left -= sizes.groupTokens(turn);
    if (sizes.ungroupedTokens() <= left) return { fits: true };
  }
  // Without protected groups the kept turns are the newest ones: a slice, not a walk over a long history's turns.
  const kept = isProtected === noneOf ? turns.slice(turns.length - keptTurns.size) : turns.filter((turn) => keptTurns.has(turn));
  return { fits: false, steps, turns: kept, stepsTrimmed: false };
}

/** No group is protected: then the walks newest first stop at the first group that does not fit. */
function noneOf(): boolean {
  return false;
}

/**
 * The newest groups that fit in `budget`, taken newest first and stopping at
 * the first that does not, plus every protected group (already paid for, so
 * neither counted here nor a reason to stop).
 */
function newestThatFit(
  groups: readonly MessageGroup[],
  sizes: SelectionSizes,
  budget: number,
  isProtected: (group: MessageGroup) => boolean,
): Set<MessageGroup> {
  const kept = new Set<MessageGroup>();
  let used = 0;
  let stopped = false;
  for (let i = groups.length - 1; i >= 0; i -= 1) {
    const group = groups[i]!;
    if (isProtected(group)) {
      kept.add(group);
      continue;
    }
    if (stopped) continue;
    const tokens = sizes.groupTokens(group);
    if (used + tokens > budget) {
      // Older groups are visited on only for protected ones, which are kept whatever their size.
      if (isProtected === noneOf) break;
      stopped = true;
      continue;
    }
    used += tokens;
    kept.add(group);
  }
  return kept;
}
