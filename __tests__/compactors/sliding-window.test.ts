/**
 * Behaviours of `SlidingWindowCompactor`, one test each, on real
 * `@langchain/core` messages. Expected results are worked out from the rules
 * in the comments (with a counter whose counts can be read off the messages),
 * never recorded from the code's output.
 */
import {
  AIMessage,
  BaseMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { load } from "@langchain/core/load";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";
import {
  approximateTokenCounter,
  omissionNoteMetadata,
  DEFAULT_OMISSION_NOTE,
  isOmissionNote,
  SlidingWindowCompactor,
  tiktokenCounter,
  TokenCounterError,
} from "../../src";
import type { TokenCounter, TokenCountingModel } from "../../src";
import { assertProviderValid, randomConversation, snapshotMessages } from "../support/conversations";
// A message's tokens are the length of its string content: sizes can be read off the test data.
import { lengthCounter, x } from "../support/stages";

const system = (n = 10, label = "S") => new SystemMessage(x(n, label));
const human = (n = 10, label = "H") => new HumanMessage(x(n, label));
const answer = (n = 10, label = "A") => new AIMessage(x(n, label));
const calling = (ids: string[], n = 10) =>
  new AIMessage({ content: x(n, "C"), tool_calls: ids.map((id) => ({ id, name: "lookup", args: { id }, type: "tool_call" as const })) });
const result = (id: string, n = 10) => new ToolMessage({ tool_call_id: id, content: x(n, "T") });
const defaultNote = (removed: number) => DEFAULT_OMISSION_NOTE.split("{num_removed}").join(String(removed));

/** Asserts `actual` is `expected` element by element, where `"NOTE"` stands for a fresh omission note. */
function expectKept(actual: BaseMessage[] | null, expected: (BaseMessage | "NOTE")[]): HumanMessage | undefined {
  expect(actual).not.toBeNull();
  expect(actual!.length).toBe(expected.length);
  let note: HumanMessage | undefined;
  expected.forEach((want, i) => {
    if (want === "NOTE") {
      expect(isOmissionNote(actual![i])).toBe(true);
      note = actual![i] as HumanMessage;
    } else {
      expect(actual![i]).toBe(want);
    }
  });
  return note;
}

describe("what is removed", () => {
  test("replaces the oldest turn", async () => {
    const [S, H1, A1, H2, A2, H3] = [system(), human(), answer(), human(), answer(), human()];
    // total 60; available = 50 - (S + H3) = 30; no steps; turns newest first: (H2,A2) 20 fits, (H1,A1) would make 40.
    const out = await new SlidingWindowCompactor().compact([S, H1, A1, H2, A2, H3], 50, lengthCounter);
    const note = expectKept(out, [S, "NOTE", H2, A2, H3])!;
    expect(note.content).toBe(defaultNote(2));
    expect(omissionNoteMetadata(note)).toEqual({ strategy: "sliding_window", removed_messages: 2, kept_messages: 4 });
  });

  test("replaces the oldest step (and every history turn)", async () => {
    const [S, H0, A0, H] = [system(), human(), answer(), human()];
    const [C1, T1, C2, T2, F] = [calling(["c1"]), result("c1"), calling(["c2"]), result("c2"), answer()];
    // total 90; available = 60 - 20 = 40; steps 20 + 20 + 10 = 50 > 40: turns go;
    // newest first F (10), (C2,T2) (30 so far) fit, (C1,T1) would make 50.
    const out = await new SlidingWindowCompactor().compact([S, H0, A0, H, C1, T1, C2, T2, F], 60, lengthCounter);
    const note = expectKept(out, [S, H, "NOTE", C2, T2, F])!;
    expect(omissionNoteMetadata(note)).toEqual({ strategy: "sliding_window", removed_messages: 4, kept_messages: 5 });
    assertProviderValid(out!);
  });

  test("folds an earlier note into the new one: at most one note, removed_messages cumulative", async () => {
    const [S, H1, A1, H2, A2, H3] = [system(), human(), answer(), human(), answer(), human()];
    const compactor = new SlidingWindowCompactor();
    const first = await compactor.compact([S, H1, A1, H2, A2, H3], 50, lengthCounter);
    const firstNote = expectKept(first, [S, "NOTE", H2, A2, H3]);
    const [A3, H4] = [answer(), human()];
    const next = [...first!, A3, H4];
    // available = 40 - (S + H4) = 20; turns newest first: (H3,A3) 20 fits; (H2,A2) would make 40. The first note always goes.
    const second = await compactor.compact(next, 40, lengthCounter);
    const note = expectKept(second, [S, "NOTE", H3, A3, H4])!;
    expect(note).not.toBe(firstNote);
    expect(second!.filter((m) => isOmissionNote(m))).toHaveLength(1);
    // 2 folded from the first note + H2, A2.
    expect(omissionNoteMetadata(note)).toEqual({ strategy: "sliding_window", removed_messages: 4, kept_messages: 4 });
    expect(note.content).toBe(defaultNote(4));
  });

  test("folds two earlier notes, wherever they stand, into one", async () => {
    const earlier = (removed: number) =>
      new HumanMessage({
        content: `[${removed} gone]`,
        response_metadata: { compaction: { strategy: "sliding_window", removed_messages: removed, kept_messages: 1 } },
      });
    const [S, N1, H1, A1, H, N2, C, T, F] = [system(), earlier(3), human(), answer(), human(), earlier(5), calling(["k"]), result("k"), answer()];
    // Steps (C,T) 20 + F 10 = 30 > available 35 - 20 = 15: keep F (10); (C,T) would make 30. Notes, H1, A1, C, T go.
    const out = await new SlidingWindowCompactor().compact([S, N1, H1, A1, H, N2, C, T, F], 35, lengthCounter);
    const note = expectKept(out, [S, H, "NOTE", F])!;
    expect(omissionNoteMetadata(note)!.removed_messages).toBe(3 + 5 + 4);
  });

  test("parallel tool calls stay together with their results", async () => {
    const [S, H] = [system(), human()];
    const [P, Ta, Tb, Tc, F] = [calling(["a", "b", "c"]), result("a"), result("b"), result("c"), answer()];
    const list = [S, H, P, Ta, Tb, Tc, F];
    // Steps: (P,Ta,Tb,Tc) 40, F 10. Target 69: available 49 < 50, so the parallel step goes whole,
    // although P with one or two of its results would fit.
    const out = await new SlidingWindowCompactor().compact(list, 69, lengthCounter);
    expectKept(out, [S, H, "NOTE", F]);
    assertProviderValid(out!);
    // With minKeepSteps 2 it stays whole: all four, and nothing else goes, so nothing changes.
    expect(await new SlidingWindowCompactor({ minKeepSteps: 2 }).compact(list, 69, lengthCounter)).toBeNull();
    // In history: a turn with parallel calls is kept or removed whole.
    const [H1, P1, R1a, R1b, A1, H2] = [human(), calling(["p", "q"]), result("p"), result("q"), answer(), human()];
    const history = await new SlidingWindowCompactor().compact([S, H1, P1, R1a, R1b, A1, H2], 69, lengthCounter);
    // available 49; the turn is 50 tokens: it goes whole.
    expectKept(history, [S, "NOTE", H2]);
  });

  describe.each([
    [0, 0],
    [1, 1],
    [2, 2],
    [20, 2],
    [1, 3],
    [0, 2],
  ])("minKeepSteps %i with %i steps and an unaffordable target", (minKeepSteps, stepCount) => {
    test("keeps the newest min(minKeepSteps, steps) steps whatever their size", async () => {
      const [S, H0, A0, H] = [system(), human(), answer(), human()];
      const steps = Array.from({ length: stepCount }, (_, i) => [calling([`s${i}`], 100), result(`s${i}`, 100)]);
      const list = [S, H0, A0, H, ...steps.flat()];
      for (const target of [0, 15]) {
        // Target below the protected 20 tokens: no step fits, so exactly min(minKeepSteps, steps) stay (the rules, step 5).
        const kept = Math.min(minKeepSteps, stepCount);
        const trimmed = kept < stepCount;
        const keptSteps = steps.slice(stepCount - kept).flat();
        const out = await new SlidingWindowCompactor({ minKeepSteps }).compact(list, target, lengthCounter);
        const expected: (BaseMessage | "NOTE")[] = trimmed ? [S, H, "NOTE", ...keptSteps] : [S, "NOTE", H, ...keptSteps];
        const note = expectKept(out, expected)!;
        expect(omissionNoteMetadata(note)!.removed_messages).toBe(2 + 2 * (stepCount - kept));
        if (kept > 0) expect(lengthCounter(out!.filter((m) => m !== note))).toBeGreaterThan(target);
        assertProviderValid(out!);
      }
    });
  });

  test('a custom note: "Gone: {other} x{num_removed}" becomes "Gone: {other} x2"', async () => {
    const [S, H1, A1, H2, A2, H3] = [system(), human(), answer(), human(), answer(), human()];
    const list = [S, H1, A1, H2, A2, H3];
    const note = (template: string) =>
      new SlidingWindowCompactor({ omissionNote: template }).compact(list, 50, lengthCounter).then((out) => out![1]!.content);
    expect(await note("Gone: {other} x{num_removed}")).toBe("Gone: {other} x2");
    expect(await note("{num_removed}/{num_removed} {{num_removed}}")).toBe("2/2 {2}");
    expect(await note("History trimmed.")).toBe("History trimmed.");
  });
});

describe("when nothing changes", () => {
  const [S, H1, A1, H2, A2, H3] = [system(), human(), answer(), human(), answer(), human()];
  const list = [S, H1, A1, H2, A2, H3]; // 60 tokens

  test("null when the list fits (exactly at the target, and below it)", async () => {
    const compactor = new SlidingWindowCompactor();
    expect(await compactor.compact(list, 60, lengthCounter)).toBeNull();
    expect(await compactor.compact(list, 1_000, lengthCounter)).toBeNull();
    expect(await compactor.compact(list, 59, lengthCounter)).not.toBeNull();
    expect(await compactor.compact([], 0, lengthCounter)).toBeNull();
  });

  test("null when nothing is removable (only protected messages and required steps)", async () => {
    const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });
    expect(await compactor.compact([system(), human()], 0, lengthCounter)).toBeNull();
    expect(await compactor.compact([human()], 0, lengthCounter)).toBeNull();
    expect(await compactor.compact([system(), system(), human(), calling(["z"]), result("z")], 0, lengthCounter)).toBeNull();
  });

  test("null when the only removable messages are earlier notes", async () => {
    const earlier = new HumanMessage({
      content: "[7 gone]",
      response_metadata: { compaction: { strategy: "sliding_window", removed_messages: 7, kept_messages: 2 } },
    });
    const compactor = new SlidingWindowCompactor();
    expect(await compactor.compact([system(), earlier, human()], 0, lengthCounter)).toBeNull();
    expect(await compactor.compact([system(), earlier, human(), answer()], 0, lengthCounter)).toBeNull();
    const report = await compactor.compactWithReport([system(), earlier, human()], 0, lengthCounter);
    expect(report).toMatchObject({ messages: null, removed: [], note: null });
  });

  test.each([null, ""])("note disabled (%p) returns the kept messages, without a note", async (omissionNote) => {
    const out = await new SlidingWindowCompactor({ omissionNote }).compact(list, 50, lengthCounter);
    expectKept(out, [S, H2, A2, H3]);
    expect(out!.some((m) => isOmissionNote(m))).toBe(false);
  });
});

describe("note placement", () => {
  test("right after a two-message system block when only history went", async () => {
    const [S1, S2, H1, A1, H2] = [system(10, "S1"), system(10, "S2"), human(), answer(), human()];
    expectKept(await new SlidingWindowCompactor().compact([S1, S2, H1, A1, H2], 30, lengthCounter), [S1, S2, "NOTE", H2]);
  });

  test("first when there is no system block", async () => {
    const [H1, A1, H2] = [human(), answer(), human()];
    expectKept(await new SlidingWindowCompactor().compact([H1, A1, H2], 10, lengthCounter), ["NOTE", H2]);
  });

  test("right after the task message when steps were trimmed", async () => {
    const [S1, S2, H, C, T, F] = [system(10, "S1"), system(10, "S2"), human(), calling(["c"]), result("c"), answer()];
    // available = 45 - 30 = 15 < 30 of steps; F fits, (C,T) does not.
    expectKept(await new SlidingWindowCompactor().compact([S1, S2, H, C, T, F], 45, lengthCounter), [S1, S2, H, "NOTE", F]);
  });

  test("after the system block when there is no task message", async () => {
    const [S, C, T, F] = [system(), calling(["c"]), result("c"), answer()];
    expectKept(await new SlidingWindowCompactor().compact([S, C, T, F], 20, lengthCounter), [S, "NOTE", F]);
  });
});

describe("note metadata", () => {
  async function freshNote(): Promise<{ note: HumanMessage; out: BaseMessage[] }> {
    const [S, H1, A1, H2, A2, H3] = [system(), human(), answer(), human(), answer(), human()];
    const out = (await new SlidingWindowCompactor().compact([S, H1, A1, H2, A2, H3], 50, lengthCounter))!;
    return { note: out[1] as HumanMessage, out };
  }
  const expectedMeta = { strategy: "sliding_window", removed_messages: 2, kept_messages: 4 };

  test("survives JSON.stringify and load()", async () => {
    const { note } = await freshNote();
    const json = JSON.parse(JSON.stringify(note)) as { kwargs: { response_metadata: { compaction: unknown } } };
    expect(json.kwargs.response_metadata.compaction).toEqual(expectedMeta);
    const revived = (await load(JSON.stringify(note))) as BaseMessage;
    expect(isOmissionNote(revived)).toBe(true);
    expect(omissionNoteMetadata(revived)).toEqual(expectedMeta);
  });

  test("survives mapChatMessagesToStoredMessages / mapStoredMessagesToChatMessages, and is folded afterwards", async () => {
    const { out } = await freshNote();
    const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(out)));
    const revived = mapStoredMessagesToChatMessages(stored);
    expect(isOmissionNote(revived[1])).toBe(true);
    expect(omissionNoteMetadata(revived[1]!)).toEqual(expectedMeta);
    expect(revived.filter((m) => isOmissionNote(m))).toHaveLength(1);
    // The revived note is still a note: it is folded, not taken for the user's task.
    const again = await new SlidingWindowCompactor().compact([...revived, answer(), human()], 40, lengthCounter);
    expect(again!.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(omissionNoteMetadata(again![1]!)!.removed_messages).toBe(2 + 2);
  });

  test("is not sent to a provider as an unknown field", async () => {
    const { note } = await freshNote();
    const completions = convertMessagesToCompletionsMessageParams({ messages: [note] });
    expect(JSON.stringify(completions)).not.toContain("compaction");
    expect(completions).toEqual([{ role: "user", content: note.content }]);
    const responses = convertMessagesToResponsesInput({ messages: [note], zdrEnabled: false, model: "gpt-4o" });
    expect(JSON.stringify(responses)).not.toContain("compaction");
  });

  test("a human message with the same text is not a note, and is the user's task", async () => {
    const { note } = await freshNote();
    const lookAlike = new HumanMessage(note.content as string);
    expect(isOmissionNote(note)).toBe(true);
    expect(isOmissionNote(lookAlike)).toBe(false);
    expect(isOmissionNote(new AIMessage({ content: "x", response_metadata: note.response_metadata }))).toBe(false);
    expect(isOmissionNote({ type: "human", response_metadata: note.response_metadata })).toBe(false);
    const [S, H1, A1] = [system(), human(), answer()];
    // The look-alike is the latest real human message: the anchor, kept.
    const out = await new SlidingWindowCompactor().compact([S, H1, A1, lookAlike], 20, lengthCounter);
    expectKept(out, [S, "NOTE", lookAlike]);
  });
});

describe("tool results grouped by tool_call_id", () => {
  test("out-of-order results of parallel calls stay with their call", async () => {
    const [S, H] = [system(), human()];
    const [P, Tc, Ta, Tb, F] = [calling(["a", "b", "c"]), result("c"), result("a"), result("b"), answer()];
    const list = [S, H, P, Tc, Ta, Tb, F];
    expectKept(await new SlidingWindowCompactor().compact(list, 50, lengthCounter), [S, H, "NOTE", F]);
    expect(await new SlidingWindowCompactor({ minKeepSteps: 2 }).compact(list, 50, lengthCounter)).toBeNull();
  });

  test("results with other messages between them and their call still belong to it", async () => {
    const [S, H] = [system(), human()];
    const [P, Tb, Thinking, Ta, F] = [calling(["a", "b"]), result("b"), answer(10, "thinking"), result("a"), answer()];
    // Steps: (P,Tb,Ta) 30, Thinking 10, F 10. available = 45 - 20 = 25: F, Thinking fit (20); the call step would make 50.
    const out = await new SlidingWindowCompactor().compact([S, H, P, Tb, Thinking, Ta, F], 45, lengthCounter);
    const note = expectKept(out, [S, H, "NOTE", Thinking, F])!;
    expect(omissionNoteMetadata(note)!.removed_messages).toBe(3);
    assertProviderValid(out!);
  });

  test("a result without an id falls back to the call it immediately follows", async () => {
    const [S, H, C, T, F] = [system(), human(), calling(["c"]), new ToolMessage({ tool_call_id: "", content: x(10) }), answer()];
    expectKept(await new SlidingWindowCompactor().compact([S, H, C, T, F], 35, lengthCounter), [S, H, "NOTE", F]);
    expect(await new SlidingWindowCompactor({ minKeepSteps: 2 }).compact([S, H, C, T, F], 35, lengthCounter)).toBeNull();
  });

  test("a result answering no call is removed whenever compacting", async () => {
    const [S, H1, A1, H, Orphan, F] = [system(), human(), answer(), human(), result("nobody"), answer()];
    // Total 60 > 55. Steps: F 10; available 55 - 20 = 35; turn (H1,A1) 20 fits in the 25 left: only the orphan goes.
    const out = await new SlidingWindowCompactor().compact([S, H1, A1, H, Orphan, F], 55, lengthCounter);
    expectKept(out, [S, "NOTE", H1, A1, H, F]);
    assertProviderValid(out!);
  });
});

describe("the input", () => {
  test("array and messages are not mutated, and no ids are written", async () => {
    for (let seed = 1; seed <= 25; seed += 1) {
      const { messages } = randomConversation(seed);
      const before = snapshotMessages(messages);
      const compactor = new SlidingWindowCompactor({ minKeepSteps: seed % 3 });
      const total = approximateTokenCounter(messages);
      for (const target of [0, Math.floor(total / 3), Math.floor(total / 2), total]) {
        await compactor.compact(messages, target);
        await compactor.compactWithReport(messages, target, tiktokenCounter());
        await compactor.compact(messages, target, async (m: BaseMessage[]) => approximateTokenCounter(m));
      }
      expect(snapshotMessages(messages)).toStrictEqual(before);
      expect(messages.every((m) => m.id === undefined)).toBe(true);
    }
  });

  test("kept messages are the same objects, in their original order", async () => {
    for (let seed = 100; seed < 130; seed += 1) {
      const { messages } = randomConversation(seed);
      const out = await new SlidingWindowCompactor().compact(messages, Math.floor(approximateTokenCounter(messages) / 2));
      if (out === null) continue;
      const kept = out.filter((m) => !isOmissionNote(m));
      const positions = kept.map((m) => messages.indexOf(m));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    }
  });
});

describe("bad input", () => {
  const list = () => [system(), human(), answer(), human()];

  test.each([
    [-1, "-1", RangeError],
    [1.5, "1.5", RangeError],
    ["2", '"2"', TypeError],
    [Number.NaN, "NaN", RangeError],
  ])("minKeepSteps %p: a typed error naming the value (TypeError for a non-number, RangeError out of range)", (value, shown, type) => {
    expect(() => new SlidingWindowCompactor({ minKeepSteps: value as number })).toThrow(type);
    expect(() => new SlidingWindowCompactor({ minKeepSteps: value as number })).toThrow(`minKeepSteps\` must be a whole number of at least 0, got ${shown}`);
  });

  test("messages not an array, or an element not a BaseMessage: TypeError naming the index", async () => {
    const compactor = new SlidingWindowCompactor();
    await expect(compactor.compact("hello" as unknown as BaseMessage[], 10)).rejects.toThrow(TypeError);
    await expect(compactor.compact(undefined as unknown as BaseMessage[], 10)).rejects.toThrow(/messages/);
    const withPlain = [system(), { role: "user", content: "hi" }] as unknown as BaseMessage[];
    await expect(compactor.compact(withPlain, 10)).rejects.toThrow(TypeError);
    await expect(compactor.compact(withPlain, 10)).rejects.toThrow(/messages\[1\]/);
    await expect(compactor.compact([human(), human(), null] as unknown as BaseMessage[], 10)).rejects.toThrow(/messages\[2\].*null/);
  });

  test.each([
    [Number.NaN, "NaN", RangeError],
    [Number.POSITIVE_INFINITY, "Infinity", RangeError],
    [-1, "-1", RangeError],
    ["100", '"100"', TypeError],
  ])("targetTokens %p: a typed error naming the value (TypeError for a non-number, RangeError out of range)", async (target, shown, type) => {
    const messages = list();
    const before = snapshotMessages(messages);
    const call = new SlidingWindowCompactor().compact(messages, target as number, lengthCounter);
    await expect(call).rejects.toThrow(type);
    await expect(new SlidingWindowCompactor().compact(messages, target as number)).rejects.toThrow(`got ${shown}`);
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });

  test("a counter that throws: TokenCounterError with the cause and the index; input untouched", async () => {
    const messages = list();
    const before = snapshotMessages(messages);
    const boom = new Error("counter exploded");
    const failOnThird: TokenCounter = (ms) => {
      if (ms.some((m) => m === messages[2])) throw boom;
      return lengthCounter(ms);
    };
    const error = await new SlidingWindowCompactor({ cache: null }).compact(messages, 5, failOnThird).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenCounterError);
    expect((error as TokenCounterError).cause).toBe(boom);
    expect((error as TokenCounterError).index).toBe(2);
    expect((error as Error).message).toContain("counter exploded");
    const rejecting = async (): Promise<number> => {
      throw boom;
    };
    await expect(new SlidingWindowCompactor({ cache: null }).compact(messages, 5, rejecting)).rejects.toThrow(TokenCounterError);
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });

  test.each([
    [Number.NaN, RangeError, "NaN"],
    [-1, RangeError, "-1"],
    [Number.POSITIVE_INFINITY, RangeError, "Infinity"],
    ["x", TypeError, '"x"'],
  ])("a counter returning %p: an error naming the result; input untouched", async (value, ErrorType, shown) => {
    const messages = list();
    const before = snapshotMessages(messages);
    const bad = (() => value) as unknown as TokenCounter;
    const badAsync = (async () => value) as unknown as TokenCounter;
    for (const counter of [bad, badAsync]) {
      const error = await new SlidingWindowCompactor({ cache: null }).compact(messages, 5, counter).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorType);
      expect((error as Error).message).toContain(`returned ${shown}`);
    }
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });

  test("a tokenCounter that is neither a function nor a model: TypeError", async () => {
    await expect(new SlidingWindowCompactor().compact(list(), 5, {} as unknown as TokenCounter)).rejects.toThrow(TypeError);
  });
});

describe("counters", () => {
  test("an async counter gives the same result as the sync one", async () => {
    const async: TokenCounter = async (ms) => approximateTokenCounter(ms);
    for (let seed = 200; seed < 240; seed += 1) {
      const { messages } = randomConversation(seed);
      const total = approximateTokenCounter(messages);
      for (const target of [0, Math.floor(total / 4), Math.floor((total * 3) / 4)]) {
        const compactor = new SlidingWindowCompactor({ cache: null, minKeepSteps: seed % 3 });
        const sync = await compactor.compact(messages, target, approximateTokenCounter);
        const viaAsync = await compactor.compact(messages, target, async);
        expect(viaAsync === null).toBe(sync === null);
        if (sync === null) continue;
        expect(viaAsync!.length).toBe(sync.length);
        sync.forEach((m, i) => (isOmissionNote(m) ? expect(viaAsync![i]!.content).toBe(m.content) : expect(viaAsync![i]).toBe(m)));
      }
    }
  });

  test("a model-like counter { getNumTokens } that needs no network", async () => {
    const seen: unknown[] = [];
    /** Stands in for a chat model: like BaseLanguageModel it counts message content, here at 4 characters a token. */
    class TinyModel implements TokenCountingModel {
      getNumTokens(content: BaseMessage["content"]): number {
        seen.push(content);
        const text = typeof content === "string" ? content : JSON.stringify(content);
        return Math.ceil(text.length / 4);
      }
    }
    const byContent = (ms: BaseMessage[]): number =>
      ms.reduce((sum, m) => sum + Math.ceil((typeof m.content === "string" ? m.content : JSON.stringify(m.content)).length / 4), 0);
    for (let seed = 300; seed < 320; seed += 1) {
      const { messages } = randomConversation(seed);
      const target = Math.floor(byContent(messages) / 2);
      const viaModel = await new SlidingWindowCompactor({ cache: null }).compact(messages, target, new TinyModel());
      const viaFunction = await new SlidingWindowCompactor({ cache: null }).compact(messages, target, byContent);
      expect(viaModel?.map((m) => (isOmissionNote(m) ? m.content : m))).toEqual(
        viaFunction?.map((m) => (isOmissionNote(m) ? m.content : m)),
      );
    }
    // The model was given message content, as trimMessages gives it.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((c) => typeof c === "string" || Array.isArray(c))).toBe(true);
    // An async getNumTokens works the same.
    const { messages } = randomConversation(301);
    const target = Math.floor(byContent(messages) / 2);
    const asyncModel = { getNumTokens: async (c: BaseMessage["content"]) => new TinyModel().getNumTokens(c) };
    const a = await new SlidingWindowCompactor({ cache: null }).compact(messages, target, asyncModel);
    const b = await new SlidingWindowCompactor({ cache: null }).compact(messages, target, byContent);
    // The same messages kept, the very objects in the same order, and the same note text.
    expect(a).not.toBeNull();
    expect(a!.map((m) => (isOmissionNote(m) ? m.content : m))).toEqual(b!.map((m) => (isOmissionNote(m) ? m.content : m)));
    a!.forEach((m, i) => {
      if (!isOmissionNote(m)) expect(m).toBe(b![i]);
    });
  });
});
