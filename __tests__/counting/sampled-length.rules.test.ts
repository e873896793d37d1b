/**
 * Issue 31 §6: any text of any size counts. The rules of `src/counting/sampled-length.ts` (which windows of a long
 * text are measured, and how a count is made of them), read through a recording stand-in for the exact length; the
 * run finder of `bounded-encoding.ts`, which keeps no stack that grows with the text; and the steps a long text is
 * counted in, which give the counter's own number. Accuracy on 1 MB texts against js-tiktoken is in
 * `long-texts.test.ts` (slow).
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { tiktokenCounter } from "../../src";
import { boundedTokenLength, HAZARD_PART, HAZARD_RUN, nextHazard } from "../../src/counting/bounded-encoding";
import type { PieceLength, PiecesMeasured } from "../../src/counting/exact-length";
import { MAX_STRATA, MIN_STRATA, SAMPLED_TEXT, sampledTokenSteps, STRATUM, WINDOW } from "../../src/counting/sampled-length";
import { offlineEncoder, offlineTokenLength, slicedCountOf, STEPPED_TEXT, textTokenSteps } from "../../src/counting/tiktoken";
import { runToEnd, setSliceMs } from "../../src/time-slices";
import { randomString, seededRandom } from "../../bench/conversations";
import { assertOnSeeds } from "../support/seeds";

const FRAMING = 4; // 3 per message + 1 for the role
const count = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** 4,000,000 characters made of `unit`. */
const fourMillion = (unit: string) => unit.repeat(Math.ceil(4_000_000 / unit.length)).slice(0, 4_000_000);

describe("no stack grows with the text", () => {
  // Each of these threw "Maximum call stack size exceeded" (a regular expression's backtracking stack) before.
  test.each([
    ["one CJK character", "中"],
    ["one Thai character", "ก"],
    ["one letter", "a"],
    ["spaces", " "],
    ["newlines", "\n"],
    ["emoji (surrogate pairs)", "🙂"],
    ["two alternating letters", "ab"],
    ["Thai with a combining mark", "กั"],
  ])("4,000,000 characters of %s are counted", (_name, unit) => {
    const text = fourMillion(unit);
    const tokens = count([new HumanMessage(text)]);
    expect(Number.isInteger(tokens)).toBe(true);
    expect(tokens).toBeGreaterThan(FRAMING);
    // The run finder itself: the whole text is one run, found in bounded parts.
    expect(nextHazard(text, 0)).toEqual([0, text.length]);
  });

  test("4,000,000 random CJK characters in one run, and a CJK run between two texts, are counted", () => {
    const random = seededRandom(31);
    let cjk = "";
    for (let i = 0; i < 4_000_000; i += 1) cjk += String.fromCharCode(0x4e00 + Math.floor(random() * 20_000));
    expect(count([new HumanMessage(cjk)])).toBeGreaterThan(4_000_000 * 0.5);
    const between = `before 123 ${cjk} 456 after`;
    expect(nextHazard(between, 0)).toEqual([11, 11 + cjk.length]);
    // The exact path (no sampling) finds the run too, and counts it as a hazard.
    expect(boundedTokenLength(offlineTokenLength("o200k_base"), between)).toBeGreaterThan(4_000_000 * 0.5);
  });
});

describe("the run finder finds what one unbounded pattern finds", () => {
  // The module comment's definition of a hazard, written out again with no bound on a run's length.
  const unbounded = new RegExp(`[\\p{L}\\p{M}]{${HAZARD_RUN},}|[^\\p{L}\\p{M}\\p{N}]{${HAZARD_RUN},}`, "gu");
  const allRuns = (text: string): [number, number][] => [...text.matchAll(unbounded)].map((match) => [match.index, match.index + match[0].length]);
  const found = (text: string): [number, number][] => {
    const runs: [number, number][] = [];
    for (let hazard = nextHazard(text, 0); hazard !== null; hazard = nextHazard(text, hazard[1])) runs.push(hazard);
    return runs;
  };

  test("on random texts with runs shorter and longer than one bounded match (HAZARD_PART)", () => {
    const unit = fc.constantFrom("a", "Q", "é", "中", "\u0301", "7", "=", " ", "\n", "🙂", "_");
    // Runs up to three bounded matches long, and runs ending exactly at a multiple of HAZARD_PART.
    const length = fc.oneof(fc.integer({ min: 1, max: HAZARD_RUN + 4 }), fc.integer({ min: HAZARD_PART - 3, max: 3 * HAZARD_PART + 3 }), fc.constantFrom(HAZARD_PART, 2 * HAZARD_PART));
    const run = fc.tuple(unit, length).map(([u, times]) => u.repeat(times));
    let long = 0;
    assertOnSeeds(
      fc.property(fc.array(fc.oneof(unit, run), { maxLength: 12 }), (parts) => {
        const text = parts.join("");
        const expected = allRuns(text);
        if (expected.some(([start, end]) => end - start > HAZARD_PART)) long += 1;
        expect(found(text)).toEqual(expected);
      }),
      60,
    );
    expect(long).toBeGreaterThan(5);
  });
});

/** A stand-in exact length: `rate(position)` tokens per character, recording every window measured. */
function recordingLength(rate: (position: number) => number = () => 1): PieceLength & { windows: [number, number, number][]; texts: string[] } {
  const windows: [number, number, number][] = [];
  const texts: string[] = [];
  const sum = (from: number, to: number) => {
    let tokens = 0;
    for (let i = from; i < to; i += 1) tokens += rate(i);
    return tokens;
  };
  const exact = (text: string): number => {
    texts.push(text);
    return text.length;
  };
  const measureFrom = (text: string, from: number): PiecesMeasured => ({ tokens: exact(text.slice(from)), next: -1 });
  const measureStartingIn = (_text: string, from: number, to: number, lead: number): number => {
    windows.push([from, to, lead]);
    return sum(from, to);
  };
  return Object.assign(exact, { measureFrom, measureStartingIn, windows, texts });
}

/** A text of `length` characters with no hazard (no run of letters or of other characters reaches HAZARD_RUN). */
const ordinary = (length: number) => "ab1 ".repeat(Math.ceil(length / 4)).slice(0, length);

/** The strata the module comment promises for a text of `length` characters (with no hazard). */
function strataOf(length: number): number {
  return Math.min(MAX_STRATA, Math.max(MIN_STRATA, Math.ceil(length / STRATUM)));
}

describe("sampling a long text (sampled-length.ts)", () => {
  test("one window of WINDOW characters in each stratum, the pre-split started before it; besides, the first WINDOW characters", () => {
    for (const length of [SAMPLED_TEXT, 300_001, 1_048_576]) {
      const exact = recordingLength();
      runToEnd(sampledTokenSteps(exact, ordinary(length)));
      const [first, ...windows] = exact.windows;
      expect(first).toEqual([0, WINDOW, 0]);
      const strata = strataOf(length);
      expect(windows).toHaveLength(strata);
      const stratum = length / strata;
      windows.forEach(([from, to, lead], k) => {
        expect(to - from).toBe(WINDOW);
        expect(lead).toBeGreaterThan(0);
        expect(from).toBeGreaterThanOrEqual(Math.floor(k * stratum));
        expect(to).toBeLessThanOrEqual(Math.floor((k + 1) * stratum) + 1);
      });
      // Scattered: the windows do not all sit at one offset in their strata.
      expect(new Set(windows.map(([from], k) => from - Math.floor(k * stratum))).size).toBeGreaterThan(strata / 4);
      // Nothing is measured whole.
      expect(exact.texts).toEqual([]);
    }
  });

  test("about one character in sixteen is measured, up to three in four at the threshold; the strata are bounded for any length", () => {
    const measured = (length: number) => {
      const exact = recordingLength();
      runToEnd(sampledTokenSteps(exact, ordinary(length)));
      return { chars: exact.windows.reduce((sum, [from, to]) => sum + to - from, 0), windows: exact.windows.length };
    };
    expect(measured(SAMPLED_TEXT).chars).toBeLessThanOrEqual((SAMPLED_TEXT * 3) / 4 + WINDOW);
    const mega = 2 * STRATUM * MIN_STRATA;
    expect(measured(mega).chars).toBeLessThanOrEqual(mega / 16 + WINDOW);
    const huge = STRATUM * MAX_STRATA * 2;
    expect(measured(huge).windows).toBe(MAX_STRATA + 1);
  });

  test("each stratum is counted at its own window's rate: a text whose rate changes part way is counted at each part's", () => {
    const length = 400_000;
    // 3 tokens a character in the first quarter, 1 after it.
    const changing = recordingLength((position) => (position < length / 4 ? 3 : 1));
    const tokens = runToEnd(sampledTokenSteps(changing, ordinary(length)));
    const truth = 3 * (length / 4) + length * (3 / 4);
    // Only the stratum where the rate changes is estimated from a mix.
    expect(Math.abs(tokens - truth)).toBeLessThanOrEqual(2 * (length / strataOf(length)));
    // A uniform rate is extrapolated exactly.
    expect(runToEnd(sampledTokenSteps(recordingLength(() => 2), ordinary(length)))).toBe(2 * length);
  });

  test("the same text gets the same windows and the same count every time", () => {
    const text = randomString(seededRandom(7), B64, 200_000);
    const a = recordingLength();
    const b = recordingLength();
    runToEnd(sampledTokenSteps(a, text));
    runToEnd(sampledTokenSteps(b, text));
    expect(b.windows).toEqual(a.windows);
    expect(count([new HumanMessage(text)])).toBe(count([new HumanMessage(text)]));
  });

  test("a long run is a hazard, counted by its own rule; the windows lie in the text around it", () => {
    const before = ordinary(100_000);
    const after = ordinary(60_000);
    const run = "=".repeat(50_000);
    const exact = recordingLength();
    runToEnd(sampledTokenSteps(exact, `${before}${run}${after}`));
    // The hazard's samples are measured as texts of its own characters, never through a window.
    expect(exact.texts.length).toBeGreaterThan(0);
    expect(exact.texts.every((text) => /^ ?=+$/.test(text))).toBe(true); // the space before the run is part of it
    // Windows are positions in the stretch they were measured in (the text before the run, then the text after it),
    // and the strata are laid over those stretches alone: the run takes up none of them.
    const [, ...windows] = exact.windows;
    const switchAt = windows.findIndex(([from], k) => k > 0 && from < windows[k - 1]![0]);
    expect(switchAt).toBeGreaterThan(0);
    for (const [, to] of windows.slice(0, switchAt)) expect(to).toBeLessThanOrEqual(before.length);
    for (const [, to] of windows.slice(switchAt)) expect(to).toBeLessThanOrEqual(after.length);
    const stratum = (before.length + run.length + after.length) / strataOf(before.length + run.length + after.length);
    expect(Math.abs(windows.length - (before.length + after.length) / stratum)).toBeLessThanOrEqual(1);
  });
});

describe("the counter's rule: exact below SAMPLED_TEXT, the steps give the same count", () => {
  const encoder = offlineEncoder("o200k_base");
  const exact = offlineTokenLength("o200k_base");

  test("a text one character shorter than SAMPLED_TEXT is counted exactly (base64, and prose with a special token's spelling)", () => {
    const base64 = randomString(seededRandom(3), B64, SAMPLED_TEXT - 1);
    expect(count([new HumanMessage(base64)])).toBe(FRAMING + encoder.encode(base64, [], []).length);
    const prose = "The report is ready <|endoftext|> and the logs follow. 17 lines. ".repeat(2_000).slice(0, SAMPLED_TEXT - 1);
    expect(count([new HumanMessage(prose)])).toBe(FRAMING + encoder.encode(prose, [], []).length);
  });

  test("from SAMPLED_TEXT on, a text is sampled: fewer characters reach the encoder than the text holds", () => {
    const asked: string[] = [];
    const recording = Object.assign((text: string) => exact(text), {
      measureFrom: exact.measureFrom,
      measureStartingIn: (text: string, from: number, to: number, lead: number) => {
        asked.push(text.slice(from, to));
        return exact.measureStartingIn(text, from, to, lead);
      },
    });
    const text = randomString(seededRandom(4), B64, SAMPLED_TEXT);
    runToEnd(textTokenSteps(recording, text));
    const chars = asked.reduce((sum, window) => sum + window.length, 0);
    expect(chars).toBeGreaterThan(0);
    expect(chars).toBeLessThanOrEqual((SAMPLED_TEXT * 3) / 4 + WINDOW);
  });

  test("counted in time slices (a promise when a long text does not fit the slice), a message's count is the counter's own", async () => {
    const counting = slicedCountOf(count)!;
    expect(counting).toBeDefined();
    const texts = [randomString(seededRandom(5), B64, SAMPLED_TEXT * 3), randomString(seededRandom(6), B64, STEPPED_TEXT * 3), `${"=".repeat(5_000)} and ${"中".repeat(20_000)}`];
    const previous = setSliceMs(0);
    try {
      for (const text of texts) {
        const message = new HumanMessage({ content: [{ type: "text", text }, { type: "text", text: "a short one" }] });
        const sliced = counting(message);
        // Every step's check finds the slice used up: the count goes on in later slices.
        expect(sliced).toBeInstanceOf(Promise);
        expect(await sliced).toBe(count([message]));
      }
      // A message of short texts is counted at once, whatever the slice.
      expect(counting(new HumanMessage("short"))).toBe(count([new HumanMessage("short")]));
    } finally {
      setSliceMs(previous);
    }
  });
});
