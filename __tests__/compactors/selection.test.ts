/**
 * The sliding window's selection rules that a mutation run of
 * `src/compactors/selection.ts` found no deterministic test for (TESTING.md): groups are taken newest first and the walk stops at the first
 * that does not fit; old history past that point is never counted; a
 * protected group is paid for once, in the protected tokens, and is neither
 * counted again nor a reason to stop. Expectations are plain arithmetic on a
 * one-token-per-character counter, and exact ids.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { isOmissionNote, SlidingWindowCompactor } from "../../src";
import type { ProtectPredicate } from "../../src";
// One token per character of string content.
import { lengthCounter as chars, protectIds } from "../support/stages";

const idsOf = (messages: readonly BaseMessage[] | null) => (messages === null ? null : messages.map((m) => (isOmissionNote(m) ? "NOTE" : m.id)));
const human = (id: string, content: string) => new HumanMessage({ id, content });
const ai = (id: string, content: string) => new AIMessage({ id, content });
const system = (id: string, content: string) => new SystemMessage({ id, content });
const compactor = (protect?: ProtectPredicate) => new SlidingWindowCompactor({ cache: null, ...(protect ? { protect } : {}) });

describe("groups are kept newest first, stopping at the first that does not fit", () => {
  // Turns of 2, 20 and 5 tokens before the task; instructions and task 7.
  const turns = () => [system("sys", "sys"), human("h0", "aa"), human("h1", "b".repeat(20)), human("h2", "c".repeat(5)), human("task", "task")];

  test("an older turn that would fit goes once a newer one did not", async () => {
    // Budget 7 + 7: h2 (5) fits, h1 (20) does not; h0 (2) would, but the walk has stopped.
    expect(idsOf(await compactor().compact(turns(), 14, chars))).toEqual(["sys", "NOTE", "h2", "task"]);
  });

  test("an older step that would fit goes once a newer one did not", async () => {
    const steps = [system("sys", "sys"), human("task", "task"), ai("s0", "aa"), ai("s1", "b".repeat(20)), ai("s2", "c".repeat(5))];
    expect(idsOf(await compactor().compact(steps, 14, chars))).toEqual(["sys", "task", "NOTE", "s2"]);
  });

  test("history older than the first turn that did not fit is never counted", async () => {
    const counted: string[] = [];
    const recording = (messages: BaseMessage[]) => {
      for (const message of messages) counted.push(message.id ?? "?");
      return chars(messages);
    };
    await compactor().compact(turns(), 14, recording);
    expect(counted.sort()).toEqual(["h1", "h2", "sys", "task"]);
  });
});

describe("a protected group is paid for once", () => {
  test("a protected step is not counted again against the steps' budget", async () => {
    // Protected: sys 3 + task 4 + step s1 10 = 17. Left: s2 (5) and the turn h0 (3).
    const messages = [system("sys", "sys"), human("h0", "hhh"), human("task", "task"), ai("s1", "x".repeat(10)), ai("s2", "y".repeat(5))];
    expect(await compactor(protectIds("s1")).compact(messages, 25, chars)).toBeNull();
    // One token less: the steps still fit, so only history goes.
    expect(idsOf(await compactor(protectIds("s1")).compact(messages, 24, chars))).toEqual(["sys", "NOTE", "task", "s1", "s2"]);
  });

  test("a protected turn is neither counted among the turns nor a reason to stop", async () => {
    // Protected: sys 3 + task 4 + turn h1 20 = 27. Left 5: h2 (3) and h0 (2) both fit around the protected h1.
    const messages = [system("sys", "sys"), human("h0", "aa"), human("h1", "b".repeat(20)), human("h2", "ccc"), human("task", "task")];
    expect(await compactor(protectIds("h1")).compact(messages, 32, chars)).toBeNull();
    expect(idsOf(await compactor(protectIds("h1")).compact(messages, 31, chars))).toEqual(["sys", "NOTE", "h1", "h2", "task"]);
  });

  test("a protected turn is not taken off twice when deciding whether everything fits", async () => {
    // A stray (2) before the first turn; protected 3 + 4 + 20 = 27, so target 29 holds everything exactly.
    const messages = [system("sys", "sys"), ai("stray", "ss"), human("h1", "b".repeat(20)), human("task", "task")];
    expect(await compactor(protectIds("h1")).compact(messages, 29, chars)).toBeNull();
    expect(idsOf(await compactor(protectIds("h1")).compact(messages, 28, chars))).toEqual(["sys", "NOTE", "h1", "task"]);
  });
});
