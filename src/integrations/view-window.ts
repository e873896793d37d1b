import type { BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { CompactionHook, RequestOverhead } from "../compactors/compaction-hook";
import type { CompactionReport } from "../compactors/report";
import { isCompactionNote } from "../messages/note";
import { leadingSystemEnd } from "../messages/turns";

/**
 * A remembered cut: which messages of a full history the model no longer
 * sees, and the note shown in their place. Integrations in `"view"` mode keep
 * the full history (in graph state, a checkpoint, a store) and this small
 * value beside it, so that between two compactions the model is shown the
 * same prefix, and provider prompt caches keep hitting. Recomputing a fresh
 * cut on every call would move the prefix on every call.
 *
 * Plain data: it survives checkpointers and JSON (the note is a message).
 */
export interface CompactionView {
  /** Ids of history messages hidden from the model. */
  hiddenIds: string[];
  /** The note shown in their place, or `null` when notes are disabled. */
  note: HumanMessage | null;
  /** Id of the message the note follows; `null`: right after the leading system messages. */
  noteAfterId: string | null;
}

/** The conversation the model sees under `view`: hidden messages left out, the note put back where it stood. */
export function applyCompactionView(messages: readonly BaseMessage[], view: CompactionView | null | undefined): BaseMessage[] {
  if (!view || (view.hiddenIds.length === 0 && view.note === null)) return [...messages];
  const hidden = new Set(view.hiddenIds);
  const visible = messages.filter((message) => message.id === undefined || !hidden.has(message.id));
  if (view.note === null) return visible;
  let position = -1;
  if (view.noteAfterId !== null) {
    position = visible.findIndex((message) => message.id === view.noteAfterId);
  }
  const at = position >= 0 ? position + 1 : leadingSystemEnd(visible);
  return [...visible.slice(0, at), view.note, ...visible.slice(at)];
}

/** The outcome of {@link advanceCompactionView}. */
export interface ViewAdvance {
  /** What the model should be sent now. */
  messages: BaseMessage[];
  /** The cut to remember (unchanged when the hook did not fire). */
  view: CompactionView | null;
  /** The compaction's report when one happened now, else `null`. */
  report: CompactionReport | null;
}

/**
 * Shows the model the remembered view of `messages`, and moves the cut only
 * when the hook fires on that view. Messages without an id cannot be
 * remembered as hidden; they simply show again and are cut again next time.
 */
export async function advanceCompactionView(
  hook: CompactionHook,
  messages: readonly BaseMessage[],
  view: CompactionView | null | undefined,
  overhead: RequestOverhead = {},
): Promise<ViewAdvance> {
  const current = applyCompactionView(messages, view);
  const report = await hook.run(current, overhead);
  if (report === null || report.messages === null) return { messages: current, view: view ?? null, report: null };

  // Ids that left the history some other way are dropped, so the cut stays as small as what it hides.
  const present = new Set(messages.map((message) => message.id));
  const hiddenIds = new Set((view?.hiddenIds ?? []).filter((id) => present.has(id)));
  for (const message of report.removed) {
    if (message.id !== undefined && !isCompactionNote(message)) hiddenIds.add(message.id);
  }
  let noteAfterId: string | null = null;
  if (report.note !== null) {
    const at = report.messages.indexOf(report.note);
    const before = at > 0 ? report.messages[at - 1] : undefined;
    noteAfterId = before !== undefined && at > leadingSystemEnd(report.messages) ? (before.id ?? null) : null;
  }
  return {
    messages: report.messages,
    view: { hiddenIds: [...hiddenIds], note: report.note, noteAfterId },
    report,
  };
}
