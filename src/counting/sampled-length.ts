/**
 * Token lengths of very long texts by sampling.
 *
 * Exact BPE costs time in proportion to a text's length, and most of it for
 * high-entropy text (random base64, hex, minified JSON, CJK), whose pieces
 * are all different, so the memory of pieces seen (see `exact-length.ts`)
 * does not help: a base64 payload of a megabyte in one tool result costs as
 * much as js-tiktoken's own `encode` of it. So a text of at least
 * {@link SAMPLED_TEXT} characters is measured in part:
 *
 * - its long runs are hazards, counted as in any text (see
 *   `bounded-encoding.ts`); the rest, the stretches between them taken as
 *   one, is cut into strata of {@link STRATUM} characters, but at least
 *   {@link MIN_STRATA} of them (shorter ones for a shorter text, so that
 *   enough of it is read) and at most {@link MAX_STRATA} (longer ones for a
 *   longer text, so that the work per text is bounded);
 * - in each stratum, a window of {@link WINDOW} characters at a place chosen
 *   by a hash of the stratum's number (so that a text repeating with some
 *   period, such as JSON records or log lines, is not read at one phase of
 *   it) is measured exactly: the tokens of the pieces that begin in it, split
 *   as over the whole text (the pre-split starts a little before the
 *   window), so no piece is cut and none counted twice;
 * - each stratum is counted at its window's tokens per character.
 *
 * About one character in sixteen is encoded (more below 786,432 characters,
 * where the minimum of strata applies: three in four at the threshold). The
 * strata are small, so a text
 * that changes kind part way (prose, then a base64 payload, then JSON) is
 * counted at each part's own rate, and only the one stratum where it changes
 * is estimated from a mix. The count depends on the text alone. On 1 MB of
 * random base64, hex, minified JSON, CJK text, and texts mixing them with
 * prose, the tests hold it within 3% of exact encoding.
 */

import { boundedTokenSteps } from "./bounded-encoding";
import type { PieceLength } from "./exact-length";

/** Texts at least this long are sampled; shorter ones are measured exactly. */
export const SAMPLED_TEXT = 65_536;
/** The length of a stratum, between {@link MIN_STRATA} and {@link MAX_STRATA} of them. */
export const STRATUM = 4_096;
/** The characters measured in each stratum: one in sixteen of {@link STRATUM}. */
export const WINDOW = 256;
/** The fewest strata: a text near the threshold gets shorter ones, so that its count rests on enough windows. */
export const MIN_STRATA = 192;
/** The most strata: a longer text gets longer strata, so the work per text is bounded. */
export const MAX_STRATA = 4_096;
/** How far before a window the pre-split starts (longer than an ordinary piece: a longer run is a hazard). */
const LEAD = 64;
/** Windows measured between two pauses of the steps. */
const WINDOWS_PER_STEP = 2;

/** Where in its stratum window `stratum` begins, in `[0, room]`: scattered by the stratum's number, the same every time. */
function windowOffset(stratum: number, room: number): number {
  const scattered = Math.imul(stratum + 1, 0x9e3779b1) >>> 0;
  return Math.floor((scattered / 2 ** 32) * (room + 1));
}

/**
 * The stretches between a text's hazards, taken in one after the other as
 * one text of `length` characters (the text's own length bounds it), cut into
 * strata; each stratum's rate is measured in its window.
 */
class StratifiedSample {
  /** The length of a stratum (not a whole number of characters: the strata cut the text evenly). */
  private readonly stratum: number;
  /** Characters of the stretches taken in so far. */
  private taken = 0;
  /** The next stratum whose window is still to be measured. */
  private next = 0;
  /** Tokens per character of each stratum measured, in order. */
  private readonly rates: number[] = [];
  /** The rate at the very beginning, for a text whose stretches end before the first window (nearly all hazard). */
  private first = Number.NaN;

  constructor(
    private readonly exact: PieceLength,
    length: number,
  ) {
    this.stratum = length / Math.min(MAX_STRATA, Math.max(MIN_STRATA, Math.ceil(length / STRATUM)));
  }

  /** Takes in `stretch` (a part of the text holding no hazard): measures the windows that begin in it. */
  *take(stretch: string): Generator<void, number, void> {
    const start = this.taken;
    const end = start + stretch.length;
    if (Number.isNaN(this.first) && stretch.length > 0) {
      const to = Math.min(WINDOW, stretch.length);
      this.first = this.exact.measureStartingIn(stretch, 0, to, 0) / to;
    }
    let measured = 0;
    for (;;) {
      const from = Math.floor(this.next * this.stratum) + windowOffset(this.next, Math.floor(this.stratum) - WINDOW);
      if (from >= end) break;
      // A window that begins in an earlier stretch was measured there; one cut short by a hazard is measured as far as it goes.
      const local = from - start;
      const to = Math.min(local + WINDOW, stretch.length);
      this.rates.push(this.exact.measureStartingIn(stretch, local, to, LEAD) / (to - local));
      this.next += 1;
      measured += 1;
      if (measured % WINDOWS_PER_STEP === 0) yield;
    }
    this.taken = end;
    // Counted at the end, once every stratum has its rate.
    return 0;
  }

  /** The tokens of everything taken in: each stratum at its window's rate (a last stratum whose window lies past the end, at the one before). */
  estimate(): number {
    let tokens = 0;
    for (let k = 0; k * this.stratum < this.taken; k += 1) {
      const rate = this.rates[Math.min(k, this.rates.length - 1)] ?? this.first;
      tokens += rate * Math.min(this.stratum, this.taken - k * this.stratum);
    }
    return tokens;
  }
}

/**
 * The estimated tokens of `text` (of at least {@link SAMPLED_TEXT}
 * characters): hazards as `boundedTokenSteps` counts them, the rest sampled
 * (see the module comment); pauses (`yield`) as often as `boundedTokenSteps`,
 * so that the caller can count in slices.
 */
export function* sampledTokenSteps(exact: PieceLength, text: string): Generator<void, number, void> {
  const sample = new StratifiedSample(exact, text.length);
  const hazards = yield* boundedTokenSteps(exact, text, (stretch) => sample.take(stretch));
  return Math.max(1, Math.round(hazards + sample.estimate()));
}
