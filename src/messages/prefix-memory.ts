/**
 * What was worked out about the last list of messages seen, per conversation,
 * found again by message identity.
 *
 * Agents call the compactor once per model call with the same history plus a
 * new step, often in a new array each time (view mode builds one per call)
 * but holding the same message objects. A {@link PrefixMemory} finds the list
 * it saw last for that conversation and tells how many leading messages are
 * still the very same objects at the same positions, so the caller redoes work
 * only for the rest. Anything else (an element replaced, removed, reordered,
 * another conversation) shows up as a shorter common prefix: the caller falls
 * back to as much fresh work as that needs, never to a stale answer.
 *
 * Messages are compared by identity only: a message object edited in place
 * (a field reassigned) is not noticed. LangChain treats messages as immutable
 * values; replace the message instead, as the count cache also asks.
 *
 * Memory is released with the history: an entry is held only through a
 * `WeakMap` keyed by the last message of its list (an ephemeron: the entry
 * lives exactly as long as that message), and found through `WeakRef`s keyed by
 * its first few messages, so a system prompt shared by many conversations does
 * not keep any of them alive.
 */
import type { BaseMessage } from "@langchain/core/messages";

/** How many leading messages an entry is found by (a shared system prompt at 0 still leaves the next ones). */
const LEADING_KEYS = 4;

/** One remembered list and what its owner derived from it. */
export interface Remembered<S> {
  /** The list as last seen: this memory's own copy, so a caller editing its array cannot change it. */
  readonly list: BaseMessage[];
  readonly state: S;
}

interface Entry<S> extends Remembered<S> {
  list: BaseMessage[];
  ref: WeakRef<Entry<S>> | null;
}

/** The length of the run of leading elements `a` and `b` share by identity. */
function commonPrefix(a: readonly unknown[], b: readonly unknown[]): number {
  const length = Math.min(a.length, b.length);
  let i = 0;
  // `Object.is`, not `===`: V8 compiles `===` on objects to read each object's map (so that a NaN is never equal to
  // itself), a cache miss per message of a long history; `Object.is` compares the references alone, and gives the
  // same answer for objects.
  while (i < length && Object.is(a[i], b[i])) i += 1;
  return i;
}

/** Every memory, so that a benchmark can measure a cold start honestly. */
const memories: PrefixMemory<unknown>[] = [];

/**
 * Forgets everything every {@link PrefixMemory} remembers (the next list of
 * any conversation is laid out and checked afresh). Not needed for memory,
 * which is released with the messages; for benchmarks and tests.
 */
export function forgetRememberedLists(): void {
  for (const memory of memories) memory.clear();
}

export class PrefixMemory<S> {
  private keeper = new WeakMap<object, Entry<S>>();
  private finder = new WeakMap<object, WeakRef<Entry<S>>>();

  constructor() {
    memories.push(this as PrefixMemory<unknown>);
  }

  clear(): void {
    this.keeper = new WeakMap();
    this.finder = new WeakMap();
  }

  /**
   * The entry remembered for the conversation `messages` continues, with the
   * length of their common prefix; `entry` is `undefined` when nothing useful
   * is remembered. An entry is offered only when the prefix is more than half
   * of its list, so that a list sharing just a system prompt with another
   * conversation never takes over that conversation's entry.
   */
  recall(messages: readonly unknown[]): { entry: Remembered<S> | undefined; common: number } {
    let best: Entry<S> | undefined;
    let bestCommon = 0;
    const keys = Math.min(LEADING_KEYS, messages.length);
    for (let i = 0; i < keys; i += 1) {
      const key = messages[i];
      if (typeof key !== "object" || key === null) continue;
      const entry = this.finder.get(key)?.deref();
      if (entry === undefined || entry === best) continue;
      const common = commonPrefix(entry.list, messages);
      if (common > bestCommon && common * 2 > entry.list.length) {
        best = entry;
        bestCommon = common;
      }
    }
    return { entry: best, common: best === undefined ? 0 : bestCommon };
  }

  /**
   * Records that `state` now describes `messages`, updating `entry` (as
   * returned by {@link recall} for the same list, with its `common`) or
   * creating one.
   */
  remember(entry: Remembered<S> | undefined, state: S, messages: readonly BaseMessage[], common: number): void {
    let own = entry as Entry<S> | undefined;
    if (own === undefined || own.state !== state) {
      own = { list: messages.slice(), state, ref: null };
    } else {
      const previous = own.list[own.list.length - 1];
      if (previous !== undefined && this.keeper.get(previous) === own) this.keeper.delete(previous);
      // Overwritten in place, and shortened only when the new list is shorter: setting a long array's length and
      // pushing again can make V8 trim its store and copy the whole list back on the next push.
      const list = own.list;
      for (let i = common; i < messages.length; i += 1) list[i] = messages[i]!;
      if (list.length > messages.length) list.length = messages.length;
    }
    const list = own.list;
    const last = list[list.length - 1];
    if (last === undefined) return; // nothing to key it by: an empty list is cheap to redo
    this.keeper.set(last, own);
    own.ref ??= new WeakRef(own);
    const keys = Math.min(LEADING_KEYS, list.length);
    for (let i = 0; i < keys; i += 1) this.finder.set(list[i]!, own.ref);
  }
}
