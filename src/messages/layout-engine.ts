import type { BaseMessage } from "@langchain/core/messages";
import { assertMessageAt, reasonOf } from "../errors";
import { isSummaryMessage } from "./compaction-metadata";
import { asksForTools, collectAssistantCallIds } from "./exchanges";
import type { ConversationLayout, MessageGroup } from "./grouping";
import { leadingSystemEnd } from "./instructions";
import { omissionNoteMetadata } from "./omission-note";
import { roleOf, toolCallIdOf } from "./roles";

/**
 * The layout engine: the grouping rules of `grouping.ts`, computed one
 * stretch of a list at a time so that a list continuing one it saw (an
 * agent's history from one model call to the next) costs only its new part.
 * It is an optimisation: `groupConversation` states the rules, and the
 * tests hold the two equal on every kind of list and edit
 * (`__tests__/messages/grouping.test.ts`).
 *
 * Units are where messages are placed by position (rule 3 of the grouping);
 * a group state is a union-find root holding the units an exchange joined
 * (rule 4), with its kind, head and members.
 */

// ---------------------------------------------------------------------------
// What each message is, read once

const SYSTEM = 0;
const HUMAN = 1; // a real human message: the user's
const NOTE = 2; // an omission note of ours
const AI = 3;
const TOOL = 4;
const OTHER = 5;
const SUMMARY = 6; // a summary of ours: never the task; opens a turn in history and a step of its own after the task

function roleCode(message: BaseMessage): number {
  switch (roleOf(message)) {
    case "system":
      return SYSTEM;
    case "human":
      if (omissionNoteMetadata(message) !== undefined) return NOTE;
      return isSummaryMessage(message) ? SUMMARY : HUMAN;
    case "ai":
      return AI;
    case "tool":
      return TOOL;
    default:
      return OTHER;
  }
}

// ---------------------------------------------------------------------------
// Units and their components

type UnitKind = "loose" | "turn" | "step";
const RANK: Record<UnitKind, number> = { loose: 0, turn: 1, step: 2 };

/** The messages of one union-find root: what becomes a group (or loose messages). */
interface GroupState {
  kind: UnitKind;
  head: number;
  /**
   * In the order they joined (append-only, so a join is undone by a pop); a
   * merge appends the smaller component's members to the larger one's array.
   */
  members: number[];
  /** The group last handed out for it; `null` once it changed. Handed-out groups are never modified. */
  group: MessageGroup | null;
  /** Position in the turn or step list; `dead` once merged into another component. */
  slot: number;
  dead: boolean;
}

/**
 * Counts of the grouping's inner-loop work, for tests that hold it linear
 * in the number of messages without timing it. Not part of the public API.
 */
export const layoutWork = { messages: 0, ownerVisits: 0, unions: 0, findSteps: 0, memberMoves: 0 };

/** A stretch of the list laid out in one go, with what undoes it. */
interface Epoch {
  start: number;
  end: number;
  /** Undo actions, applied last first; `null` for history, which is never undone piecewise. */
  trail: (() => void)[] | null;
  /** The smallest index before `start` whose placement this epoch decided (a result answering a later call). */
  dependents: number;
  saved: { turn: number; caller: number; step: number; task: number; taskStart: number; systemEnd: number };
}

/** Undo entries kept for the current task before the oldest epochs are forgotten (then a new task relays the list). */
const TRAIL_LIMIT = 200_000;

/**
 * The layout of one conversation, built one stretch at a time: a fresh
 * layout is one stretch from 0, and a list that continues the last one seen
 * is laid out only from where it differs. The task's own stretches (everything
 * from the current task on) can be undone, so a new step replacing the last
 * one, an edit inside the task, or a new user message (which turns the task
 * into history) costs work in proportion to the task, not to the history.
 */
export class LayoutEngine {
  /**
   * An engine that is never released, so that V8 keeps the hidden classes of
   * the engine and its tables alive. V8 collects a class shape that no live
   * object has, and throws away the code optimized for it in that collection;
   * without this, the first layout after a major collection that found every
   * conversation's engine released (a process that lays out one new list per
   * request, the benchmark's cold runs) ran its methods unoptimized until they
   * were compiled again (`node --trace-deopt` lists them as deoptimized for
   * "weak objects" at each full collection).
   */
  static readonly keptShape: LayoutEngine = new LayoutEngine();

  /** Messages laid out: the state describes `list[0..n)`. */
  n = 0;
  systemEnd = 0;
  task = -1;
  /** Where the task's decisions begin; `n` when the state holds none (everything so far is history). */
  taskStart = 0;
  /** How many leading messages of the remembered list were checked to be `BaseMessage`s. */
  checked = 0;
  /** While a layout in slices is under way (its state describes a part of a list no memory entry holds): not to be used by another. */
  busy = false;
  /** While laying out a list not yet checked: the argument name to check each new message under. */
  private checkAs: string | null = null;

  private roles = new Uint8Array(64);
  private asks = new Uint8Array(64);
  /** For the messages being laid out (indexed from `base`): the id each result answers. */
  private resultIds: (string | undefined)[] = [];
  /**
   * For the results being laid out (indexed from `base`): where their id
   * stands in `ownerIds` when the latest message asking for tools before them
   * asked for it (the usual case, found without a map lookup), else -1.
   */
  private resultAsked: number[] = [];
  private base = 0;
  /** The call ids asked for by the messages being laid out, with the index of the message asking for each. */
  private ownerIds: string[] = [];
  private ownerAt: number[] = [];
  private matched: number[] = [];
  private matchedSlots: number[] = [];
  private unitOf = new Int32Array(64);

  /**
   * Every call id asked for, with its slot: the slot holds the id's first
   * owner (the earliest message asking for it) and whether a result answered
   * it yet, in typed arrays, so that a result finds all it needs by one
   * lookup of its id (or none, when it answers the call right before it).
   */
  private slotOf = new Map<string, number>();
  /** The ids by slot, in the order they were added (undone newest first). */
  private slotIds: string[] = [];
  private slotOwner = new Int32Array(64);
  private slotAnswered = new Uint8Array(64);
  /** The slot of each id in `ownerIds`, in the same order. */
  private ownerSlots = new Int32Array(64);
  /** Later owners of an id (messages asking for an id an earlier message asked for): rare, so by id. */
  private more = new Map<string, number[]>();
  /** Ids answered by a result that no call asks for (yet), with that result's index. */
  private unmatched = new Map<string, number>();

  private parent: number[] = [];
  private groupStates: (GroupState | undefined)[] = [];

  private turnList: GroupState[] = [];
  private stepList: GroupState[] = [];
  private loose: number[] = [];
  private notes: number[] = [];

  private turn = -1;
  private caller = -1;
  private step = -1;

  private epochs: Epoch[] = [];
  private trailSize = 0;
  /** The epoch being written: where undo actions go (`null`: nowhere). */
  private log: Epoch | null = null;
  private emitted: ConversationLayout | null = null;
  /** Which of the layout's lists changed since it was last handed out (the others are handed out again as they were). */
  private changed = { turn: true, step: true, notes: true, loose: true };

  /**
   * Brings the state to the layout of `messages[0..to)`, whose first `common` messages are those laid out before.
   * (A list laid out up to a point and then on to its end is laid out as in one go: see `layoutInSlices`.)
   */
  update(messages: readonly BaseMessage[], common: number, checkAs: string | null = null, to = messages.length): void {
    this.checkAs = checkAs;
    // `common` never exceeds either list's length, and a rewind to a target the state is not past does nothing.
    this.rewind(common);
    for (;;) {
      const restartAt = this.extend(messages, to);
      if (restartAt < 0) return;
      this.rewind(restartAt);
    }
  }

  layout(): ConversationLayout {
    const changed = this.changed;
    const last = this.emitted;
    if (last !== null && !changed.turn && !changed.step && !changed.notes && !changed.loose && last.task === this.task && last.systemEnd === this.systemEnd) return last;
    const emit = (component: GroupState): MessageGroup => {
      if (component.group === null) {
        // Sorted whatever order they joined in: results join after the messages placed around them, so most turns
        // hold their members out of order, and sorting an array already in order is one pass.
        const members = component.members.slice().sort((a, b) => a - b);
        component.group = { kind: component.kind as "turn" | "step", members, order: component.head };
      }
      return component.group;
    };
    const live = (list: GroupState[]): MessageGroup[] => {
      const groups: MessageGroup[] = [];
      for (const component of list) if (!component.dead) groups.push(emit(component));
      return groups;
    };
    this.emitted = {
      systemEnd: this.systemEnd,
      task: this.task,
      turns: last === null || changed.turn ? live(this.turnList) : last.turns,
      steps: last === null || changed.step ? live(this.stepList) : last.steps,
      notes: last === null || changed.notes ? this.notes.slice() : last.notes,
      loose: last === null || changed.loose ? this.loose.slice() : last.loose,
    };
    this.changed = { turn: false, step: false, notes: false, loose: false };
    return this.emitted;
  }

  // -------------------------------------------------------------------------
  // Undo

  /** Whether undo actions are being kept (in the task's stretches): callers test it before making one. */
  private logging = false;

  private useLog(epoch: Epoch | null): void {
    this.log = epoch;
    this.logging = epoch !== null && epoch.trail !== null;
  }

  private record(undo: () => void): void {
    this.log!.trail!.push(undo);
    this.trailSize += 1;
  }

  /** Undoes stretches until the state describes a prefix of length at most `target`. */
  private rewind(target: number): void {
    // Each undo action marks the lists it changes, so a list the undone stretches never touched is handed out as it was.
    while (this.n > target) {
      const epoch = this.epochs.pop();
      if (epoch === undefined || epoch.trail === null) {
        this.reset();
        return;
      }
      for (let k = epoch.trail.length - 1; k >= 0; k -= 1) epoch.trail[k]!();
      this.trailSize -= epoch.trail.length;
      this.n = epoch.start;
      Object.assign(this, epoch.saved);
      if (epoch.dependents < target) target = epoch.dependents;
    }
  }

  private reset(): void {
    const { checkAs } = this;
    Object.assign(this, new LayoutEngine());
    this.checkAs = checkAs;
  }

  // -------------------------------------------------------------------------
  // Extending

  /**
   * Lays out `messages[n..]` onto the state. Returns -1 when done, or the index
   * to rewind to first when an earlier decision no longer holds: a new user
   * message turns the current task into history, or a new call is answered by
   * an earlier result that answered nothing before.
   */
  private extend(messages: readonly BaseMessage[], to: number): number {
    const from = this.n;
    // A state holding history only, with nothing after it, lost its task message (undone): relay from the start.
    if (from === to) {
      if (this.taskStart >= from && from > this.systemEnd) return 0;
      // The task message was undone and only instructions are left: no task (a task past the end is stale).
      if (this.task >= from) this.task = -1;
      return -1;
    }
    this.readFacts(messages, from, to);
    const systemEnd = this.systemEnd === from ? leadingSystemEnd(messages, from) : this.systemEnd;
    let latestTask = -1;
    for (let i = to - 1; i >= Math.max(from, systemEnd); i -= 1) {
      if (this.roles[i] === HUMAN) {
        latestTask = i;
        break;
      }
    }
    const historyState = this.taskStart >= from;
    if (latestTask >= 0 && !historyState) return this.taskStart; // the task so far becomes history
    if (latestTask < 0 && historyState && from > systemEnd) return 0; // the task message is gone: the task moved back
    const ownerIds = this.ownerIds;
    const ownerAt = this.ownerAt;
    if (this.unmatched.size > 0) {
      for (const id of ownerIds) {
        const answeredEarlier = this.unmatched.get(id);
        if (answeredEarlier !== undefined) return answeredEarlier;
      }
    }

    // A task at or past `from` belongs to an undone stretch (the task message was cut off): there is none now.
    const newTask = latestTask >= 0 ? latestTask : this.task >= from ? -1 : this.task;
    const taskStart = historyState ? (latestTask >= 0 ? latestTask : systemEnd) : this.taskStart;
    this.systemEnd = systemEnd;
    // History up to the new task (never undone piecewise), then the task's stretch (undoable).
    const history: Epoch | null = taskStart > from ? this.openEpoch(from, taskStart, null) : null;
    const task: Epoch = this.openEpoch(Math.max(from, taskStart), to, []);

    // Owners of every call id, in the stretch of the message that asks.
    const laterOwners: [number, number][] = [];
    if (this.ownerSlots.length < ownerIds.length) this.ownerSlots = new Int32Array(Math.max(ownerIds.length, this.ownerSlots.length * 2));
    for (let k = 0; k < ownerIds.length; k += 1) {
      const at = ownerAt[k]!;
      this.useLog(history !== null && at < history.end ? history : task);
      this.ownerSlots[k] = this.addOwner(ownerIds[k]!, at, laterOwners);
    }

    const { matched, matchedSlots } = this;
    matched.length = 0;
    matchedSlots.length = 0;
    this.task = newTask;
    if (history !== null) {
      this.useLog(history);
      this.place(Math.max(from, systemEnd), history.end);
    }
    this.useLog(task);
    task.saved = this.saveScalars(task.start, taskStart);
    this.place(Math.max(task.start, systemEnd), to);
    this.joinResults(laterOwners, history, task);

    this.useLog(null);
    this.n = to;
    this.taskStart = taskStart;
    // A history stretch cannot be undone piecewise: rewinding into it (or before it) relays the list, so the
    // stretches before it are forgotten and it stands in the stack as the point where undoing stops.
    if (history !== null) this.epochs = [history];
    this.epochs.push(task);
    this.trimTrail();
    return -1;
  }

  private openEpoch(start: number, end: number, trail: (() => void)[] | null): Epoch {
    return { start, end, trail, dependents: Number.POSITIVE_INFINITY, saved: this.saveScalars(start) };
  }

  /** What undoing an epoch that starts at `start` restores; `taskStart` is where the task begins after this extension. */
  private saveScalars(start: number, taskStart = start): Epoch["saved"] {
    // Undoing the epoch that begins the task leaves a state with no task decisions: its task starts where it ends.
    return { turn: this.turn, caller: this.caller, step: this.step, task: this.task, taskStart: Math.min(taskStart, start), systemEnd: this.systemEnd };
  }

  /** Forgets the oldest undo trails once the task's trail grows past its limit (a rewind past them relays the list). */
  private trimTrail(): void {
    for (const epoch of this.epochs) {
      if (this.trailSize <= TRAIL_LIMIT || epoch === this.epochs[this.epochs.length - 1]) break;
      this.trailSize -= epoch.trail?.length ?? 0;
      epoch.trail = null;
    }
  }

  private readFacts(messages: readonly BaseMessage[], from: number, to: number): void {
    if (this.roles.length < to) {
      const capacity = Math.max(to, this.roles.length * 2);
      const grow = <T extends Uint8Array | Int32Array>(old: T, make: (n: number) => T): T => {
        const next = make(capacity);
        next.set(old);
        return next;
      };
      this.roles = grow(this.roles, (n) => new Uint8Array(n));
      this.asks = grow(this.asks, (n) => new Uint8Array(n));
      this.unitOf = grow(this.unitOf, (n) => new Int32Array(n));
    }
    const { resultIds, ownerIds, ownerAt, resultAsked, roles, asks: asksAt } = this;
    this.base = from;
    // Sized once and written by index: pushing 100,000 entries would regrow (and copy) the array again and again.
    if (resultIds.length < to - from) resultIds.length = to - from;
    resultAsked.length = 0;
    ownerIds.length = 0;
    ownerAt.length = 0;
    // Where the ids of the latest message asking for tools stand in `ownerIds`.
    let askedFrom = 0;
    let askedTo = 0;
    const checkAs = this.checkAs;
    for (let i = from; i < to; i += 1) {
      const message = messages[i]!;
      // Checked in the same pass that reads it: one pass over a new history, not two.
      if (checkAs !== null) assertMessageAt(messages, i, checkAs);
      try {
        // The usual types are read here directly (one read of `type`); the rest, and ChatMessage roles, through `roleCode`.
        const type = message.type;
        const role = type === "tool" ? TOOL : type === "ai" ? AI : roleCode(message);
        let asks = 0;
        let resultId: string | undefined;
        let asked = -1;
        if (role === AI) {
          const added = collectAssistantCallIds(message, ownerIds);
          for (let k = 0; k < added; k += 1) ownerAt.push(i);
          if (added > 0) {
            askedTo = ownerIds.length;
            askedFrom = askedTo - added;
          }
          asks = added > 0 || asksForTools(message) ? 1 : 0;
        } else if (role === TOOL) {
          resultId = type === "tool" ? idOfResult(message) : toolCallIdOf(message);
          if (resultId !== undefined) {
            for (let k = askedFrom; k < askedTo; k += 1) {
              if (ownerIds[k] === resultId) {
                asked = k;
                break;
              }
            }
          }
        }
        roles[i] = role;
        asksAt[i] = asks;
        resultIds[i - from] = resultId;
        resultAsked.push(asked);
      } catch (error) {
        // A message whose getters throw is named here, not left to crash as "Cannot read properties of ...".
        throw new TypeError(`\`messages[${i}]\` cannot be read as a message: ${reasonOf(error)}`, { cause: error });
      }
      layoutWork.messages += 1;
    }
  }

  /** Registers message `index` as asking for `id`; returns the id's slot. */
  private addOwner(id: string, index: number, laterOwners: [number, number][]): number {
    const known = this.slotOf.get(id);
    const slot = known ?? this.slotIds.length;
    if (known === undefined) {
      this.slotOf.set(id, slot);
      this.slotIds.push(id);
      if (this.slotOwner.length <= slot) {
        const owners = new Int32Array(this.slotOwner.length * 2);
        owners.set(this.slotOwner);
        this.slotOwner = owners;
        const answered = new Uint8Array(owners.length);
        answered.set(this.slotAnswered);
        this.slotAnswered = answered;
      }
      this.slotOwner[slot] = index;
      this.slotAnswered[slot] = 0;
      if (this.logging) this.record(() => void this.slotOf.delete(this.slotIds.pop()!));
      return slot;
    }
    if (this.slotOwner[slot] === index) return slot;
    let list = this.more.get(id);
    if (list === undefined) {
      list = [];
      this.more.set(id, list);
      if (this.logging) this.record(() => this.more.delete(id));
    }
    if (list[list.length - 1] === index) return slot;
    list.push(index);
    const owners = list;
    if (this.logging) this.record(() => owners.pop());
    laterOwners.push([slot, index]);
    return slot;
  }

  /**
   * The main pass over `[from, to)`:
   * - history before the task is grouped into turns, each from a real human
   *   message up to the next; messages before the first one belong to none;
   * - after the task, each AI message opens a step, and every other message
   *   (a system message, another kind) joins the step it stands in, or opens
   *   one when no step has begun yet;
   * - a tool result waits for the pass over results (it joins its call's unit
   *   wherever it stands), unless no call asks for its id: then one without an
   *   id falls back to the calling AI message right before it;
   * - omission notes belong to no unit.
   */
  private place(from: number, to: number): void {
    const { matched, matchedSlots, resultIds, base } = this;
    const resultAsked = this.resultAsked;
    const task = this.task;
    for (let i = from; i < to; i += 1) {
      const role = this.roles[i]!;
      if (i === task || role === NOTE) {
        if (i !== task) this.pushList(this.notes, i);
        this.caller = -1;
        if (i === task) this.step = -1;
        continue;
      }
      const inHistory = i < task;
      if (role === TOOL) {
        const id = resultIds[i - base];
        const asked = resultAsked[i - base]!;
        const slot = asked >= 0 ? this.ownerSlots[asked]! : id === undefined ? -1 : (this.slotOf.get(id) ?? -1);
        if (slot >= 0) {
          matched.push(i);
          matchedSlots.push(slot);
          continue; // placed with its call below; the run of results goes on
        }
        if (id !== undefined && !this.unmatched.has(id)) {
          this.unmatched.set(id, i);
          if (this.logging) this.record(() => this.unmatched.delete(id));
        }
        if (id === undefined && this.caller >= 0) this.join(this.caller, i);
        else if (inHistory && this.turn >= 0) this.join(this.turn, i);
        else this.join(this.newUnit("loose", i), i);
        continue;
      }
      let unit: number;
      if (inHistory) {
        if (role === HUMAN || role === SUMMARY) this.turn = this.newUnit("turn", i);
        unit = this.turn >= 0 ? this.turn : this.newUnit("loose", i);
      } else if (role === AI || role === SUMMARY || this.step < 0) {
        unit = this.newUnit("step", i);
        this.step = unit;
      } else {
        unit = this.step;
      }
      this.join(unit, i);
      this.caller = role === AI && this.asks[i] ? unit : -1;
    }
  }

  /**
   * Tool results join the unit of the first call asking for their id, and every
   * AI message asking for an answered id is joined into that unit too, so no
   * selection can split an exchange. Each id's owners are walked once, when it
   * is first answered; an owner that comes later is joined on its own: linear
   * however many messages share one id.
   */
  private joinResults(laterOwners: readonly [number, number][], history: Epoch | null, task: Epoch): void {
    // History's joins first, then the task's: undoing the task then leaves history exactly as it was.
    // (Which unit absorbs which does not depend on the order, only on what is joined.)
    const split = history === null ? 0 : history.end;
    const { slotOwner, slotAnswered, matched, matchedSlots } = this;
    const passes: [Epoch, number[], number[], number, [number, number][]][] = [];
    if (history === null) passes.push([task, matched, matchedSlots, matched.length, laterOwners as [number, number][]]);
    else {
      // Results are sorted into the stretch that decides them in place: those of history first, then the task's.
      const results = matched;
      const slots = matchedSlots;
      const late: number[] = [];
      let early = 0;
      for (let m = 0; m < matched.length; m += 1) {
        const result = results[m]!;
        const slot = slots[m]!;
        if (result < split && slotOwner[slot]! < split) {
          results[early] = result;
          slots[early] = slot;
          early += 1;
        } else late.push(result, slot);
      }
      for (let m = 0; m < late.length; m += 2) {
        results[early + m / 2] = late[m]!;
        slots[early + m / 2] = late[m + 1]!;
      }
      passes.push([history, results, slots, early, laterOwners.filter(([, other]) => other < split)]);
      passes.push([task, results.slice(early), slots.slice(early), matched.length - early, laterOwners.filter(([, other]) => other >= split)]);
    }
    for (const [pass, results, slots, count, owners] of passes) {
      this.useLog(pass);
      for (let m = 0; m < count; m += 1) {
        const result = results[m]!;
        const slot = slots[m]!;
        const owner = slotOwner[slot]!;
        const unit = this.unitOf[owner]!;
        if (slotAnswered[slot] === 0) {
          // First answered now.
          slotAnswered[slot] = 1;
          if (this.logging) this.record(() => (this.slotAnswered[slot] = 0));
          const others = this.more.size === 0 ? undefined : this.more.get(this.resultIds[result - this.base]!);
          if (others !== undefined) {
            for (const other of others) {
              layoutWork.ownerVisits += 1;
              // An owner in a later stretch is joined by that stretch (below), so that undoing it undoes the join.
              if (other < pass.end) this.union(unit, this.unitOf[other]!);
            }
          }
        }
        if (result < pass.start) pass.dependents = Math.min(pass.dependents, result);
        this.join(unit, result);
      }
      for (const [slot, other] of owners) {
        if (slotAnswered[slot] === 1) this.union(this.unitOf[slotOwner[slot]!]!, this.unitOf[other]!);
      }
    }
  }

  // -------------------------------------------------------------------------
  // Recorded mutations: each records how to undo itself while the task's stretches are logged

  private pushList(list: number[], value: number): void {
    list.push(value);
    if (this.logging) this.record(() => {
      list.pop();
      this.changed.notes = true;
    });
    this.changed.notes = true;
  }

  private newUnit(kind: UnitKind, head: number): number {
    const unit = this.parent.length;
    this.parent.push(unit);
    const component: GroupState = { kind, head, members: [], group: null, slot: -1, dead: false };
    this.groupStates.push(component);
    const list = this.listOf(kind);
    if (list !== null) {
      component.slot = list.length;
      list.push(component);
      this.touch(kind);
    }
    if (this.logging) this.record(() => {
      this.parent.pop();
      this.groupStates.pop();
      if (list !== null) list.pop();
      this.touch(kind);
    });
    return unit;
  }

  private listOf(kind: UnitKind): GroupState[] | null {
    return kind === "turn" ? this.turnList : kind === "step" ? this.stepList : null;
  }

  private find(unit: number): number {
    while (this.parent[unit] !== unit) {
      unit = this.parent[unit]!;
      layoutWork.findSteps += 1;
    }
    return unit;
  }

  /** Adds message `index` to the component of `unit`. */
  private join(unit: number, index: number): void {
    this.unitOf[index] = unit;
    const component = this.groupStates[this.find(unit)]!;
    const { members, group } = component;
    members.push(index);
    component.group = null;
    if (component.kind === "loose") this.insertLoose(index);
    if (this.logging) this.record(() => {
      members.pop();
      component.group = group;
      if (component.kind === "loose") this.removeLoose([index]);
      this.touch(component.kind);
    });
    this.touch(component.kind);
  }

  /**
   * Joins two units: the result takes the stronger kind (step > turn > loose)
   * and the newer head, and stands among the groups at that head. The lighter
   * tree goes under the heavier (weighed by messages, so finds stay
   * logarithmic without path compression, which could not be undone), and the
   * lighter component's members are appended to the heavier's array, so a
   * message moves O(log n) times at most.
   */
  private union(a: number, b: number): void {
    layoutWork.unions += 1;
    let big = this.find(a);
    let small = this.find(b);
    if (big === small) return;
    if (this.groupStates[big]!.members.length < this.groupStates[small]!.members.length) [big, small] = [small, big];
    const keep = this.groupStates[big]!;
    const gone = this.groupStates[small]!;
    const members = keep.members;
    const before = members.length;
    for (const index of gone.members) members.push(index);
    layoutWork.memberMoves += gone.members.length;
    const merged: GroupState = {
      kind: RANK[gone.kind] > RANK[keep.kind] ? gone.kind : keep.kind,
      head: Math.max(keep.head, gone.head),
      members,
      group: null,
      slot: -1,
      dead: false,
    };
    this.parent[small] = big;
    this.groupStates[big] = merged;
    const leftLoose = merged.kind === "loose" ? [] : [...(keep.kind === "loose" ? members.slice(0, before) : []), ...(gone.kind === "loose" ? gone.members : [])];
    const restoreLists = this.relist(keep, gone, merged, leftLoose);
    if (this.logging) this.record(() => {
      restoreLists();
      this.groupStates[big] = keep;
      this.parent[small] = small;
      members.length = before;
      this.touch(keep.kind);
      this.touch(gone.kind);
    });
    this.touch(keep.kind);
    this.touch(gone.kind);
    this.touch(merged.kind);
  }

  /**
   * Puts `merged` in place of `keep` and `gone` in the turn and step lists and the loose list; returns the undo.
   *
   * The merged group takes the slot of the one with the newer head, which always has the merged kind: unions
   * join units of messages asking for tools, and such a unit is a loose one before the first turn (one message
   * each), a turn of history, or a step after the task, so a unit's kind never ranks below that of an older
   * unit, and a merge (newest head, strongest kind) keeps it that way. The list order therefore never changes.
   */
  private relist(keep: GroupState, gone: GroupState, merged: GroupState, leftLoose: readonly number[]): () => void {
    const newer = keep.head >= gone.head ? keep : gone;
    const older = newer === keep ? gone : keep;
    const list = this.listOf(merged.kind);
    if (list !== null) {
      merged.slot = newer.slot;
      list[newer.slot] = merged;
    }
    const olderListed = this.listOf(older.kind) !== null;
    if (olderListed) older.dead = true;
    this.removeLoose(leftLoose);
    return () => {
      for (const index of leftLoose) this.insertLoose(index);
      if (olderListed) older.dead = false;
      if (list !== null) list[newer.slot] = newer;
    };
  }

  private touch(kind: UnitKind): void {
    this.changed[kind] = true;
  }

  private insertLoose(index: number): void {
    this.loose.splice(insertionPoint(this.loose, index), 0, index);
  }

  private removeLoose(indices: readonly number[]): void {
    if (indices.length === 0) return;
    const gone = new Set(indices);
    const kept = this.loose.filter((index) => !gone.has(index));
    this.loose.length = 0;
    this.loose.push(...kept);
  }
}

/** The id a `ToolMessage` answers (`toolCallIdOf` without asking its role again). */
function idOfResult(message: BaseMessage): string | undefined {
  const id = (message as { tool_call_id?: unknown }).tool_call_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}


/** Where `value` goes in the ascending `list`: usually its end, as messages come in order. */
function insertionPoint(list: readonly number[], value: number): number {
  let high = list.length;
  if (high === 0 || list[high - 1]! < value) return high;
  let low = 0;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

