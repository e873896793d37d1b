/**
 * The sliding window's rules stated directly, one deterministic test each: steps grouped by call id wherever the
 * results stand, and the window's boundaries. Each expectation is worked out independently of the code (exact ids,
 * exact token sums on a one-token-per-character counter), so breaking the rule fails it.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { isOmissionNote, SlidingWindowCompactor } from "../../src";
import { toolPairingProblems } from "../support/tool-pairing";
// One token per character of string content: every expectation below is plain arithmetic.
import { lengthCounter as chars } from "../support/stages";


/** Ids of a result, the note shown as "NOTE". */
const idsOf = (messages: readonly BaseMessage[] | null | undefined) =>
  messages === null || messages === undefined ? null : messages.map((m) => (isOmissionNote(m) ? "NOTE" : m.id));

const compactor = () => new SlidingWindowCompactor({ cache: null });
const ai = (id: string, content: string, calls: string[] = []) =>
  new AIMessage({ id, content, tool_calls: calls.map((call) => ({ id: call, name: "lookup", args: {} })) });
const result = (id: string, call: string, content: string) => new ToolMessage({ id, tool_call_id: call, content });
const human = (id: string, content: string) => new HumanMessage({ id, content });
const system = (id: string, content: string) => new SystemMessage({ id, content });

describe("steps are grouped by tool_call_id, not by position", () => {
  test("out of order: two calls, then both results; only the newest exchange is kept", async () => {
    // By id: {ai1, ta} and {ai2, tb}, 10 tokens each. By position both results would follow ai2.
    const messages = [system("sys", "sys"), human("task", "task"), ai("ai1", "", ["a"]), ai("ai2", "", ["b"]), result("ta", "a", "A".repeat(10)), result("tb", "b", "B".repeat(10))];
    const compacted = await compactor().compact(messages, 7 + 10, chars);
    expect(idsOf(compacted)).toEqual(["sys", "task", "NOTE", "ai2", "tb"]);
    expect(toolPairingProblems(compacted!)).toEqual([]);
  });

  test("interleaved: a result of the first call stands after the second call", async () => {
    // ai1 asks for a and b; b's result comes after ai2. By id: {ai1, ta, tb} (20) and {ai2, tc} (10).
    const messages = [
      system("sys", "sys"),
      human("task", "task"),
      ai("ai1", "", ["a", "b"]),
      result("ta", "a", "A".repeat(10)),
      ai("ai2", "", ["c"]),
      result("tb", "b", "B".repeat(10)),
      result("tc", "c", "C".repeat(10)),
    ];
    const compacted = await compactor().compact(messages, 7 + 10, chars);
    expect(idsOf(compacted)).toEqual(["sys", "task", "NOTE", "ai2", "tc"]);
    // With room for both, everything stays: the two groups add up to 30.
    expect(await compactor().compact(messages, 7 + 30, chars)).toBeNull();
  });
});

describe("the boundaries of the sliding window", () => {
  const withTurn = () => [system("sys", "sys"), human("q0", "q0..."), ai("a0", "a0..."), human("task", "task")];
  const withSteps = () => [system("sys", "sys"), human("task", "task"), ai("s1", "s1..."), ai("s2", "s2...")];

  test("a history turn that fits exactly is kept (fits ⇔ total ≤ target)", async () => {
    // sys 3 + task 4 + turn 10 = 17.
    expect(await compactor().compact(withTurn(), 17, chars)).toBeNull();
    expect(idsOf(await compactor().compact(withTurn(), 16, chars))).toEqual(["sys", "NOTE", "task"]);
  });

  test("a step that fits exactly is kept, and one token less trims the older step", async () => {
    expect(await compactor().compact(withSteps(), 17, chars)).toBeNull();
    expect(idsOf(await compactor().compact(withSteps(), 16, chars))).toEqual(["sys", "task", "NOTE", "s2"]);
    // Steps that fill the budget exactly leave room for a history turn of 0 tokens, which then stays too.
    const zeroTurn = [system("sys", "sys"), human("old", ""), human("task", "task"), ai("s1", "s1..."), ai("s2", "s2...")];
    expect(await compactor().compact(zeroTurn, 17, chars)).toBeNull();
    // minKeepSteps 0 lets the newest step go too once it does not fit.
    const none = await new SlidingWindowCompactor({ cache: null, minKeepSteps: 0 }).compact(withSteps(), 11, chars);
    expect(idsOf(none)).toEqual(["sys", "task", "NOTE"]);
    // minKeepSteps 2 keeps both, whatever the target.
    expect(await new SlidingWindowCompactor({ cache: null, minKeepSteps: 2 }).compact(withSteps(), 0, chars)).toBeNull();
  });

  test("loose messages count in the fits decision: a stray before the first turn or a result answering nothing after the task is removed", async () => {
    const before = [system("sys", "sys"), ai("stray", "x".repeat(20)), human("task", "task")];
    // Protected 7 fits a target of 10, but the stray's 20 do not.
    expect(idsOf(await compactor().compact(before, 10, chars))).toEqual(["sys", "NOTE", "task"]);
    expect(await compactor().compact(before, 27, chars)).toBeNull();
    // After the task a system message joins a step, but a result whose call is nowhere belongs to none.
    const after = [system("sys", "sys"), human("task", "task"), new ToolMessage({ id: "late", content: "y".repeat(20), tool_call_id: "nowhere" })];
    expect(idsOf(await compactor().compact(after, 10, chars))).toEqual(["sys", "NOTE", "task"]);
    expect(await compactor().compact(after, 27, chars)).toBeNull();
  });

  test("the note stands right after the task when the task's own steps were trimmed", async () => {
    const messages = [system("sys", "sys"), human("old", "old"), ai("oldans", "oldans"), human("task", "task"), ai("s1", "s1..."), ai("s2", "s2...")];
    expect(idsOf(await compactor().compact(messages, 16, chars))).toEqual(["sys", "task", "NOTE", "s2"]);
    // Only history went: the note stands right after the instructions.
    expect(idsOf(await compactor().compact(messages, 17, chars))).toEqual(["sys", "NOTE", "task", "s1", "s2"]);
  });
});
