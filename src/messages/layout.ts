import type { BaseMessage } from "@langchain/core/messages";
import { toolCallOwners } from "./exchanges";
import { compactionNoteMetadata } from "./note";
import { isAI, isHuman, isTool, toolCallIdOf, toolCallsOf } from "./roles";
import { latestUserIndex, leadingSystemEnd } from "./turns";

/** A unit that is kept or removed whole. */
export interface MessageGroup {
  /** `"turn"`: history before the task; `"step"`: the task's own work. */
  kind: "turn" | "step";
  /** Indices into the conversation, ascending. */
  members: number[];
  /** Position used to order groups from oldest to newest: the index of its (newest) head message. */
  order: number;
}

/** How a conversation divides into protected messages, history turns, task steps and the rest. */
export interface ConversationLayout {
  /** Messages `[0, systemEnd)` are the leading system messages: protected. */
  systemEnd: number;
  /** Index of the current task (latest real human message): protected. -1 when there is none. */
  anchor: number;
  /** History turns, oldest first. */
  turns: MessageGroup[];
  /** Steps of the current task, oldest first. */
  steps: MessageGroup[];
  /** Earlier compaction notes: always removed, and folded into the new note. */
  notes: number[];
  /** Messages in no group (before the first turn, or strays after the task): removed whenever compacting. */
  loose: number[];
}

type UnitKind = "loose" | "turn" | "step";
const RANK: Record<UnitKind, number> = { loose: 0, turn: 1, step: 2 };

/**
 * Units under construction, joined with union-find: every message that names
 * the same tool-call id (the AI messages asking for it and the results
 * answering it) ends in one unit, so no selection can split an exchange.
 */
class Units {
  readonly kind: UnitKind[] = [];
  readonly head: number[] = [];
  private readonly parent: number[] = [];

  add(kind: UnitKind, head: number): number {
    this.kind.push(kind);
    this.head.push(head);
    this.parent.push(this.parent.length);
    return this.parent.length - 1;
  }

  find(unit: number): number {
    let root = unit;
    while (this.parent[root] !== root) root = this.parent[root]!;
    while (this.parent[unit] !== root) {
      const next = this.parent[unit]!;
      this.parent[unit] = root;
      unit = next;
    }
    return root;
  }

  /** Joins two units; the result takes the stronger kind (step > turn > loose) and the newer head. */
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    this.parent[rb] = ra;
    if (RANK[this.kind[rb]!] > RANK[this.kind[ra]!]) this.kind[ra] = this.kind[rb]!;
    this.head[ra] = Math.max(this.head[ra]!, this.head[rb]!);
  }
}

/**
 * `isCompactionNote` for a value already typed as a message: it reads the
 * type first and so skips `BaseMessage.isInstance` on every non-human message,
 * which on long histories is a large share of the layout's cost.
 */
function isNote(message: BaseMessage): boolean {
  return compactionNoteMetadata(message) !== undefined;
}

/**
 * Divides a conversation into the units the selection keeps or removes whole:
 *
 * - history before the task is grouped into turns, each from a real human
 *   message up to the next; messages before the first one belong to none;
 * - after the task, each AI message opens a step; tool results join the step
 *   of the call they answer, matched by `tool_call_id` wherever they stand (out
 *   of order, or with other messages between), and only a result without an id
 *   falls back to the AI message it immediately follows;
 * - earlier compaction notes belong to no unit: they are folded.
 *
 * One pass over the messages plus one over the matched results: O(n).
 */
export function layoutConversation(messages: readonly BaseMessage[]): ConversationLayout {
  const systemEnd = leadingSystemEnd(messages);
  const anchor = latestUserIndex(messages, systemEnd);
  const owners = toolCallOwners(messages, systemEnd);
  const units = new Units();
  const unitOf = new Int32Array(messages.length).fill(-1);
  const matchedResults: number[] = [];
  const notes: number[] = [];

  let turn = -1; // the history turn being filled
  let caller = -1; // the unit of the AI message whose results may follow without ids
  for (let index = systemEnd; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (index === anchor || isNote(message)) {
      if (index !== anchor) notes.push(index);
      caller = -1;
      continue;
    }
    const inHistory = index < anchor;
    if (isTool(message)) {
      const id = toolCallIdOf(message);
      if (id !== undefined && owners.first.has(id)) {
        matchedResults.push(index);
        continue; // placed with its call below; the run of results goes on
      }
      if (id === undefined && caller >= 0) unitOf[index] = caller;
      else unitOf[index] = inHistory && turn >= 0 ? turn : units.add("loose", index);
      continue;
    }
    if (inHistory) {
      // Notes were set aside above, so every human message here is a real one.
      if (isHuman(message)) turn = units.add("turn", index);
      unitOf[index] = turn >= 0 ? turn : units.add("loose", index);
    } else {
      unitOf[index] = isAI(message) ? units.add("step", index) : units.add("loose", index);
    }
    caller = isAI(message) && toolCallsOf(message).length > 0 ? unitOf[index]! : -1;
  }

  for (const index of matchedResults) {
    const id = toolCallIdOf(messages[index]!)!;
    const unit = unitOf[owners.first.get(id)!]!;
    const others = owners.more.get(id);
    if (others !== undefined) for (const other of others) units.union(unit, unitOf[other]!);
    unitOf[index] = unit;
  }

  return collectGroups(messages.length, systemEnd, anchor, unitOf, units, notes);
}

function collectGroups(
  length: number,
  systemEnd: number,
  anchor: number,
  unitOf: Int32Array,
  units: Units,
  notes: number[],
): ConversationLayout {
  const byRoot = new Map<number, MessageGroup>();
  const loose: number[] = [];
  const turns: MessageGroup[] = [];
  const steps: MessageGroup[] = [];
  for (let index = systemEnd; index < length; index += 1) {
    const unit = unitOf[index]!;
    if (unit < 0) continue;
    const root = units.find(unit);
    const kind = units.kind[root]!;
    if (kind === "loose") {
      loose.push(index);
      continue;
    }
    let group = byRoot.get(root);
    if (group === undefined) {
      group = { kind, members: [], order: units.head[root]! };
      byRoot.set(root, group);
      (kind === "turn" ? turns : steps).push(group);
    }
    group.members.push(index);
  }
  // Groups were met by their first member; a merged group is ordered by its newest head.
  const byOrder = (a: MessageGroup, b: MessageGroup) => a.order - b.order;
  turns.sort(byOrder);
  steps.sort(byOrder);
  return { systemEnd, anchor, turns, steps, notes, loose };
}
