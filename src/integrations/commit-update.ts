import { HumanMessage, RemoveMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { CompactionReport } from "../compactors/report";
import { describeValue } from "../errors";

/**
 * The messages-channel update that turns a state's `messages` into a
 * compaction's result under LangGraph's messages reducer (used by the
 * LangGraph node and the `createAgent` middleware in `"commit"` mode).
 *
 * It touches only ids read from the state and never removes everything
 * (`REMOVE_ALL_MESSAGES` would erase what parallel branches write in the same
 * step). The reducer appends a message with a new id at the end, after the
 * task, so the note instead takes over the id of a removed message that stood
 * where the note goes: the reducer then replaces that message in place.
 *
 * @throws TypeError when a message to remove has no id (state messages always
 * have one: the reducer gives them one).
 */
export function commitUpdate(input: readonly BaseMessage[], report: CompactionReport): BaseMessage[] {
  const { removed, note } = report;
  const compacted = report.messages ?? [];
  for (const message of removed) {
    if (typeof message.id !== "string" || message.id === "") {
      throw new TypeError(
        `"commit" mode removes messages by id, but a message to remove has none (${message.type} message ${describeValue(message.content)}): ` +
          "keep the state's messages under LangGraph's messages reducer, which gives every message an id",
      );
    }
  }
  const removals = (except?: BaseMessage) =>
    removed.filter((message) => message !== except).map((message) => new RemoveMessage({ id: message.id! }));
  if (note === null) return removals();

  // The note's slot lies between the kept messages around it; a removed message in that slot hosts it.
  const position = new Map(input.map((message, index) => [message, index]));
  const at = compacted.indexOf(note);
  const low = at > 0 ? position.get(compacted[at - 1]!)! : -1;
  const high = at + 1 < compacted.length ? position.get(compacted[at + 1]!)! : input.length;
  const host = removed.find((message) => {
    const index = position.get(message)!;
    return index > low && index < high;
  });
  // No removed message stood there (a kept exchange interleaved with a removed one): a note anywhere else
  // could split that exchange, so this compaction goes without one rather than leave an invalid state.
  if (host === undefined) return removals();
  const placed = new HumanMessage({ content: note.content, response_metadata: note.response_metadata, id: host.id! });
  return [...removals(host), placed];
}
