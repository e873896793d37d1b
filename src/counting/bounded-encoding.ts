/**
 * Bounded BPE counting.
 *
 * js-tiktoken merges each pre-split piece in time quadratic in its length, so
 * one long piece (a run of letters such as "aaaa…", an unbroken CJK paragraph,
 * a row of "=====", 4,000 spaces, a tool result of newlines) takes seconds to
 * hours: 10,000 repeated letters take about 5 s, 4,000 spaces 3 s. Tiktoken's
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
 *   character. That costs the same few milliseconds whatever the run's length; on
 *   repeated characters, random letters and symbol runs the test suite holds
 *   it within 10% of exact encoding.
 *
 * So a text's cost is bounded by its length (for the exact part) plus a fixed
 * cost per hazard: a 200,000-character run is counted in a few milliseconds.
 */

import type { ExactLength } from "./exact-length";

export const HAZARD_RUN = 48;
export const CHUNK = 128;
export const EXACT_HAZARD_LIMIT = 1024;
export const SAMPLES = 8;

// Letters and combining marks form one tiktoken piece; so do whitespace, symbols, and mixes of the two.
const HAZARD = new RegExp(`[\\p{L}\\p{M}]{${HAZARD_RUN},}|[^\\p{L}\\p{M}\\p{N}]{${HAZARD_RUN},}`, "gu");

/** A cut at `at` that does not split a surrogate pair (which would encode as two replacement characters). */
function cutAt(run: string, at: number): number {
  if (at <= 0 || at >= run.length) return Math.max(0, Math.min(at, run.length));
  const code = run.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at;
}

function chunkedCount(exact: ExactLength, run: string): number {
  let tokens = 0;
  for (let start = 0; start < run.length; ) {
    const end = cutAt(run, start + CHUNK);
    tokens += exact(run.slice(start, end));
    start = end;
  }
  return tokens;
}

function sampledCount(exact: ExactLength, run: string): number {
  const stride = (run.length - CHUNK) / (SAMPLES - 1);
  let sampledTokens = 0;
  let sampledChars = 0;
  for (let i = 0; i < SAMPLES; i += 1) {
    const start = cutAt(run, Math.round(i * stride));
    const sample = run.slice(start, cutAt(run, start + CHUNK));
    sampledTokens += exact(sample);
    sampledChars += sample.length;
  }
  return Math.max(1, Math.round((run.length * sampledTokens) / sampledChars));
}

function hazardCount(exact: ExactLength, run: string): number {
  return run.length <= EXACT_HAZARD_LIMIT ? chunkedCount(exact, run) : sampledCount(exact, run);
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
  if (text.length < HAZARD_RUN || !mayHoldHazard(text)) return exact(text);
  HAZARD.lastIndex = 0;
  let match = HAZARD.exec(text);
  if (match === null) return exact(text);
  let tokens = 0;
  let cursor = 0;
  while (match !== null) {
    if (match.index > cursor) tokens += exact(text.slice(cursor, match.index));
    tokens += hazardCount(exact, match[0]);
    cursor = match.index + match[0].length;
    match = HAZARD.exec(text);
  }
  if (cursor < text.length) tokens += exact(text.slice(cursor));
  return tokens;
}
