import type { BaseMessage } from "@langchain/core/messages";
import type { ConversationLayout } from "../messages/grouping";
import { layoutCheckedConversationInSlices } from "../messages/layout";
import { throwIfAborted } from "./abort";
import type { InPlaceRewrites } from "./compactor";

/**
 * A stage of in-place rewrites (pruning) followed by the sliding window,
 * without deciding the rewrites the window drops anyway: the same list as
 * running the two stages in turn, at about the window's own cost on a long
 * history. The window offers it as `compactAfterRewrites`; a pipeline uses it
 * when its first stage offers `rewritesInPlace`.
 *
 * Why it is the same: the groups are walked newest first, as the window reads
 * them, each message at the size the rewrites leave it (a candidate is
 * decided as its stage decides it). Once the groups walked exceed the target,
 * (1) the rewriting stage cannot reach the target (what it leaves of those
 * groups alone exceeds it), so it rewrites every eligible candidate, in
 * whatever order; and (2) the window stops within the groups walked, so it
 * reads no other group and keeps none but those and its newest
 * `minKeepSteps` steps. Deciding the candidates of those groups alone gives
 * the window the same sizes to read and the same messages to keep.
 *
 * `undefined` when that does not hold or cannot be known cheaply (the
 * rewrites cannot be told one at a time, the list fits after them): the
 * caller then runs the stages one after the other.
 */
export async function listAfterRewrites(
  rewrites: InPlaceRewrites,
  messages: BaseMessage[],
  targetTokens: number,
  minKeepSteps: number,
  signal: AbortSignal | undefined,
): Promise<{ messages: BaseMessage[]; layout: ConversationLayout } | undefined> {
  const layout = await layoutCheckedConversationInSlices(messages, signal);
  let tokens = 0;
  let filled = false;
  const newestFirst = [...layout.steps].reverse().concat([...layout.turns].reverse());
  for (const group of newestFirst) {
    for (const index of group.members) {
      const size = await rewrites.sizeOf(index);
      if (size === undefined) return undefined;
      tokens += size;
    }
    if (tokens > targetTokens) {
      filled = true;
      break;
    }
  }
  if (!filled) return undefined;
  // The newest steps the window keeps whatever their size: their messages as the rewrites leave them.
  for (let i = Math.max(0, layout.steps.length - minKeepSteps); i < layout.steps.length; i += 1) {
    for (const index of layout.steps[i]!.members) if ((await rewrites.sizeOf(index)) === undefined) return undefined;
  }
  throwIfAborted(signal);
  // The rewritten list divides into the same groups (a stand-in keeps its message's id and call ids).
  return { messages: rewrites.decided().messages, layout };
}
