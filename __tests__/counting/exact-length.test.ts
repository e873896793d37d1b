/**
 * Exact token lengths (src/counting/exact-length.ts): measuring a text piece
 * by piece, each piece encoded once (or looked up, when an earlier text had
 * it), gives exactly what
 * js-tiktoken's own `encode` gives; and text spelling a special token is
 * counted as plain text instead of throwing.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { SlidingWindowCompactor, tiktokenCounter } from "../../src";
import type { TiktokenEncodingName } from "../../src";
import { offlineEncoder, offlineTokenLength } from "../../src/counting/tiktoken";
import { assertOnSeeds } from "../support/seeds";

const ENCODINGS: TiktokenEncodingName[] = ["o200k_base", "cl100k_base"];
// Special tokens of both encodings (cl100k_base has a few more).
const SPECIALS = ["<|endoftext|>", "<|endofprompt|>"];
const BUDGET = 200;

// Pieces where tiktoken's pre-split is most sensitive to context: whitespace before words, newlines,
// contractions, digits, case changes, symbols, non-BMP characters, and special-token spellings.
const fragment = fc.oneof(
  fc.constantFrom(" ", "  ", "   ", "\n", "\n\n", " \n ", "\r\n", "\t", "\u00a0", "'s", "'LL", "don't", "123456", "x1", "ABCdef", "==>", "/* */", "🙂", "\u{53d3c}", "\u{88411}", "<|fim_prefix|>", "<|im_start|>", ...SPECIALS),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.string({ unit: "binary", maxLength: 4 }),
  fc.stringMatching(/^[a-zA-Z]{1,10}$/),
);
// Long and repetitive like logs (pieces repeat within a text), and short (pieces repeat across texts).
const shortText = fc.array(fragment, { maxLength: 8 }).map((parts) => parts.join(""));
const longText = fc
  .tuple(fc.array(fragment, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 60 }), fc.array(fragment, { maxLength: 10 }))
  .map(([unit, times, tail]) => (unit.join("").repeat(times) + tail.join("")).padEnd(600, "z"));

describe.each(ENCODINGS)("%s", (encoding) => {
  const encoder = offlineEncoder(encoding);
  const exact = offlineTokenLength(encoding);

  test("piece by piece equals encoding the whole text, on random long texts", () => {
    assertOnSeeds(
      fc.property(longText, (text) => {
        expect(exact(text)).toBe(encoder.encode(text, [], []).length);
      }),
      BUDGET,
    );
  });

  test("piece by piece, with the pieces of earlier texts remembered, equals encoding the whole text, on random short texts", () => {
    assertOnSeeds(
      fc.property(shortText, (text) => {
        expect(exact(text)).toBe(encoder.encode(text, [], []).length);
      }),
      BUDGET,
    );
  });

  test("measured part by part (measureFrom, any size of part), the parts sum to the whole text's count", () => {
    assertOnSeeds(
      fc.property(longText, fc.integer({ min: 1, max: 200 }), (text, chars) => {
        let tokens = 0;
        for (let from = 0; from >= 0; ) {
          const measured = exact.measureFrom(text, from, chars);
          tokens += measured.tokens;
          from = measured.next;
        }
        expect(tokens).toBe(encoder.encode(text, [], []).length);
      }),
      BUDGET / 2,
    );
    // A part ends with the first piece that reaches `chars` characters past its start; the last part says none is left.
    expect(exact.measureFrom("one two three four", 0, 5)).toEqual({ tokens: encoder.encode("one two").length, next: 7 });
    expect(exact.measureFrom("one two three four", 7, 1)).toEqual({ tokens: encoder.encode(" three").length, next: 13 });
    expect(exact.measureFrom("one two three four", 13, 100)).toEqual({ tokens: encoder.encode(" four").length, next: -1 });
  });

  test("the pieces that begin in each of consecutive windows, the pre-split started a little before each, sum to the whole text's count", () => {
    // Text of the kinds the sampled counting reads (words, JSON, base64, hex, digits in short groups): no piece longer than the lead.
    const part = fc.oneof(
      fc.constantFrom(" the", " agent", "Lisbon", "{\"rows\":[", "],", "\n", "  ", "aGVsbG8=", "3f9a0c11", "42", "1.5", "ABCdef", "'s", "🙂", "中文", "<|endoftext|>"),
      fc.stringMatching(/^[a-zA-Z0-9+/]{1,20}$/),
    );
    const text = fc.array(part, { minLength: 20, maxLength: 300 }).map((parts) => parts.join(""));
    assertOnSeeds(
      fc.property(text, fc.integer({ min: 8, max: 300 }), (sample, window) => {
        let tokens = 0;
        for (let from = 0; from < sample.length; from += window) tokens += exact.measureStartingIn(sample, from, Math.min(sample.length, from + window), 64);
        expect(tokens).toBe(encoder.encode(sample, [], []).length);
      }),
      BUDGET / 2,
    );
  });

  test("a special token's spelling is plain text, counted as encode counts it when told so, in short and long texts", () => {
    for (const special of SPECIALS) {
      for (const text of [`the model ends with ${special} here`, `${special} `.repeat(100)]) {
        expect(() => encoder.encode(text)).toThrow(/special token/);
        expect(exact(text)).toBe(encoder.encode(text, [], []).length);
        // As characters, never as the one special token.
        expect(exact(special)).toBeGreaterThan(1);
      }
    }
  });

  test("tiktokenCounter and a compaction read a message about special tokens like any other", async () => {
    const counter = tiktokenCounter(encoding);
    const messages = [
      new SystemMessage("You explain tokenizers."),
      ...Array.from({ length: 20 }, (_, i) => [new HumanMessage(`Question ${i}: what does <|endoftext|> do?`), new AIMessage(`It ends a document. ${"<|endoftext|> ".repeat(20)}`)]).flat(),
      new HumanMessage("And <|im_start|>?"),
    ];
    const total = counter(messages) as number;
    expect(total).toBeGreaterThan(messages.length * 4);
    const compacted = await new SlidingWindowCompactor().compact(messages, Math.floor(total / 2), counter);
    expect(compacted).not.toBeNull();
    expect(compacted!.at(-1)).toBe(messages.at(-1));
  });
});
