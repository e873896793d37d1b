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
 * - A long text's repeated pieces are encoded once. Tiktoken splits text into
 *   pieces with its encoding's pattern and byte-pair-encodes each piece on
 *   its own, so a text's length is the sum of its pieces' lengths; logs,
 *   tables and runs of two alternating characters repeat a few pieces
 *   thousands of times, and each piece costs far more to encode than to look
 *   up. A piece on its own splits into itself (the pattern's only lookahead,
 *   `\s+(?!\S)`, can only match more at the end of a string), so the sum is
 *   exactly what `encode` gives; the tests compare the two on random text.
 * - Those distinct pieces go to the encoder in one call, not one call each:
 *   js-tiktoken builds two regular expressions and a few sets on every
 *   `encode`, which cost more than a short piece's own encoding (a third of a
 *   tiktoken count, measured). The pieces are joined by `<|endoftext|>`,
 *   allowed as the special token: tiktoken splits the text at special tokens
 *   and encodes what lies between them on its own, so each piece's tokens
 *   are the ids between two separators (a special token's id is never one of
 *   a byte-pair encoding's). No piece can spell the separator, even in a text
 *   that does: the pre-split always parts symbols (`<|`, `|>`) from letters.
 */

/** Encodes text to token ids (js-tiktoken's `Tiktoken#encode`). */
export interface Encoder {
  encode(text: string, allowedSpecial?: string[] | "all", disallowedSpecial?: string[] | "all"): number[];
}

/** The exact token length of a text. */
export type ExactLength = (text: string) => number;

/** No special token is allowed as one, and none is refused: their spellings are plain text. */
const NONE: string[] = [];

/** Texts shorter than this are encoded whole: a map of their few pieces would cost more than it saves. */
const REUSE_PIECES_FROM = 512;

/** Joins the distinct pieces of a text for one `encode` call: a special token of both shipped encodings. */
const SEPARATOR = "<|endoftext|>";

/** The exact token length of `text`, special-token spellings read as plain text. */
export function plainTokenLength(encoder: Encoder, text: string): number {
  return encoder.encode(text, NONE, NONE).length;
}

/**
 * An {@link ExactLength} for `encoder`, whose pre-split pattern is `pattern`
 * (the `pat_str` of the ranks it was built from): long texts are measured
 * piece by piece, each distinct piece encoded once per text, all of them in
 * one `encode` call.
 */
export function exactTokenLength(encoder: Encoder, pattern: string): ExactLength {
  const pieces = new RegExp(pattern, "gu");
  const separator = encoder.encode(SEPARATOR, [SEPARATOR], NONE);
  const separatorId = separator.length === 1 ? separator[0]! : null;
  // An encoder without the separator as one token (no shipped one) is asked piece by piece.
  return (text) => {
    if (text.length < REUSE_PIECES_FROM) return plainTokenLength(encoder, text);
    const times = new Map<string, number>();
    pieces.lastIndex = 0;
    for (let match = pieces.exec(text); match !== null; match = pieces.exec(text)) {
      const piece = match[0];
      times.set(piece, (times.get(piece) ?? 0) + 1);
    }
    if (separatorId === null) {
      let tokens = 0;
      for (const [piece, count] of times) tokens += count * plainTokenLength(encoder, piece);
      return tokens;
    }
    const repeats = [...times.values()];
    const ids = encoder.encode([...times.keys()].join(SEPARATOR), [SEPARATOR], NONE);
    let tokens = 0;
    let index = 0;
    let run = 0;
    for (const id of ids) {
      if (id === separatorId) {
        tokens += run * repeats[index]!;
        index += 1;
        run = 0;
      } else run += 1;
    }
    return tokens + run * repeats[index]!;
  };
}
