import type { BaseMessage } from "@langchain/core/messages";
import { isSummaryMessage } from "./compaction-metadata";
import { exchangesOf } from "./exchanges";
import { omissionNoteMetadata } from "./omission-note";
import { roleOf } from "./roles";

/** A unit that is kept or removed whole. */
export interface MessageGroup {
  /** `"turn"`: history before the task; `"step"`: the task's own work. */
  kind: "turn" | "step";
  /** Indices into the conversation, ascending. */
  members: number[];
  /** Position used to order groups from oldest to newest: the index of its (newest) head message. */
  order: number;
}

/**
 * How a conversation divides into protected messages, history turns, task
 * steps and the rest. Treat it as read-only: its arrays and groups may be
 * shared with layouts of longer lists of the same conversation.
 */
export interface ConversationLayout {
  /** Messages `[0, systemEnd)` are the leading system messages: protected. */
  systemEnd: number;
  /** Index of the current task (latest real human message): protected. -1 when there is none. */
  task: number;
  /** History turns, oldest first. */
  turns: MessageGroup[];
  /** Steps of the current task, oldest first. */
  steps: MessageGroup[];
  /** Earlier omission notes: always removed, and folded into the new note. */
  notes: number[];
  /** Messages in no group (before the first turn, or results answering nothing after the task): removed whenever compacting. */
  loose: number[];
}

/**
 * The grouping rules: how a conversation divides into what a compaction
 * keeps or removes whole. Read top to bottom; `layoutConversation` computes
 * the same layout incrementally (`layout.ts`) and is tested to equal this.
 *
 * 1. The instructions are the leading system messages. They are always kept.
 * 2. The task is the latest real user message after them: not an omission
 *    note, not a summary. It is always kept. There may be none.
 * 3. Each message after the instructions is placed by position:
 *    - before the task (history), a user message or a summary opens a turn,
 *      and every other message joins the turn it stands in; messages before
 *      the first turn belong to none ("loose");
 *    - after the task, an assistant message or a summary opens a step, and
 *      every other message joins the step it stands in, or opens one when no
 *      step has begun;
 *    - omission notes belong to nothing (every compaction replaces them);
 *    - a tool result in an exchange is not placed by position: it goes with
 *      its exchange (rule 4). A result in no exchange (nobody asks for its
 *      id, or it has none and follows no call) joins the turn it stands in,
 *      or, after the task, is loose.
 * 4. Every exchange (`exchangesOf`: calls with their results) is kept whole:
 *    the units its messages were placed in become one group, of the
 *    strongest kind among them (a step over a turn over loose) and standing
 *    at its newest head. So a call and its result are never split, wherever
 *    the result stands.
 * 5. The layout lists the turns and the steps, oldest (earliest head) first,
 *    the notes, and the loose messages.
 */
export function groupConversation(messages: readonly BaseMessage[]): ConversationLayout {
  const kinds = messages.map(kindOf);
  // Rule 1.
  let systemEnd = 0;
  while (systemEnd < messages.length && kinds[systemEnd] === "system") systemEnd += 1;
  // Rule 2.
  let task = -1;
  for (let index = messages.length - 1; index >= systemEnd; index -= 1) {
    if (kinds[index] === "user") {
      task = index;
      break;
    }
  }

  // Rule 3: units by position.
  const exchanges = exchangesOf(messages);
  const units: { kind: UnitKind; head: number }[] = [];
  const open = (kind: UnitKind, head: number) => units.push({ kind, head }) - 1;
  const unitOf = new Map<number, number>();
  const notes: number[] = [];
  let turn = -1;
  let step = -1;
  for (let index = systemEnd; index < messages.length; index += 1) {
    const kind = kinds[index]!;
    if (index === task) {
      step = -1;
      continue;
    }
    if (kind === "note") {
      notes.push(index);
      continue;
    }
    const inHistory = index < task;
    if (kind === "tool") {
      if (exchanges.of[index]! >= 0) continue; // rule 4 places it
      unitOf.set(index, inHistory && turn >= 0 ? turn : open("loose", index));
      continue;
    }
    if (inHistory) {
      if (kind === "user" || kind === "summary") turn = open("turn", index);
      unitOf.set(index, turn >= 0 ? turn : open("loose", index));
    } else {
      if (kind === "ai" || kind === "summary" || step < 0) step = open("step", index);
      unitOf.set(index, step);
    }
  }

  // Rule 4: each exchange joins the units its placed messages stand in, and its results go with them.
  const parent = units.map((_, unit) => unit);
  const find = (unit: number): number => (parent[unit] === unit ? unit : (parent[unit] = find(parent[unit]!)));
  for (const members of exchanges.members) {
    const placed = members.filter((index) => unitOf.has(index)).map((index) => unitOf.get(index)!);
    for (const unit of placed.slice(1)) parent[find(unit)] = find(placed[0]!);
    for (const index of members) if (!unitOf.has(index) && placed.length > 0) unitOf.set(index, placed[0]!);
  }
  const groups = new Map<number, { kind: UnitKind; head: number; members: number[] }>();
  units.forEach((unit, index) => {
    const root = find(index);
    const group = groups.get(root) ?? { kind: unit.kind, head: unit.head, members: [] };
    if (RANK[unit.kind] > RANK[group.kind]) group.kind = unit.kind;
    group.head = Math.max(group.head, unit.head);
    groups.set(root, group);
  });
  for (const [index, unit] of unitOf) groups.get(find(unit))!.members.push(index);

  // Rule 5.
  const ordered = [...groups.values()].sort((a, b) => a.head - b.head);
  const asGroup = (group: { kind: UnitKind; head: number; members: number[] }): MessageGroup => ({
    kind: group.kind as "turn" | "step",
    members: [...group.members].sort((a, b) => a - b),
    order: group.head,
  });
  return {
    systemEnd,
    task,
    turns: ordered.filter((group) => group.kind === "turn").map(asGroup),
    steps: ordered.filter((group) => group.kind === "step").map(asGroup),
    notes,
    loose: ordered.filter((group) => group.kind === "loose").flatMap((group) => group.members).sort((a, b) => a - b),
  };
}

type UnitKind = "loose" | "turn" | "step";
const RANK: Record<UnitKind, number> = { loose: 0, turn: 1, step: 2 };

/** What a message is to the grouping rules. */
type MessageKind = "system" | "user" | "note" | "summary" | "ai" | "tool" | "other";

function kindOf(message: BaseMessage): MessageKind {
  const role = roleOf(message);
  if (role === "system" || role === "ai" || role === "tool" || role === "other") return role;
  if (omissionNoteMetadata(message) !== undefined) return "note";
  return isSummaryMessage(message) ? "summary" : "user";
}
