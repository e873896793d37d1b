import type { BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { CompactionHook, CompactionHookReport, CompactionRunOptions } from "../compactors/compaction-hook";
import type { RequestOverhead } from "../compactors/compactor";
import type { CompactionReport } from "../compactors/report";
import { assertConversation } from "../messages/conversation-check";
import { assertMessage, describeValue } from "../errors";
import { leadingSystemEnd } from "../messages/instructions";

/** A message a compaction added to the view (a note, a summary), and where it stands. */
export interface ViewAddition {
  /** The added message itself. */
  message: BaseMessage;
  /**
   * Id of the history message it follows in the view (the nearest one before
   * it that has an id); `null`: right after the leading system messages.
   * Several additions after the same message stand in the order listed.
   */
  afterId: string | null;
}

/**
 * A remembered cut: which messages of a full history the model no longer
 * sees, which it sees rewritten, and what was added in their place.
 * Integrations in `"view"` mode keep the full history (in graph state, a
 * checkpoint, a store) and this small value beside it, so that between two
 * compactions the model is shown the same prefix and provider prompt caches
 * keep hitting. Recomputing a fresh cut on every call would move the prefix
 * on every call.
 *
 * Plain data: it survives checkpointers and JSON (the messages in it are
 * messages, which every checkpointer stores).
 *
 * Values written before rewrites and additions existed, `{ hiddenIds, note,
 * noteAfterId }`, are still read: their note is one addition.
 */
export interface CompactionView {
  /** Ids of history messages hidden from the model. */
  hiddenIds: string[];
  /** Stand-ins shown in place of the history message with the same id (pruned or offloaded tool results). */
  rewritten?: BaseMessage[];
  /** Messages shown that are not in the history (notes, summaries), in view order, each with its place. */
  added?: ViewAddition[];
  /** Old format: the one note shown in place of the hidden messages (read, no longer written). */
  note?: HumanMessage | null;
  /** Old format: id of the message the note follows; `null`: right after the leading system messages. */
  noteAfterId?: string | null;
}

/** Throws a `TypeError` naming `label` unless `value` is an array. */
function assertArray(value: unknown, label: string, expected: string): asserts value is unknown[] {
  if (!Array.isArray(value)) throw new TypeError(`\`${label}\` must be ${expected}, got ${describeValue(value)}`);
}

/** Throws a `TypeError` naming `label` unless `value` is a message id or `null`. */
function assertAnchor(value: unknown, label: string): asserts value is string | null {
  if (value !== null && typeof value !== "string") throw new TypeError(`\`${label}\` must be a message id (a string) or null, got ${describeValue(value)}`);
}

/**
 * Throws a `TypeError` naming the bad part unless `view` is `null`,
 * `undefined` or a {@link CompactionView}: `hiddenIds` an array of strings;
 * `rewritten`, when present, an array of messages; `added`, when present, an
 * array of `{ message, afterId }`; or, in the old format, `note` a message
 * (or `null`) and `noteAfterId` a string (or `null`). A view is read back
 * from a checkpoint or a store, so a bad one is named here rather than
 * failing later as "is not iterable", or being taken for no view at all.
 */
function assertCompactionView(view: unknown): asserts view is CompactionView | null | undefined {
  const name = "view";
  if (view === null || view === undefined) return;
  if (typeof view !== "object" || Array.isArray(view)) {
    throw new TypeError(`\`${name}\` must be a CompactionView ({ hiddenIds, rewritten, added }), null or undefined, got ${describeValue(view)}`);
  }
  const { hiddenIds, rewritten, added, note, noteAfterId } = view as Record<string, unknown>;
  assertArray(hiddenIds, `${name}.hiddenIds`, "an array of message ids");
  hiddenIds.forEach((id, index) => {
    if (typeof id !== "string") throw new TypeError(`\`${name}.hiddenIds[${index}]\` must be a message id (a string), got ${describeValue(id)}`);
  });
  if (rewritten !== undefined) {
    assertArray(rewritten, `${name}.rewritten`, "an array of BaseMessage");
    rewritten.forEach((message, index) => assertMessage(message, `${name}.rewritten[${index}]`));
  }
  if (added !== undefined) {
    assertArray(added, `${name}.added`, "an array of { message, afterId }");
    added.forEach((addition: unknown, index) => {
      if (typeof addition !== "object" || addition === null || Array.isArray(addition)) {
        throw new TypeError(`\`${name}.added[${index}]\` must be an object { message, afterId }, got ${describeValue(addition)}`);
      }
      const entry = addition as Record<string, unknown>;
      assertMessage(entry.message, `${name}.added[${index}].message`);
      assertAnchor(entry.afterId, `${name}.added[${index}].afterId`);
    });
  }
  if (note !== undefined && note !== null) assertMessage(note, `${name}.note`);
  if (noteAfterId !== undefined) assertAnchor(noteAfterId, `${name}.noteAfterId`);
}

/** The additions of a view, old format included. */
function additionsOf(view: CompactionView): ViewAddition[] {
  if (Array.isArray(view.added)) return view.added;
  return view.note ? [{ message: view.note, afterId: view.noteAfterId ?? null }] : [];
}

/**
 * The conversation the model sees under `view`: hidden messages left out,
 * rewritten ones replaced by their stand-ins, added ones put back where they
 * stood. An addition whose place (the message it follows) left the history goes right after the
 * leading system messages.
 *
 * `messages` must be an array of `BaseMessage`, and `view` `null`,
 * `undefined` or a {@link CompactionView} (old format included): anything
 * else is a `TypeError` naming the bad value.
 */
export function applyCompactionView(messages: readonly BaseMessage[], view: CompactionView | null | undefined): BaseMessage[] {
  assertConversation(messages);
  assertCompactionView(view);
  if (!view) return [...messages];
  const additions = additionsOf(view);
  const rewritten = view.rewritten ?? [];
  if (view.hiddenIds.length === 0 && additions.length === 0 && rewritten.length === 0) return [...messages];
  const hidden = new Set(view.hiddenIds);
  const standIns = new Map<string, BaseMessage>();
  for (const message of rewritten) if (typeof message.id === "string") standIns.set(message.id, message);
  const visible: BaseMessage[] = [];
  for (const message of messages) {
    if (message.id === undefined) visible.push(message);
    else if (!hidden.has(message.id)) visible.push(standIns.get(message.id) ?? message);
  }
  if (additions.length === 0) return visible;

  const after = new Map<string | null, BaseMessage[]>();
  const present = new Set(visible.map((message) => message.id));
  for (const { message, afterId } of additions) {
    const place = afterId !== null && present.has(afterId) ? afterId : null;
    const list = after.get(place);
    if (list === undefined) after.set(place, [message]);
    else list.push(message);
  }
  const start = leadingSystemEnd(visible);
  const result: BaseMessage[] = [];
  visible.forEach((message, index) => {
    if (index === start) result.push(...(after.get(null) ?? []));
    result.push(message);
    if (message.id !== undefined) {
      const following = after.get(message.id);
      if (following !== undefined) {
        result.push(...following);
        after.delete(message.id); // an id met twice places its additions once
      }
    }
  });
  if (start === visible.length) result.push(...(after.get(null) ?? []));
  return result;
}

/**
 * Whether `shown` is the history message `original` as it was (the same
 * object, or the same message read back from a checkpoint), rather than a
 * stand-in for it. A stand-in may differ anywhere a compactor rewrites: the
 * text, a call's input (cleared tool inputs keep the text), reasoning kept
 * beside the text, the compaction metadata. Taking a stand-in for the
 * original would show the original again at the next call, uncompacted.
 */
function sameMessage(shown: BaseMessage, original: BaseMessage): boolean {
  if (shown === original) return true;
  return shown.type === original.type && rewritableParts(shown) === rewritableParts(original);
}

/** What of a message a compaction may rewrite, as text (for comparing a message with its copy). */
function rewritableParts(message: BaseMessage): string {
  const calls = (list: unknown) => (Array.isArray(list) ? list.map((call: { id?: unknown; name?: unknown; args?: unknown }) => [call.id, call.name, call.args]) : null);
  const metadata = message.response_metadata as Record<string, unknown> | undefined;
  return JSON.stringify([
    message.content,
    calls((message as { tool_calls?: unknown }).tool_calls),
    calls((message as { invalid_tool_calls?: unknown }).invalid_tool_calls),
    message.additional_kwargs ?? {},
    metadata?.compaction ?? null,
    metadata?.output ?? null,
  ]);
}

/**
 * The cut that shows `shown` for `history`: the inverse of
 * {@link applyCompactionView}. A message of `shown` is a history message when
 * it is one of `history`'s (or carries the id of one: then, if it differs, it
 * is that message's stand-in); anything else is an addition, placed after the
 * nearest history message before it. History messages with an id that
 * `shown` lacks are hidden; those without an id cannot be remembered as
 * hidden and simply show again.
 */
export function viewOfShown(
  history: readonly BaseMessage[],
  shown: readonly BaseMessage[],
  options: ViewOfShownOptions = {},
): CompactionView {
  // `shown` may be read back from a graph channel (createReactAgent's `llmInputMessages`), unchecked until here.
  assertConversation(history, "history");
  assertConversation(shown, "shown");
  const { grownSince = false } = options;
  const positionOf = new Map<BaseMessage, number>();
  const positionById = new Map<string, number>();
  history.forEach((message, index) => {
    positionOf.set(message, index);
    if (typeof message.id === "string") positionById.set(message.id, index);
  });
  const shownIds = new Set<string>();
  const rewritten: BaseMessage[] = [];
  const added: ViewAddition[] = [];
  let afterId: string | null = null;
  let lastShown = -1;
  for (const message of shown) {
    const position = positionOf.get(message) ?? (typeof message.id === "string" ? positionById.get(message.id) : undefined);
    if (position === undefined) {
      added.push({ message, afterId });
      continue;
    }
    const original = history[position]!;
    lastShown = Math.max(lastShown, position);
    if (typeof original.id === "string") {
      shownIds.add(original.id);
      afterId = original.id;
    }
    if (!sameMessage(message, original)) rewritten.push(message);
  }
  const hiddenIds: string[] = [];
  for (const [id, position] of positionById) {
    if (!shownIds.has(id) && (!grownSince || position < lastShown)) hiddenIds.push(id);
  }
  return { hiddenIds, rewritten, added };
}

/** Options of {@link viewOfShown}. */
export interface ViewOfShownOptions {
  /**
   * `shown` was computed from an earlier, shorter history, which has grown
   * since: history messages after the newest one shown are new, not hidden.
   * (A compaction that removed the newest messages themselves cannot be told
   * apart from growth then; those messages show again.) Default `false`:
   * `shown` was computed from `history` itself.
   */
  grownSince?: boolean;
}

/** The outcome of {@link advanceCompactionView}. */
export interface ViewAdvance {
  /** What the model should be sent now. */
  messages: BaseMessage[];
  /** The cut to remember (unchanged when the hook did not fire). */
  view: CompactionView | null;
  /** The compaction's report when one was applied now, else `null`. */
  report: CompactionReport | null;
  /** The hook's report whatever came of it (applied, declined, nothing to do), or `null` when the trigger did not fire. */
  run: CompactionHookReport | null;
}

/**
 * Shows the model the remembered view of `messages`, and moves the cut only
 * when the hook fires on that view and its compaction is applied. The new
 * cut is read off what the model is sent, so it holds whatever any compactor
 * did: hidden messages, rewritten ones, and added ones in their places.
 * Messages without an id cannot be remembered as hidden; they simply show
 * again and are cut again next time.
 */
export async function advanceCompactionView(
  hook: CompactionHook,
  messages: readonly BaseMessage[],
  view: CompactionView | null | undefined,
  overhead: RequestOverhead = {},
  options: CompactionRunOptions = {},
): Promise<ViewAdvance> {
  const current = applyCompactionView(messages, view);
  const report = await hook.run(current, overhead, options);
  if (report === null || report.messages === null) return { messages: current, view: view ?? null, report: null, run: report };
  return { messages: report.messages, view: viewOfShown(messages, report.messages), report, run: report };
}
