import type { BaseMessage } from "@langchain/core/messages";
import { describeValue } from "../errors";
import { compactionStrategyOf, isCompactionMessage } from "../messages/compaction-metadata";
import type { CompactionReport } from "./report";

/**
 * What a compaction takes out of a conversation, message by message, for
 * the integrations that write the compacted list back (a chat-history store,
 * a graph's state in `"commit"` mode) and hand what leaves to `onEvict`.
 */

/** How a message left: see {@link EvictedMessage.fate}. */
export type EvictionFate = "removed" | "summarized" | "pruned" | "offloaded" | "replaced";

/** One message that leaves a store or a state in a commit. */
export interface EvictedMessage {
  /** The message as the store or state held it. */
  message: BaseMessage;
  /**
   * What became of it: `"removed"` (cut by the sliding window; the omission
   * note, if any, stands for it), `"summarized"` (a summary stands for it),
   * `"pruned"` (a placeholder with its id took its place), `"offloaded"` (a
   * reference to the offload store with its id took its place), or
   * `"replaced"` (a compactor of your own put something else in its place).
   */
  fate: EvictionFate;
  /** What stands for it in the list written: its stand-in, the summary or the omission note; `null` when nothing does. */
  replacedBy: BaseMessage | null;
  /**
   * Whether the message was itself written by an earlier compaction (an
   * omission note, a summary, a pruned or offloaded stand-in) rather than by
   * the conversation. Its originals were handed over when it was written.
   */
  fromCompaction: boolean;
}

/** Receives, and is awaited for, the messages a commit is about to take out, before the store or state changes. */
export type EvictionCallback = (evicted: EvictedMessage[]) => void | Promise<void>;

/**
 * Throws a `TypeError` unless `onEvict` is a function or `undefined`, and
 * unless it comes with `"commit"` mode: in `"view"` mode nothing is ever
 * taken out, so a callback there would silently never run.
 */
export function assertEvictionCallback(onEvict: unknown, mode: string): asserts onEvict is EvictionCallback | undefined {
  if (onEvict === undefined) return;
  if (typeof onEvict !== "function") throw new TypeError(`\`onEvict\` must be a function, got ${describeValue(onEvict)}`);
  if (mode !== "commit") {
    throw new TypeError('`onEvict` goes with mode "commit": in "view" mode nothing is taken out of the store or state, so it would never be called');
  }
}

const FATE_OF_STRATEGY: Readonly<Record<string, EvictionFate>> = {
  sliding_window: "removed",
  summarization: "summarized",
  tool_result_pruning: "pruned",
  tool_result_offloading: "offloaded",
};

function fateOf(replacedBy: BaseMessage | null): EvictionFate {
  if (replacedBy === null) return "removed";
  const strategy = compactionStrategyOf(replacedBy);
  return strategy === undefined ? "replaced" : (FATE_OF_STRATEGY[strategy] ?? "replaced");
}

/** Takes the next entry of `key`'s queue (a message standing twice in a list is accounted for by occurrence). */
function takeFrom<T>(queues: Map<BaseMessage, T[]>, key: BaseMessage): T | undefined {
  return queues.get(key)?.shift();
}

function enqueue<T>(queues: Map<BaseMessage, T[]>, key: BaseMessage, value: T): void {
  const queue = queues.get(key);
  if (queue === undefined) queues.set(key, [value]);
  else queue.push(value);
}

/**
 * Every message of `input` that `report` takes out (removed or rewritten),
 * in `input`'s order, with what stands for it in the result. Empty when the
 * report changed nothing. `writtenAs` maps an added message to the copy
 * actually written for it (a graph state writes a note under the id of a
 * message it replaces) or to `null` when it was left out.
 */
export function evictionsOf(
  input: readonly BaseMessage[],
  report: CompactionReport,
  writtenAs?: ReadonlyMap<BaseMessage, BaseMessage | null>,
): EvictedMessage[] {
  if (report.messages === null) return [];
  const replacements = new Map<BaseMessage, BaseMessage[]>();
  for (const { original, replacement } of report.rewritten) enqueue(replacements, original, replacement);
  const removals = new Map<BaseMessage, (BaseMessage | null)[]>();
  const standIn = new Map<BaseMessage, BaseMessage>();
  for (const { added, originals } of report.standsFor ?? []) for (const message of originals) standIn.set(message, added);
  for (const message of report.removed) enqueue(removals, message, standIn.get(message) ?? null);

  const evicted: EvictedMessage[] = [];
  for (const message of input) {
    const replacement = takeFrom(replacements, message);
    const removedFor = replacement === undefined ? takeFrom(removals, message) : undefined;
    if (replacement === undefined && removedFor === undefined) continue;
    const standing = replacement ?? removedFor ?? null;
    const replacedBy = standing !== null && writtenAs?.has(standing) ? writtenAs.get(standing)! : standing;
    evicted.push({ message, fate: fateOf(replacedBy), replacedBy, fromCompaction: isCompactionMessage(message) });
  }
  return evicted;
}
