/**
 * `tiktokenCounter` on long runs, apart from the other counting tests because each run takes up to a
 * second: the mutation test sets leave this file out (see jest.mutation.config.ts).
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { Tiktoken } from "js-tiktoken/lite";
import type { TiktokenBPE } from "js-tiktoken/lite";
import { tiktokenCounter } from "../../src";
import { boundedTokenLength, CHUNK, nextHazard, SAMPLES } from "../../src/counting/bounded-encoding";
import { assertOnSeeds } from "../support/seeds";

/** OpenAI's chat framing: 3 tokens per message, 1 for the role. */
const FRAMING = 3 + 1;

// The ranks js-tiktoken ships, loaded here independently of the library.
/* eslint-disable @typescript-eslint/no-require-imports */
const ranks = (mod: { default?: TiktokenBPE } & TiktokenBPE): TiktokenBPE => mod.default ?? mod;
const reference = { o200k_base: new Tiktoken(ranks(require("js-tiktoken/ranks/o200k_base"))) };
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Issue 9 §5: a long run of one character, or of two alternating ones, is one
 * tiktoken piece whose exact BPE takes time quadratic in its length (4,000
 * spaces: seconds; 200,000 newlines: hours). The counter must count 200,000
 * characters of any such run with bounded work (no text longer than a chunk handed to the encoder, a few chunks
 * in all), within 25% of the true count.
 *
 * Ground truth without waiting hours: the exact count of a periodic run grows
 * linearly once the run is longer than the encoding's longest token for it, so
 * the reference encoder (loaded above, independently of the library) encodes
 * the same run at 400 and 800 characters exactly, and the line through those
 * two counts is extrapolated to 200,000. The line is checked against a third
 * exact point (1,200 characters) first, so a run whose count is not yet linear
 * fails the test instead of passing it on a bad reference.
 */
describe("tiktokenCounter on long runs of one or two characters", () => {
  const LONG = 200_000;
  const count = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;
  const exact = (unit: string, chars: number) => reference.o200k_base.encode(unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars)).length;

  function checkRun(unit: string): void {
    const at400 = exact(unit, 400);
    const at800 = exact(unit, 800);
    const slope = (at800 - at400) / 400;
    // The reference line must predict a third exact point, or it is no reference.
    expect(Math.abs(at800 + slope * 400 - exact(unit, 1_200))).toBeLessThanOrEqual(2 + 0.01 * at800);
    const truth = at800 + slope * (LONG - 800);
    const run = unit.repeat(Math.ceil(LONG / unit.length)).slice(0, LONG);
    // The cost is bounded by the work handed to the encoder, not timed (speed belongs in the bench): a text the
    // bounded counter asks tiktoken to encode either holds no long run (tiktoken splits it into short pieces itself,
    // as it does digits) or is at most a chunk long, and those chunks are a few in all, however long the run.
    const chunks: number[] = [];
    const recording = (text: string) => {
      if (nextHazard(text, 0) !== null) chunks.push(text.length);
      return reference.o200k_base.encode(text).length;
    };
    const bounded = boundedTokenLength(recording, run);
    expect(Math.max(0, ...chunks)).toBeLessThanOrEqual(CHUNK + 2);
    expect(chunks.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(SAMPLES * (CHUNK + 2));
    expect(Math.abs(bounded - truth)).toBeLessThanOrEqual(0.25 * truth);
    // The package's counter reads runs through the same bound.
    const tokens = count([new HumanMessage(run)]) - FRAMING;
    if (Math.abs(tokens - truth) > 0.25 * truth) {
      throw new Error(`${JSON.stringify(unit)} x ${LONG}: counted ${tokens}, true count about ${truth.toFixed(0)}`);
    }
  }

  test.each([" ", "\n", "\r\n", "\t", " \n", "\n\n\t", "/\n", "ab", "a", "=", "-=", ". ", "🙂", "1", "\u00a0", "\u3000"])(
    "%j repeated to 200,000 characters",
    (unit) => checkRun(unit),
  );

  test("any single character, or any two alternating characters, repeated to 200,000 characters", () => {
    // Whitespace and punctuation weigh more than their share of code points: they are where the old bound had holes.
    const char = fc.oneof(
      fc.constantFrom(" ", "\n", "\r", "\t", "\v", "\f", "\u2028", "\u00a0", ".", "/", "-", "*", "'", "\"", "0"),
      fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    );
    assertOnSeeds(
      fc.property(fc.oneof(char, fc.tuple(char, char).map(([a, b]) => a + b)), (unit) => checkRun(unit)),
      25,
    );
    // 25 runs of 200,000 characters, each up to three timed attempts: 57 s measured on a loaded machine.
  }, 120_000);
});
