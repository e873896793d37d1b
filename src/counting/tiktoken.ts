import type { BaseMessage } from "@langchain/core/messages";
import { Tiktoken } from "js-tiktoken/lite";
import type { TiktokenBPE } from "js-tiktoken/lite";
import { IMAGE_BLOCK_TOKENS } from "./approximate";
import { boundedTokenLength } from "./bounded-encoding";
import { exactTokenLength } from "./exact-length";
import type { ExactLength } from "./exact-length";
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

interface LoadedEncoding {
  encoder: Tiktoken;
  exact: ExactLength;
}

const encodings = new Map<TiktokenEncodingName, LoadedEncoding>();
const counters = new Map<TiktokenEncodingName, TokenCounter>();

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
export function offlineTokenLength(encoding: TiktokenEncodingName = "o200k_base"): ExactLength {
  return loadedEncoding(encoding).exact;
}

/**
 * An exact, offline, tool-call-aware counter using js-tiktoken with the ranks
 * it ships (`o200k_base` for GPT-4o and later, `cl100k_base` for GPT-4 and
 * GPT-3.5). Counts what {@link approximateTokenCounter} counts, with OpenAI's
 * per-message framing; long runs (of letters, whitespace, symbols) are counted in bounded
 * time (see `boundedTokenLength`).
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
  const countMessage = (message: BaseMessage): number => {
    let tokens = TOKENS_PER_MESSAGE + ROLE_TOKENS;
    if (typeof message.name === "string" && message.name.length > 0) tokens += NAME_TOKENS;
    visitMessageText(message, {
      text(value) {
        if (value.length > 0) tokens += boundedTokenLength(exact, value);
      },
      image() {
        tokens += IMAGE_BLOCK_TOKENS;
      },
    });
    return tokens;
  };
  const counter: TokenCounter = (messages) => {
    let total = 0;
    for (const message of messages) total += countMessage(message);
    return total;
  };
  Object.defineProperty(counter, "name", { value: `tiktokenCounter(${encoding})` });
  counters.set(encoding, counter);
  return counter;
}
