/**
 * Exact token lengths with a js-tiktoken encoder, for text the bounded
 * encoding does not cut (see `bounded-encoding.ts`).
 *
 * Two things differ from calling `encode(text)` directly:
 *
 * - Text that spells a special token (`<|endoftext|>`, `<|endofprompt|>`) is
 *   plain text here. `encode` throws on it by default, which would make one
 *   message about tokenizers fail every compaction; providers read such text
 *   in a user's or a tool's message as ordinary characters.
 * - A piece's length is looked up when it was seen before, in this text or
 *   an earlier one. Tiktoken splits text into pieces with its encoding's
 *   pattern and byte-pair-encodes each piece on its own, so a text's length
 *   is the sum of its pieces' lengths, and a piece's length depends on the
 *   piece alone. Words, keys, indentation and punctuation recur thousands of
 *   times across a conversation (and logs and tables within one text), and a
 *   piece costs far more to encode than to look up. A piece on its own splits into itself (the
 *   pattern's only lookahead, `\s+(?!\S)`, can only match more at the end of
 *   a string), so the sum is exactly what `encode` gives; the tests compare
 *   the two on random text.
 * - The pieces not seen before go to the encoder in one call, not one call each:
 *   js-tiktoken builds two regular expressions and a few sets on every
 *   `encode`, which cost more than a short piece's own encoding. The pieces
 *   are joined by `<|endoftext|>`,
 *   allowed as the special token: tiktoken splits the text at special tokens
 *   and encodes what lies between them on its own, so each piece's tokens
 *   are the ids between two separators (a special token's id is never one of
 *   a byte-pair encoding's). No piece can spell the separator, even in a text
 *   that does: the pre-split always parts symbols (`<|`, `|>`) from letters.
 * - A long text can be measured part by part
 *   ({@link PieceLength.measureFrom}): the pieces are those of the whole
 *   text (the pattern resumes where it stopped), so the sum is the same, and
 *   the caller may yield to the event loop between two parts.
 */

/** Encodes text to token ids (js-tiktoken's `Tiktoken#encode`). */
export interface Encoder {
  encode(text: string, allowedSpecial?: string[] | "all", disallowedSpecial?: string[] | "all"): number[];
}

/** The exact token length of a text. */
export type ExactLength = (text: string) => number;

/** What {@link PieceLength.measureFrom} measured: the tokens of the pieces read, and where the next piece begins (-1: none is left). */
export interface PiecesMeasured {
  tokens: number;
  next: number;
}

/** An {@link ExactLength} that can also measure a text part by part, and its pieces one by one. */
export interface PieceLength extends ExactLength {
  /**
   * The tokens of the pieces of `text` from the one that begins at `from` (0,
   * or a `next` it returned), up to the first that ends at least `chars`
   * characters past `from`.
   */
  measureFrom(text: string, from: number, chars: number): PiecesMeasured;
  /**
   * The tokens of the pieces of `text` that begin in `[from, to)`, the
   * pre-split started `lead` characters before `from` so that it finds the
   * same boundaries there as over the whole text (a piece is rarely longer).
   */
  measureStartingIn(text: string, from: number, to: number, lead: number): number;
}

/** No special token is allowed as one, and none is refused: their spellings are plain text. */
const NONE: string[] = [];

/**
 * How many pieces' lengths an encoder remembers across texts, and the longest
 * piece remembered. Words, keys and punctuation recur from one message to the
 * next, so most pieces of a conversation are looked up, not encoded; the
 * memory is forgotten whole when full (at most a few MB), and pieces longer
 * than this (rare, and rarely repeated) are encoded each time.
 */
export const REMEMBERED_PIECES = 50_000;
export const REMEMBERED_PIECE_LENGTH = 32;

/** Bumped to make every encoder's memory forget (checked at its next text), so no list of memories is kept. */
let forgetting = 0;

/** Forgets every piece length remembered (the next texts are encoded afresh). For benchmarks and tests. */
export function forgetRememberedPieces(): void {
  forgetting += 1;
}

/** Joins the distinct pieces of a text for one `encode` call: a special token of both shipped encodings. */
const SEPARATOR = "<|endoftext|>";

/** The exact token length of `text`, special-token spellings read as plain text. */
export function plainTokenLength(encoder: Encoder, text: string): number {
  return encoder.encode(text, NONE, NONE).length;
}

/**
 * An {@link ExactLength} for `encoder`, whose pre-split pattern is `pattern`
 * (the `pat_str` of the ranks it was built from): texts are measured piece by
 * piece, a piece seen before (in this text or an earlier one) looked up, the
 * others encoded once each, all of them in one `encode` call.
 */
export function exactTokenLength(encoder: Encoder, pattern: string): PieceLength {
  const pieces = new RegExp(pattern, "gu");
  const separator = encoder.encode(SEPARATOR, [SEPARATOR], NONE);
  const separatorId = separator.length === 1 ? separator[0]! : null;
  const known = new Map<string, number>();
  let forgotten = forgetting;
  const remember = (piece: string, tokens: number): void => {
    if (piece.length > REMEMBERED_PIECE_LENGTH) return;
    if (known.size >= REMEMBERED_PIECES) known.clear();
    known.set(piece, tokens);
  };
  // The pieces of one measurement not known yet, with how often each came: encoded together when it ends.
  // One map for every measurement: each runs to its end with nothing in between.
  const fresh = new Map<string, number>();
  /** The tokens of the pieces in `fresh`, encoded in one call (each remembered); empties it. */
  const encodeFresh = (): number => {
    if (fresh.size === 0) return 0;
    let tokens = 0;
    // An encoder without the separator as one token (no shipped one) is asked piece by piece.
    if (separatorId === null) {
      for (const [piece, count] of fresh) {
        const length = plainTokenLength(encoder, piece);
        remember(piece, length);
        tokens += count * length;
      }
      fresh.clear();
      return tokens;
    }
    const distinct = [...fresh.keys()];
    const ids = encoder.encode(distinct.join(SEPARATOR), [SEPARATOR], NONE);
    let index = 0;
    let run = 0;
    for (let k = 0; k <= ids.length; k += 1) {
      if (k < ids.length && ids[k] !== separatorId) {
        run += 1;
        continue;
      }
      const piece = distinct[index]!;
      remember(piece, run);
      tokens += run * fresh.get(piece)!;
      index += 1;
      run = 0;
    }
    fresh.clear();
    return tokens;
  };
  /** The tokens of `piece` when known; otherwise 0, and it is counted in `fresh`. */
  const lookUp = (piece: string): number => {
    const length = known.get(piece);
    if (length !== undefined) return length;
    fresh.set(piece, (fresh.get(piece) ?? 0) + 1);
    return 0;
  };
  const forgetIfAsked = (): void => {
    if (forgotten !== forgetting) {
      known.clear();
      forgotten = forgetting;
    }
  };
  const measureFrom = (text: string, from: number, chars: number): PiecesMeasured => {
    forgetIfAsked();
    fresh.clear();
    let tokens = 0;
    const stop = from + chars;
    pieces.lastIndex = from;
    let match = pieces.exec(text);
    while (match !== null) {
      tokens += lookUp(match[0]);
      if (pieces.lastIndex >= stop) break;
      match = pieces.exec(text);
    }
    // Stopped part way: the next piece begins where this one ended (the pattern matches no empty piece).
    const next = match === null || pieces.lastIndex >= text.length ? -1 : pieces.lastIndex;
    return { tokens: tokens + encodeFresh(), next };
  };
  const measureStartingIn = (text: string, from: number, to: number, lead: number): number => {
    forgetIfAsked();
    fresh.clear();
    let tokens = 0;
    pieces.lastIndex = Math.max(0, from - lead);
    for (let match = pieces.exec(text); match !== null && match.index < to; match = pieces.exec(text)) {
      if (match.index >= from) tokens += lookUp(match[0]);
    }
    return tokens + encodeFresh();
  };
  // The whole text: the loop of `measureFrom` without its stop, the hot path of every count.
  const length = (text: string): number => {
    forgetIfAsked();
    if (fresh.size > 0) fresh.clear();
    let tokens = 0;
    pieces.lastIndex = 0;
    for (let match = pieces.exec(text); match !== null; match = pieces.exec(text)) {
      const piece = match[0];
      const length = known.get(piece);
      if (length !== undefined) tokens += length;
      else fresh.set(piece, (fresh.get(piece) ?? 0) + 1);
    }
    return fresh.size === 0 ? tokens : tokens + encodeFresh();
  };
  return Object.assign(length, { measureFrom, measureStartingIn });
}
