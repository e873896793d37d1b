import type { BaseMessage } from "@langchain/core/messages";
import { assertMessagesFrom, describeValue } from "../errors";
import { nextSlice, sliceUsedUp } from "../time-slices";
import type { ConversationLayout } from "./grouping";
import { LayoutEngine } from "./layout-engine";
import { PrefixMemory } from "./prefix-memory";
import type { Remembered } from "./prefix-memory";

const memory = new PrefixMemory<LayoutEngine>();

/**
 * Divides a conversation into the groups the selection keeps or removes whole
 * (the rules are `grouping.ts`'s): turns of history, steps of the current
 * task, earlier notes, and loose messages.
 *
 * The layout of the last list seen for a conversation is remembered (by
 * message identity, released with the messages): a list that continues it,
 * as an agent's history does from one model call to the next, is laid out
 * only from where it differs. Whatever changed (a message replaced, removed
 * or moved, a new user message, another conversation), the result is that
 * of a fresh layout. O(n) for a fresh list, O(new messages + groups) for a
 * continued one.
 */
export function layoutConversation(messages: readonly BaseMessage[]): ConversationLayout {
  return remembered(messages, false);
}

/**
 * {@link layoutConversation} for a list not yet checked: throws a `TypeError`
 * naming the first element that is not a `BaseMessage` (before laying anything
 * out), checking only the messages past the prefix already checked, so that
 * checking and grouping a continued history cost one pass over its new part.
 */
export function layoutCheckedConversation(messages: unknown, name = "messages"): ConversationLayout {
  if (!Array.isArray(messages)) {
    throw new TypeError(`\`${name}\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  }
  return remembered(messages as BaseMessage[], true, name);
}

/** The remembered engine for `messages` and the length of their common prefix; none while that engine is busy laying out in slices. */
function recallEngine(messages: readonly BaseMessage[]): { entry: Remembered<LayoutEngine> | undefined; common: number } {
  const recalled = memory.recall(messages);
  return recalled.entry?.state.busy === true ? { entry: undefined, common: 0 } : recalled;
}

function remembered(messages: readonly BaseMessage[], check: boolean, name = "messages"): ConversationLayout {
  const { entry, common } = recallEngine(messages);
  const engine = entry?.state ?? new LayoutEngine();
  const checked = Math.min(engine.checked, common);
  // What the engine will not read again (its kept prefix) is checked here; the rest as it is read.
  if (check) assertMessagesFrom(messages, checked, name, Math.min(common, engine.n));
  try {
    engine.update(messages, common, check ? name : null);
  } catch (error) {
    forgetState(engine);
    throw error;
  }
  engine.checked = check ? messages.length : checked;
  memory.remember(entry, engine, messages, common);
  return engine.layout();
}

/** A failed or abandoned layout leaves no half-built state behind to be trusted next time. */
function forgetState(engine: LayoutEngine): void {
  engine.update([], 0);
  engine.checked = 0;
}

/** Messages checked or laid out between two looks at the time slice (a few milliseconds of work). */
const MESSAGES_PER_STEP = 1_024;

/**
 * {@link layoutCheckedConversation} in time slices (see `time-slices.ts`):
 * a long stretch not laid out before (a history seen for the first time) is
 * checked and laid out {@link MESSAGES_PER_STEP} messages at a time, and
 * between two of them, once the slice is used up, the event loop turns (and
 * an aborted `signal` stops it, rejecting with its reason). The engine
 * extends a layout as a list grows, so the result is that of one pass. While
 * it runs, its engine is used by no other layout (another layout of the same
 * conversation starts afresh).
 */
export async function layoutCheckedConversationInSlices(messages: unknown, signal?: AbortSignal, name = "messages"): Promise<ConversationLayout> {
  if (!Array.isArray(messages)) {
    throw new TypeError(`\`${name}\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  }
  const list = messages as BaseMessage[];
  const { entry, common } = recallEngine(list);
  if (list.length - common <= MESSAGES_PER_STEP) return remembered(list, true, name);
  const engine = entry?.state ?? new LayoutEngine();
  engine.busy = true;
  try {
    // What the engine will not read again (its kept prefix) is checked first; the rest as it is read.
    for (let from = Math.min(engine.checked, common), kept = Math.min(common, engine.n); from < kept; from += MESSAGES_PER_STEP) {
      assertMessagesFrom(list, from, name, Math.min(kept, from + MESSAGES_PER_STEP));
      if (sliceUsedUp()) await nextSlice(signal);
    }
    for (let to = common + MESSAGES_PER_STEP; ; to += MESSAGES_PER_STEP) {
      // From the second part on, the state describes `list[0..engine.n)` exactly: nothing to rewind.
      engine.update(list, to === common + MESSAGES_PER_STEP ? common : engine.n, name, Math.min(to, list.length));
      if (to >= list.length) break;
      if (sliceUsedUp()) await nextSlice(signal);
    }
  } catch (error) {
    forgetState(engine);
    throw error;
  } finally {
    engine.busy = false;
  }
  engine.checked = list.length;
  memory.remember(entry, engine, list, common);
  return engine.layout();
}

/** A fresh layout, remembering nothing: the reference the remembered layouts must equal. */
export function freshLayout(messages: readonly BaseMessage[]): ConversationLayout {
  const engine = new LayoutEngine();
  engine.update(messages, 0);
  return engine.layout();
}
