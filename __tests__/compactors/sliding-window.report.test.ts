/**
 * The sliding window's report and note rules that the mutation run over the
 * rest of `src/compactors` (TESTING.md) found no deterministic test for: an
 * unchanged report says no step was trimmed; earlier notes go (and are folded
 * into the new count) unless protected, and a note repeated by a store's race
 * is folded once; a protected loose message or note is paid for in the
 * protected tokens exactly once; the report's stage entry and removed list are
 * exact; with the task first in the list, the note after trimmed steps stands
 * right after the task. Expectations are plain arithmetic on a
 * one-token-per-character counter, and exact ids.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { omissionNoteMetadata, isOmissionNote, SlidingWindowCompactor } from "../../src";
// One token per character of string content.
import { lengthCounter as chars, protectIds } from "../support/stages";
import { createOmissionNote } from "../../src/messages/omission-note";

/** Ids, the new note (which has none) as "NOTE". */
const idsOf = (messages: readonly BaseMessage[] | null) =>
  messages === null ? null : messages.map((m) => (isOmissionNote(m) && m.id === undefined ? "NOTE" : m.id));
const human = (id: string, content: string) => new HumanMessage({ id, content });
const ai = (id: string, content: string) => new AIMessage({ id, content });
const system = (id: string, content: string) => new SystemMessage({ id, content });
/** An earlier compaction's note, as a store hands it back. */
const earlierNote = (id: string | undefined, removed: number) => {
  const note = createOmissionNote("[earlier messages removed]", removed, 3);
  if (id !== undefined) note.id = id;
  return note;
};
/** The removed count the newest note in `messages` carries. */
const newNoteCount = (messages: readonly BaseMessage[] | null) => {
  const notes = (messages ?? []).filter((m) => isOmissionNote(m) && m.id === undefined);
  expect(notes).toHaveLength(1);
  return omissionNoteMetadata(notes[0]!)!.removed_messages;
};

describe("an unchanged report", () => {
  test("says that no step was trimmed when the list fits", async () => {
    const messages = [system("sys", "sys"), human("task", "task"), ai("s1", "x".repeat(10)), ai("s2", "y".repeat(10))];
    const report = await new SlidingWindowCompactor({ cache: null }).compactWithReport(messages, 1_000, chars);
    expect(report.messages).toBeNull();
    expect(report.stepsTrimmed).toBe(false);
    expect(report.tokensBefore).toBe(27);
    expect(report.tokensAfter).toBe(27);
  });

  test("says that no step was trimmed when only an earlier note would go", async () => {
    // Steps do not fit, but the newest (kept by minKeepSteps) is the only one: all that would go is the old note.
    const messages = [system("sys", "sys"), earlierNote("n0", 4), human("task", "task"), ai("s1", "x".repeat(50))];
    const report = await new SlidingWindowCompactor({ cache: null }).compactWithReport(messages, 10, chars);
    expect(report.messages).toBeNull();
    expect(report.stepsTrimmed).toBe(false);
    expect(report.removed).toEqual([]);
  });
});

describe("earlier notes", () => {
  // An earlier note that removed 5, two history turns of 10, the task and a step.
  const history = (note: HumanMessage) => [
    system("sys", "sys"),
    note,
    human("h0", "a".repeat(10)),
    human("h1", "b".repeat(10)),
    human("task", "task"),
    ai("s1", "s".repeat(5)),
  ];

  test("go and are folded into the new count when nothing is protected", async () => {
    const kept = await new SlidingWindowCompactor({ cache: null }).compact(history(earlierNote("n0", 5)), 22, chars);
    expect(idsOf(kept)).toEqual(["sys", "NOTE", "h1", "task", "s1"]);
    // h0 and the note went; the note stood for 5: 1 + 5.
    expect(newNoteCount(kept)).toBe(6);
  });

  test("go and are folded when something else is protected", async () => {
    const compactor = new SlidingWindowCompactor({ cache: null, protect: protectIds("h1") });
    const kept = await compactor.compact(history(earlierNote("n0", 5)), 22, chars);
    expect(idsOf(kept)).toEqual(["sys", "NOTE", "h1", "task", "s1"]);
    expect(newNoteCount(kept)).toBe(6);
  });

  test("stay when protected, and their count is not folded into the new note", async () => {
    const compactor = new SlidingWindowCompactor({ cache: null, protect: protectIds("n0") });
    // Protected: sys 3 + note + task 4; the note's own text is 26 characters.
    const kept = await compactor.compact(history(earlierNote("n0", 5)), 3 + 26 + 4 + 5 + 10, chars);
    expect(idsOf(kept)).toEqual(["sys", "NOTE", "n0", "h1", "task", "s1"]);
    // Only h0 went: the protected note still stands for its own 5.
    expect(newNoteCount(kept)).toBe(1);
  });

  test("repeated with one id by a store's race are folded once", async () => {
    const messages = [system("sys", "sys"), earlierNote("n0", 5), earlierNote("n0", 5), human("h0", "a".repeat(10)), human("task", "task")];
    const kept = await new SlidingWindowCompactor({ cache: null }).compact(messages, 10, chars);
    expect(idsOf(kept)).toEqual(["sys", "NOTE", "task"]);
    // h0 plus one copy of the note's 5 (the other copy is the same note).
    expect(newNoteCount(kept)).toBe(6);
  });

  test("repeated without an id are folded once, while different notes are each folded", async () => {
    const repeated = [system("sys", "sys"), earlierNote(undefined, 5), earlierNote(undefined, 5), human("h0", "a".repeat(10)), human("task", "task")];
    expect(newNoteCount(await new SlidingWindowCompactor({ cache: null }).compact(repeated, 10, chars))).toBe(6);
    const different = [system("sys", "sys"), earlierNote(undefined, 5), earlierNote(undefined, 7), human("h0", "a".repeat(10)), human("task", "task")];
    expect(newNoteCount(await new SlidingWindowCompactor({ cache: null }).compact(different, 10, chars))).toBe(13);
    const differentIds = [system("sys", "sys"), earlierNote("n0", 5), earlierNote("n1", 5), human("h0", "a".repeat(10)), human("task", "task")];
    expect(newNoteCount(await new SlidingWindowCompactor({ cache: null }).compact(differentIds, 10, chars))).toBe(11);
  });
});

describe("protected messages outside any group are paid for once", () => {
  // A stray AI message of 2 before the first turn: loose, in no group. sys 3 + stray 2 + h1 20 + task 4 = 29.
  const messages = () => [system("sys", "sys"), ai("stray", "ss"), human("h1", "b".repeat(20)), human("task", "task")];

  test("a protected loose message counts in the protected tokens", async () => {
    const compactor = new SlidingWindowCompactor({ cache: null, omissionNote: null, protect: protectIds("stray") });
    expect(await compactor.compact(messages(), 29, chars)).toBeNull();
    expect(idsOf(await compactor.compact(messages(), 28, chars))).toEqual(["sys", "stray", "task"]);
  });

  test("an unprotected loose message is not counted twice when something else is protected", async () => {
    const compactor = new SlidingWindowCompactor({ cache: null, omissionNote: null, protect: protectIds("h1") });
    expect(await compactor.compact(messages(), 29, chars)).toBeNull();
    expect(idsOf(await compactor.compact(messages(), 28, chars))).toEqual(["sys", "h1", "task"]);
  });

  test("a protected earlier note counts in the protected tokens", async () => {
    const note = earlierNote("n0", 5);
    const size = (note.content as string).length;
    const list = [system("sys", "sys"), note, human("h1", "b".repeat(20)), human("task", "task")];
    const compactor = new SlidingWindowCompactor({ cache: null, omissionNote: null, protect: protectIds("n0") });
    expect(await compactor.compact(list, 27 + size, chars)).toBeNull();
    expect(idsOf(await compactor.compact(list, 26 + size, chars))).toEqual(["sys", "n0", "task"]);
  });

  test("a protected turn and one more fit exactly", async () => {
    // Protected: sys 3 + task 4 + h2 5 = 12; h1 (6) fits in 18, h0 (2) then does not.
    const list = [system("sys", "sys"), human("h0", "aa"), human("h1", "b".repeat(6)), human("h2", "c".repeat(5)), human("task", "task")];
    const compactor = new SlidingWindowCompactor({ cache: null, omissionNote: null, protect: protectIds("h2") });
    expect(idsOf(await compactor.compact(list, 18, chars))).toEqual(["sys", "h1", "h2", "task"]);
    expect(idsOf(await compactor.compact(list, 17, chars))).toEqual(["sys", "h2", "task"]);
    expect(await compactor.compact(list, 20, chars)).toBeNull();
  });
});

describe("the report", () => {
  test("lists exactly the removed messages, and its one stage entry repeats it", async () => {
    const messages = [system("sys", "sys"), human("h0", "a".repeat(10)), ai("a0", "b".repeat(10)), human("h1", "cc"), human("task", "task")];
    const report = await new SlidingWindowCompactor({ cache: null }).compactWithReport(messages, 15, chars);
    expect(idsOf(report.messages)).toEqual(["sys", "NOTE", "h1", "task"]);
    expect(report.removed.map((m) => m.id)).toEqual(["h0", "a0"]);
    expect(report.removed[0]).toBe(messages[1]);
    expect(report.keptCount).toBe(3);
    expect(report.tokensBefore).toBe(29);
    expect(report.tokensAfter).toBe(9 + (report.note!.content as string).length);
    expect(report.stages).toEqual([
      {
        strategy: "sliding_window",
        messages: report.messages,
        removed: report.removed,
        rewritten: [],
        added: [report.note],
        standsFor: [{ added: report.note, originals: report.removed }],
        tokensBefore: report.tokensBefore,
        tokensAfter: report.tokensAfter,
      },
    ]);
    expect(report.standsFor).toEqual([{ added: report.note, originals: [messages[1], messages[2]] }]);
  });
});

describe("the note after trimmed steps", () => {
  test("stands right after the task when the task is the first message", async () => {
    const messages = [
      human("task", "task"),
      ai("s0", "a".repeat(20)),
      new AIMessage({ id: "s1", content: "", tool_calls: [{ id: "c1", name: "look", args: {} }] }),
      new ToolMessage({ id: "t1", tool_call_id: "c1", content: "b".repeat(5) }),
    ];
    const kept = await new SlidingWindowCompactor({ cache: null }).compact(messages, 12, chars);
    expect(idsOf(kept)).toEqual(["task", "NOTE", "s1", "t1"]);
  });
});
