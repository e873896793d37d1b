/**
 * Bounded BPE counting.
 *
 * js-tiktoken merges each pre-split piece in time quadratic in its length, so
 * one long piece (a run of letters such as "aaaa…", an unbroken CJK paragraph,
 * a row of "=====", thousands of spaces, a tool result of newlines) takes
 * seconds to hours. Tiktoken's
 * own pre-split already breaks base64, hex, JSON, code and prose into short
 * pieces at digits, case changes, punctuation and spaces, so those are counted
 * exactly and quickly. A long piece is either letters (and combining marks,
 * after at most one other character) or made of no letter and no digit at
 * all: whitespace runs (`\s+`, `\s*[\r\n]+`), symbol runs, and symbols
 * followed by newlines and slashes (`[^\s\p{L}\p{N}]+[\r\n/]*`). So the
 * *hazards* handled here are runs of at least {@link HAZARD_RUN} letters, or
 * of {@link HAZARD_RUN} characters that are neither letters nor digits
 * (spaces, tabs, newlines, CRLF, symbols, emoji, and any mix of them), which
 * covers every run of one repeated character or two alternating ones:
 *
 * - a hazard of up to {@link EXACT_HAZARD_LIMIT} characters is cut into
 *   {@link CHUNK}-character chunks, each encoded on its own (a cut can change
 *   the count by about one token, so the error is about 1 token per
 *   {@link CHUNK} characters of the run, under 1%);
 * - a longer hazard is sampled: {@link SAMPLES} evenly spaced chunks are
 *   encoded and the run's count is extrapolated from their tokens per
 *   character. That costs the same whatever the run's length; on
 *   repeated characters, random letters and symbol runs the test suite holds
 *   it within 10% of exact encoding.
 *
 * So a text's cost is bounded by its length (for the exact part) plus a fixed
 * cost per hazard, whatever the hazard's length.
 *
 * Runs are found with patterns whose repetition is bounded
 * ({@link HAZARD_PART} characters a match) and continued match by match: a
 * regular expression keeps one backtracking entry per character a repetition
 * took, so one unbounded match over millions of letters (an unbroken CJK or
 * Thai text) overflowed the stack. Nothing here recurses or keeps state that
 * grows with the text.
 */

import { runToEnd } from "../time-slices";
import type { ExactLength, PieceLength } from "./exact-length";

export const HAZARD_RUN = 48;
export const CHUNK = 128;
export const EXACT_HAZARD_LIMIT = 1024;
export const SAMPLES = 8;
/** The most characters one match of a run pattern takes; a longer run is continued by further matches. */
export const HAZARD_PART = 4096;
/** Characters of ordinary text (the pieces covering them) measured between two points where the steps below pause. */
export const CHARS_PER_STEP = 512;

// Letters and combining marks form one tiktoken piece; so do whitespace, symbols, and mixes of the two.
const LETTERS = "[\\p{L}\\p{M}]";
const OTHERS = "[^\\p{L}\\p{M}\\p{N}]";
const HAZARD = new RegExp(`${LETTERS}{${HAZARD_RUN},${HAZARD_PART}}|${OTHERS}{${HAZARD_RUN},${HAZARD_PART}}`, "gu");
const MORE_LETTERS = new RegExp(`${LETTERS}{1,${HAZARD_PART}}`, "uy");
const MORE_OTHERS = new RegExp(`${OTHERS}{1,${HAZARD_PART}}`, "uy");
const STARTS_WITH_LETTER = new RegExp(`^${LETTERS}`, "u");

/**
 * The first hazard at or after `from`, as `[start, end)`, or `null`: the
 * same runs one unbounded pattern would find (the longest run of letters, or
 * of neither letters nor digits, of at least {@link HAZARD_RUN} characters).
 */
export function nextHazard(text: string, from: number): [number, number] | null {
  HAZARD.lastIndex = from;
  const match = HAZARD.exec(text);
  if (match === null) return null;
  const start = match.index;
  const end = start + match[0].length;
  return [start, match[0].length < HAZARD_PART ? end : runEnd(text, end, STARTS_WITH_LETTER.test(match[0]))];
}

/** Where a run of letters (`letters`) or of neither letters nor digits, going on at `at`, ends. */
function runEnd(text: string, at: number, letters: boolean): number {
  const more = letters ? MORE_LETTERS : MORE_OTHERS;
  let end = at;
  for (;;) {
    more.lastIndex = end;
    const next = more.exec(text);
    if (next === null) return end;
    end += next[0].length;
    if (next[0].length < HAZARD_PART) return end;
  }
}

/** A cut at `at` that does not split a surrogate pair (which would encode as two replacement characters). */
function cutAt(run: string, at: number): number {
  if (at <= 0 || at >= run.length) return Math.max(0, Math.min(at, run.length));
  const code = run.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at;
}

// Each chunk is one step: a chunk of CJK or Thai letters is one piece of 300 bytes or more, whose encoding takes milliseconds.
function* chunkedSteps(exact: ExactLength, run: string): Generator<void, number, void> {
  let tokens = 0;
  for (let start = 0; start < run.length; ) {
    const end = cutAt(run, start + CHUNK);
    tokens += exact(run.slice(start, end));
    start = end;
    yield;
  }
  return tokens;
}

function* sampledSteps(exact: ExactLength, run: string): Generator<void, number, void> {
  const stride = (run.length - CHUNK) / (SAMPLES - 1);
  let sampledTokens = 0;
  let sampledChars = 0;
  for (let i = 0; i < SAMPLES; i += 1) {
    const start = cutAt(run, Math.round(i * stride));
    const sample = run.slice(start, cutAt(run, start + CHUNK));
    sampledTokens += exact(sample);
    sampledChars += sample.length;
    yield;
  }
  return Math.max(1, Math.round((run.length * sampledTokens) / sampledChars));
}

/** The tokens of one hazard, in steps: chunked up to {@link EXACT_HAZARD_LIMIT} characters, sampled beyond (see the module comment). */
export function hazardSteps(exact: ExactLength, run: string): Generator<void, number, void> {
  return run.length <= EXACT_HAZARD_LIMIT ? chunkedSteps(exact, run) : sampledSteps(exact, run);
}

/**
 * Whether `text` may hold a hazard: a cheap scan of its UTF-16 units that
 * never answers `false` when {@link HAZARD} would match. ASCII letters
 * extend a letter run, digits end both runs, other ASCII characters extend a
 * symbol run, and a non-ASCII unit (a letter, a mark, a digit or a symbol:
 * not known without Unicode's tables) extends both. Most text (prose, code,
 * JSON, base64) has neither run this long, and the pattern is not needed.
 */
export function mayHoldHazard(text: string): boolean {
  let letters = 0;
  let others = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) {
      letters += 1;
      others += 1;
    } else if ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a) {
      letters += 1;
      others = 0;
    } else if (code >= 0x30 && code <= 0x39) {
      letters = 0;
      others = 0;
    } else {
      others += 1;
      letters = 0;
    }
    if (letters >= HAZARD_RUN || others >= HAZARD_RUN) return true;
  }
  return false;
}

/** The number of tokens in `text`, measured by `exact` unless it holds a hazard (see the module comment). */
export function boundedTokenLength(exact: ExactLength, text: string): number {
  // Most texts hold no hazard: measured at once, without the steps' generator.
  if (text.length < HAZARD_RUN || !mayHoldHazard(text)) return exact(text);
  // Each stretch between hazards measured whole: in one go, a pause between parts would only cost more encoder calls.
  return runToEnd(boundedTokenSteps(exact, text, function* (stretch) {
    return exact(stretch);
  }));
}

/**
 * {@link boundedTokenLength}, pausing (`yield`) after each hazard chunk or
 * sample and every {@link CHARS_PER_STEP} characters of the text between
 * hazards, so that a caller can count a long text a slice at a time (see
 * `time-slices.ts`). The stretches between hazards are measured by
 * `stretchSteps` (exactly, unless the caller samples them).
 */
export function* boundedTokenSteps(
  exact: ExactLength,
  text: string,
  stretchSteps: (stretch: string) => Generator<void, number, void> = (stretch) => exactSteps(exact, stretch),
): Generator<void, number, void> {
  if (text.length < HAZARD_RUN || !mayHoldHazard(text)) return yield* stretchSteps(text);
  let tokens = 0;
  let cursor = 0;
  for (let hazard = nextHazard(text, 0); hazard !== null; hazard = nextHazard(text, cursor)) {
    const [start, end] = hazard;
    if (start > cursor) tokens += yield* stretchSteps(text.slice(cursor, start));
    tokens += yield* hazardSteps(exact, text.slice(start, end));
    cursor = end;
  }
  if (cursor === 0) return yield* stretchSteps(text);
  if (cursor < text.length) tokens += yield* stretchSteps(text.slice(cursor));
  return tokens;
}

/**
 * The exact length of `text` (holding no hazard), in steps of
 * {@link CHARS_PER_STEP} characters; an `exact` that cannot measure part of a
 * text (no `measureFrom`, as the tests' stand-ins) measures it in one.
 */
export function* exactSteps(exact: ExactLength, text: string): Generator<void, number, void> {
  const measureFrom = (exact as Partial<PieceLength>).measureFrom;
  if (measureFrom === undefined) return exact(text);
  let tokens = 0;
  for (let from = 0; ; ) {
    const measured = measureFrom(text, from, CHARS_PER_STEP);
    tokens += measured.tokens;
    if (measured.next < 0) return tokens;
    from = measured.next;
    yield;
  }
}
