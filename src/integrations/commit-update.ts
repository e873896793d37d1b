import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, RemoveMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { CompactionReport } from "../compactors/report";
import { describeValue } from "../errors";
import { isOmissionNote } from "../messages/omission-note";

/** `message` under another id, as a new message of the same kind (the original is not touched). */
function withId(message: BaseMessage, id: string): BaseMessage {
  const [stored] = mapChatMessagesToStoredMessages([message]);
  return mapStoredMessagesToChatMessages([{ ...stored!, data: { ...stored!.data, id } }])[0]!;
}

function describeMessage(message: BaseMessage): string {
  return `${message.type} message ${describeValue(message.content)}`;
}

/**
 * The messages-channel update that turns a state's `messages` into a
 * compaction's result under LangGraph's messages reducer (used by the
 * LangGraph node and the `createAgent` middleware in `"commit"` mode). The
 * reducer replaces a message whose id it already holds in place, appends one
 * with a new id at the end, and removes one named by a `RemoveMessage`; so:
 *
 * - a kept message is not sent;
 * - a rewritten message (a stand-in with the original's id) is sent as it is,
 *   and replaces the original in place;
 * - a removed message gets a `RemoveMessage` with its id;
 * - an added message (a note, a summary) has no place in the state yet: a
 *   new id would land after the task, so it takes over the id of a removed
 *   message that stood in its slot (between the same kept neighbours), and
 *   replaces that message in place. Several added messages in one slot take
 *   the removed messages there in order.
 *
 * Only ids read from the state are touched, and never all of them
 * (`REMOVE_ALL_MESSAGES` would erase what parallel branches write in the same
 * step). An omission note with no removed message in its slot (a kept
 * exchange interleaved with a removed one) is left out rather than put where
 * it could split that exchange; any other added message without a slot means
 * the result cannot be written faithfully, and nothing is written (`[]`).
 *
 * @throws TypeError when a message to remove has no id (state messages always
 * have one: the reducer gives them one), or when the result reorders the
 * state's messages (no compactor does; the reducer could not express it).
 */
export function commitUpdate(input: readonly BaseMessage[], report: CompactionReport): BaseMessage[] {
  return commitPlan(input, report).update;
}

/** A {@link commitUpdate} and, for each message the compaction added, the message written for it (`null`: left out). */
export interface CommitPlan {
  update: BaseMessage[];
  writtenAs: Map<BaseMessage, BaseMessage | null>;
}

/** {@link commitUpdate}, telling also under which id each added message is written (see there). */
export function commitPlan(input: readonly BaseMessage[], report: CompactionReport): CommitPlan {
  const writtenAs = new Map<BaseMessage, BaseMessage | null>();
  const compacted = report.messages;
  if (compacted === null) return { update: [], writtenAs };
  const positionOf = new Map<BaseMessage, number>();
  const positionById = new Map<string, number>();
  input.forEach((message, index) => {
    positionOf.set(message, index);
    if (typeof message.id === "string" && message.id !== "") positionById.set(message.id, index);
  });

  // Walk the result: each message is a state message (kept or rewritten) at a position, or an addition.
  const keptAt = new Uint8Array(input.length);
  const rewrites: BaseMessage[] = [];
  const slots: { after: number; added: BaseMessage[] }[] = [];
  let last = -1;
  for (const message of compacted) {
    const position = positionOf.get(message) ?? (typeof message.id === "string" ? positionById.get(message.id) : undefined);
    if (position === undefined) {
      const slot = slots.at(-1);
      if (slot !== undefined && slot.after === last) slot.added.push(message);
      else slots.push({ after: last, added: [message] });
      continue;
    }
    if (position <= last || keptAt[position]) {
      throw new TypeError(
        `"commit" mode cannot write a result that moves the state's messages: ${describeMessage(message)} comes out of order`,
      );
    }
    keptAt[position] = 1;
    if (message !== input[position]) rewrites.push(message);
    last = position;
  }

  const removed: number[] = [];
  for (let index = 0; index < input.length; index += 1) {
    if (keptAt[index]) continue;
    const message = input[index]!;
    if (typeof message.id !== "string" || message.id === "") {
      throw new TypeError(
        `"commit" mode removes messages by id, but a message to remove has none (${describeMessage(message)}): ` +
          "keep the state's messages under LangGraph's messages reducer, which gives every message an id",
      );
    }
    removed.push(index);
  }

  // Each slot lies between two kept positions; the removed messages between them host its additions.
  const hosts = new Set<number>();
  const placed: BaseMessage[] = [];
  let cursor = 0;
  for (const { after, added } of slots) {
    const next = nextKept(keptAt, after);
    while (cursor < removed.length && removed[cursor]! <= after) cursor += 1;
    for (const message of added) {
      const candidate = removed[cursor];
      if (candidate === undefined || candidate >= next) {
        // No removed message stands here: a note anywhere else could split an exchange, so it is left out.
        if (isOmissionNote(message)) {
          writtenAs.set(message, null);
          continue;
        }
        return { update: [], writtenAs: new Map() };
      }
      hosts.add(candidate);
      const written = withId(message, input[candidate]!.id!);
      writtenAs.set(message, written);
      placed.push(written);
      cursor += 1;
    }
  }
  const removals = removed.filter((index) => !hosts.has(index)).map((index) => new RemoveMessage({ id: input[index]!.id! }));
  return { update: [...removals, ...rewrites, ...placed], writtenAs };
}

/** The first kept position after `after`, or the length when none. */
function nextKept(keptAt: Uint8Array, after: number): number {
  for (let index = after + 1; index < keptAt.length; index += 1) if (keptAt[index]) return index;
  return keptAt.length;
}
