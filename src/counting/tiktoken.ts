import type { BaseMessage } from "@langchain/core/messages";
import { Tiktoken } from "js-tiktoken/lite";
import type { TiktokenBPE } from "js-tiktoken/lite";
import { runInSlices, runToEnd } from "../time-slices";
import { IMAGE_BLOCK_TOKENS } from "./approximate";
import { boundedTokenLength, boundedTokenSteps } from "./bounded-encoding";
import { exactTokenLength } from "./exact-length";
import type { PieceLength } from "./exact-length";
import { SAMPLED_TEXT, sampledTokenSteps } from "./sampled-length";
import { visitMessageText } from "./text";
import type { TokenCounter } from "./types";

/** The encodings whose ranks js-tiktoken ships, so they load with no network. */
export type TiktokenEncodingName = "o200k_base" | "cl100k_base";

/**
 * Per-message framing of OpenAI's chat format: every message costs three
 * tokens plus its role (one token for each role name), and a `name` one more.
 * The three tokens that prime the reply are charged once per request, not per
 * message, so they belong in the request overhead (see `CompactionHook`), not
 * here: this counter stays additive over messages.
 */
const TOKENS_PER_MESSAGE = 3;
const ROLE_TOKENS = 1;
const NAME_TOKENS = 1;

function loadRanks(encoding: TiktokenEncodingName): TiktokenBPE {
  // Static requires so bundlers see them; each ships inside js-tiktoken, nothing is downloaded.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const mod: { default?: TiktokenBPE } & TiktokenBPE =
    encoding === "o200k_base" ? require("js-tiktoken/ranks/o200k_base") : require("js-tiktoken/ranks/cl100k_base");
  /* eslint-enable @typescript-eslint/no-require-imports */
  return mod.default ?? mod;
}

/**
 * Texts at least this long are counted in steps, which the compactors run in
 * time slices (see `time-slices.ts`); a shorter one is counted at once (at
 * most a few milliseconds, even for high-entropy text).
 */
export const STEPPED_TEXT = 4_096;

interface LoadedEncoding {
  encoder: Tiktoken;
  exact: PieceLength;
}

/** One message's tokens: at once, or in steps that a compaction runs in time slices. */
export type MessageCountInSlices = (message: BaseMessage, signal?: AbortSignal) => number | Promise<number>;

const encodings = new Map<TiktokenEncodingName, LoadedEncoding>();
const counters = new Map<TiktokenEncodingName, TokenCounter>();
/** The built-in counters, each with its count of one message in slices (see {@link slicedCountOf}). */
const inSlices = new WeakMap<object, MessageCountInSlices>();

function loadedEncoding(encoding: TiktokenEncodingName): LoadedEncoding {
  let loaded = encodings.get(encoding);
  if (!loaded) {
    const ranks = loadRanks(encoding);
    const encoder = new Tiktoken(ranks);
    loaded = { encoder, exact: exactTokenLength(encoder, ranks.pat_str) };
    encodings.set(encoding, loaded);
  }
  return loaded;
}

/** The js-tiktoken encoder for `encoding`, loaded once from the ranks the package ships. */
export function offlineEncoder(encoding: TiktokenEncodingName = "o200k_base"): Tiktoken {
  return loadedEncoding(encoding).encoder;
}

/** The exact token length of a text in `encoding` (special-token spellings are plain text, see `exact-length.ts`). */
export function offlineTokenLength(encoding: TiktokenEncodingName = "o200k_base"): PieceLength {
  return loadedEncoding(encoding).exact;
}

/**
 * The tokens of one text, in steps: exact below {@link SAMPLED_TEXT}
 * characters (long runs bounded, see `bounded-encoding.ts`), sampled from
 * that length on (see `sampled-length.ts`).
 */
export function textTokenSteps(exact: PieceLength, text: string): Generator<void, number, void> {
  return text.length >= SAMPLED_TEXT ? sampledTokenSteps(exact, text) : boundedTokenSteps(exact, text);
}

/** {@link textTokenSteps} at once (a text under SAMPLED_TEXT measured whole: steps would only cost more encoder calls). */
function textTokenLength(exact: PieceLength, text: string): number {
  return text.length >= SAMPLED_TEXT ? runToEnd(sampledTokenSteps(exact, text)) : boundedTokenLength(exact, text);
}

/** The tokens of `texts` added to `tokens`, in steps. */
function* longTextsSteps(exact: PieceLength, texts: readonly string[], tokens: number): Generator<void, number, void> {
  for (const text of texts) {
    tokens += yield* textTokenSteps(exact, text);
    yield;
  }
  return tokens;
}

/**
 * The count of one message by the built-in counter `counter` in time slices,
 * or `undefined` for any other counter. It returns the same number as
 * `counter([message])`; when a long text does not fit in the running slice,
 * a promise of it, counted in later slices. (Used by `MessageCounts`; not
 * exported from the package.)
 */
export function slicedCountOf(counter: unknown): MessageCountInSlices | undefined {
  return typeof counter === "function" ? inSlices.get(counter) : undefined;
}

/**
 * An offline, tool-call-aware counter using js-tiktoken with the ranks it
 * ships (`o200k_base` for GPT-4o and later, `cl100k_base` for GPT-4 and
 * GPT-3.5). Counts what {@link approximateTokenCounter} counts, with OpenAI's
 * per-message framing.
 *
 * Exact, with two bounds on the time one text can take:
 * - a text shorter than 65,536 characters (`SAMPLED_TEXT`) is counted
 *   exactly, except that long runs of letters, whitespace or symbols (one
 *   tiktoken piece, whose encoding costs time quadratic in its length) are
 *   counted in chunks or sampled (see `bounded-encoding.ts`);
 * - a longer text (a file dump, a base64 payload) is sampled: its long runs
 *   as above, and of the rest one window of 256 characters in each stratum
 *   of 4,096 (shorter strata near 65,536 characters) is encoded, the pieces
 *   that begin in it whole, and each stratum is counted at its window's rate
 *   (see `sampled-length.ts`). About a sixteenth of such a text is encoded.
 *   The tests hold these counts within 3% of exact encoding on 1 MB of random
 *   base64, hex, minified JSON, CJK text and mixed text, and on mixed texts
 *   from 65,536 characters on (they are within 1% on most); `npm run bench`
 *   times them against js-tiktoken's `encode`.
 *
 * No recursion and no stack grows with a text: a text of millions of
 * characters of one script (CJK, Thai) is counted like any other.
 *
 * Called directly, it returns a number. Inside a compactor, a text of 4,096
 * characters or more is counted in steps that run in time slices, so that a
 * long payload does not hold the event loop (the count is the same).
 *
 * The same function is returned for the same encoding, so the compactor's
 * count cache is shared by every caller.
 */
export function tiktokenCounter(encoding: TiktokenEncodingName = "o200k_base"): TokenCounter {
  if (encoding !== "o200k_base" && encoding !== "cl100k_base") {
    throw new RangeError(`tiktokenCounter: encoding must be "o200k_base" or "cl100k_base", got ${JSON.stringify(encoding)}`);
  }
  const existing = counters.get(encoding);
  if (existing) return existing;
  const exact = offlineTokenLength(encoding);
  /** The message's tokens: its short texts counted here, its long ones (if any) by `countLong`, added to `tokens`. */
  const countMessage = <T>(message: BaseMessage, countLong: (texts: string[], tokens: number) => T): number | T => {
    let tokens = TOKENS_PER_MESSAGE + ROLE_TOKENS;
    let long: string[] | null = null;
    if (typeof message.name === "string" && message.name.length > 0) tokens += NAME_TOKENS;
    visitMessageText(message, {
      text(value) {
        if (value.length >= STEPPED_TEXT) (long ??= []).push(value);
        else if (value.length > 0) tokens += boundedTokenLength(exact, value);
      },
      image() {
        tokens += IMAGE_BLOCK_TOKENS;
      },
    });
    return long === null ? tokens : countLong(long, tokens);
  };
  const countLongAtOnce = (long: string[], tokens: number): number => long.reduce((sum, text) => sum + textTokenLength(exact, text), tokens);
  const counter: TokenCounter = (messages) => {
    let total = 0;
    for (const message of messages) total += countMessage(message, countLongAtOnce);
    return total;
  };
  Object.defineProperty(counter, "name", { value: `tiktokenCounter(${encoding})` });
  counters.set(encoding, counter);
  inSlices.set(counter, (message, signal) => countMessage(message, (long, tokens) => runInSlices(longTextsSteps(exact, long, tokens), signal)));
  return counter;
}
