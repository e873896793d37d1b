/**
 * The rules of `src/counting/bounded-encoding.ts` and `exact-length.ts`, read through what they hand to the exact
 * encoder (a recording stand-in) and checked against js-tiktoken's own `encode` where a count is exact. Fast and
 * deterministic, so that a mutation run can afford them (the 200,000-character runs are in `long-runs.test.ts`).
 */
import { CHUNK, EXACT_HAZARD_LIMIT, HAZARD_RUN, SAMPLES, boundedTokenLength, mayHoldHazard } from "../../src/counting/bounded-encoding";
import { exactTokenLength, forgetRememberedPieces, plainTokenLength, REMEMBERED_PIECE_LENGTH, REMEMBERED_PIECES } from "../../src/counting/exact-length";
import type { Encoder } from "../../src/counting/exact-length";
import { HumanMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { assertOnSeeds } from "../support/seeds";
import type { BaseMessage } from "@langchain/core/messages";
import { IMAGE_BLOCK_TOKENS, tiktokenCounter } from "../../src";
import { offlineEncoder } from "../../src/counting/tiktoken";
import { Tiktoken } from "js-tiktoken/lite";
import type { TiktokenBPE } from "js-tiktoken/lite";

/** A stand-in for the exact length: one token per `per` characters (at least one), recording each text it measures. */
function recording(per = 4): { exact: (text: string) => number; measured: string[] } {
  const measured: string[] = [];
  return { exact: (text) => (measured.push(text), Math.max(1, Math.round(text.length / per))), measured };
}

/** A low or a high surrogate without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `length` symbol characters (no letter, no digit), every 128-character window distinct, so a window's position is its content. */
function symbolRun(length: number): string {
  const symbols = "!#$%&()*+,-./:;<=>?@[]^_`{|}~";
  let state = 12345;
  let run = "";
  for (let i = 0; i < length; i += 1) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    run += symbols[state % symbols.length];
  }
  return run;
}

// First in the file: js-tiktoken's encoders are loaded once per module registry, so only the first test to load an
// encoding sees which ranks it was given (a mutation run credits that load to this test alone).
describe("each encoding is read with its own ranks", () => {
  test("counts equal js-tiktoken's own encoder built from that encoding's ranks, and the two encodings differ", () => {
    const text = "Überprüfung der Tokenisierung: 日本語のテキスト, naïve café, 0x1F600 → done.";
    const reference = (name: "o200k_base" | "cl100k_base") => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const ranks = require(`js-tiktoken/ranks/${name}`) as { default?: TiktokenBPE } & TiktokenBPE;
      return new Tiktoken(ranks.default ?? ranks).encode(text).length;
    };
    const cl100k = reference("cl100k_base");
    const o200k = reference("o200k_base");
    expect(cl100k).not.toBe(o200k);
    expect(offlineEncoder("cl100k_base").encode(text)).toHaveLength(cl100k);
    expect(offlineEncoder("o200k_base").encode(text)).toHaveLength(o200k);
  });
});

describe("boundedTokenLength: what is measured exactly and what is cut", () => {
  test("a text shorter than a hazard run, or holding none, is measured whole", () => {
    const short = recording();
    boundedTokenLength(short.exact, "=".repeat(HAZARD_RUN - 1));
    expect(short.measured).toEqual(["=".repeat(HAZARD_RUN - 1)]);
    const prose = recording();
    const text = "The quick brown fox jumps over the lazy dog, again and again, 42 times. ".repeat(3);
    boundedTokenLength(prose.exact, text);
    expect(prose.measured).toEqual([text]);
  });

  test("a run of exactly HAZARD_RUN symbols is a hazard; one shorter inside a text is not", () => {
    const at = recording();
    boundedTokenLength(at.exact, `abc${"=".repeat(HAZARD_RUN)}def`);
    expect(at.measured).toEqual(["abc", "=".repeat(HAZARD_RUN), "def"]);
    const below = recording();
    const text = `abc${"=".repeat(HAZARD_RUN - 1)}def`;
    boundedTokenLength(below.exact, text);
    expect(below.measured).toEqual([text]);
  });

  test("the pre-scan: a run of HAZARD_RUN ASCII letters, or of other ASCII characters, may be a hazard; digits end both runs", () => {
    expect(mayHoldHazard("a".repeat(HAZARD_RUN))).toBe(true);
    expect(mayHoldHazard("Z".repeat(HAZARD_RUN))).toBe(true);
    expect(mayHoldHazard("a".repeat(HAZARD_RUN - 1))).toBe(false);
    expect(mayHoldHazard(` ${"=".repeat(HAZARD_RUN - 1)}`)).toBe(true); // a space and symbols: one run of other characters
    expect(mayHoldHazard("\n".repeat(HAZARD_RUN))).toBe(true);
    // Letters and symbols alternating end each other's runs; a digit ends both.
    expect(mayHoldHazard("a=".repeat(HAZARD_RUN * 4))).toBe(false);
    expect(mayHoldHazard(`${"a".repeat(HAZARD_RUN - 1)}7${"a".repeat(HAZARD_RUN - 1)}`)).toBe(false);
    expect(mayHoldHazard(`${"=".repeat(HAZARD_RUN - 1)}7${"=".repeat(HAZARD_RUN - 1)}`)).toBe(false);
    // The ASCII letter range's edges: '@' (before 'A'), '[' (after 'Z'), '`' (before 'a') and '{' (after 'z') are symbols.
    for (const symbol of ["@", "[", "`", "{"]) expect(mayHoldHazard(`${symbol}a`.repeat(HAZARD_RUN))).toBe(false);
    for (const symbol of ["@", "[", "`", "{"]) expect(mayHoldHazard(symbol.repeat(HAZARD_RUN))).toBe(true);
    for (const letter of ["A", "Z", "a", "z"]) expect(mayHoldHazard(`${letter}=`.repeat(HAZARD_RUN))).toBe(false);
    for (const digit of ["0", "9"]) expect(mayHoldHazard(`${"a".repeat(HAZARD_RUN - 1)}${digit}`.repeat(3))).toBe(false);
    for (const notDigit of ["/", ":"]) expect(mayHoldHazard(`${"=".repeat(HAZARD_RUN - 1)}${notDigit}`)).toBe(true);
    // A non-ASCII unit extends both runs: it might be a letter or a symbol.
    expect(mayHoldHazard(`${"a".repeat(HAZARD_RUN - 1)}é`)).toBe(true);
    expect(mayHoldHazard(`${"=".repeat(HAZARD_RUN - 1)}é`)).toBe(true);
    expect(mayHoldHazard("é".repeat(HAZARD_RUN - 1))).toBe(false);
  });

  test("the pre-scan never passes over a run the hazard pattern finds, on random text of letters, marks, digits and symbols", () => {
    // The module comment's definition of a hazard, written out again.
    const hazard = new RegExp(`[\\p{L}\\p{M}]{${HAZARD_RUN},}|[^\\p{L}\\p{M}\\p{N}]{${HAZARD_RUN},}`, "u");
    const unit = fc.constantFrom("a", "Q", "é", "ж", "中", "\u0301", "\u0903", "7", "٣", "=", " ", "\n", "\t", "🙂", "€", "\u00a0", "_");
    const run = fc.tuple(unit, fc.integer({ min: 1, max: HAZARD_RUN + 4 })).map(([u, times]) => u.repeat(times));
    let hazards = 0;
    assertOnSeeds(
      fc.property(fc.array(fc.oneof(unit, run), { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        if (hazard.test(text)) {
          hazards += 1;
          expect(mayHoldHazard(text)).toBe(true);
        }
        // And counting with it is counting without it: the hazards found are the same.
        const withScan = recording();
        boundedTokenLength(withScan.exact, text);
        if (!hazard.test(text)) expect(withScan.measured).toEqual(text.length === 0 ? [""] : [text]);
      }),
      150,
    );
    expect(hazards).toBeGreaterThan(20);
  });

  test("a run of letters is a hazard too, and the text around each hazard is measured between them", () => {
    const { exact, measured } = recording();
    const letters = "a".repeat(HAZARD_RUN + 2);
    const spaces = " ".repeat(HAZARD_RUN);
    const total = boundedTokenLength(exact, `x1 ${letters}1 y2${spaces}9 tail`);
    expect(measured).toEqual(["x1 ", letters, "1 y2", spaces, "9 tail"]);
    expect(total).toBe(measured.reduce((sum, text) => sum + Math.max(1, Math.round(text.length / 4)), 0));
  });

  test("a hazard of up to EXACT_HAZARD_LIMIT characters is cut into CHUNK-character chunks, all of it measured", () => {
    const run = symbolRun(EXACT_HAZARD_LIMIT);
    const { exact, measured } = recording();
    boundedTokenLength(exact, run);
    expect(measured).toHaveLength(EXACT_HAZARD_LIMIT / CHUNK);
    expect(measured.every((chunk) => chunk.length === CHUNK)).toBe(true);
    expect(measured.join("")).toBe(run);
    const odd = recording();
    boundedTokenLength(odd.exact, run.slice(0, CHUNK * 2 + 5));
    expect(odd.measured.map((chunk) => chunk.length)).toEqual([CHUNK, CHUNK, 5]);
  });

  test("a chunk never splits a surrogate pair", () => {
    // One space, then emoji: every cut at a multiple of CHUNK would fall between an emoji's two halves.
    const run = ` ${"🙂".repeat(300)}`;
    const { exact, measured } = recording();
    boundedTokenLength(exact, run);
    expect(measured.join("")).toBe(run);
    for (const chunk of measured) expect(chunk).not.toMatch(LONE_SURROGATE);
    expect(measured[0]).toHaveLength(CHUNK + 1);
  });

  test("a cut moves past a low surrogate only: the first (U+DC00) and last (U+DFFF) of them, never another character", () => {
    // "a" then U+10000 (letters: D800 DC00) and, apart, U+103FF (D800 DFFF): every cut at a multiple of CHUNK lands on a low half.
    for (const pair of ["\u{10000}", "\u{103FF}"]) {
      const run = `${pair === "\u{10000}" ? "a" : " "}${pair.repeat(200)}`;
      const { exact, measured } = recording();
      boundedTokenLength(exact, run);
      expect(measured.join("")).toBe(run);
      expect(measured[0]).toHaveLength(CHUNK + 1);
      for (const chunk of measured) expect(chunk).not.toMatch(LONE_SURROGATE);
    }
    // U+FF01 (a full-width "!", above the surrogates) is cut where it falls.
    const wide = recording();
    boundedTokenLength(wide.exact, "\uFF01".repeat(300));
    expect(wide.measured.map((chunk) => chunk.length)).toEqual([CHUNK, CHUNK, 300 - 2 * CHUNK]);
  });

  test("a longer hazard is sampled: SAMPLES chunks, evenly spaced from its start to its end, extrapolated", () => {
    const run = symbolRun(EXACT_HAZARD_LIMIT * 5 + 37);
    const { exact, measured } = recording(4);
    const tokens = boundedTokenLength(exact, run);
    expect(measured).toHaveLength(SAMPLES);
    expect(measured.every((sample) => sample.length === CHUNK)).toBe(true);
    const starts = measured.map((sample) => run.indexOf(sample));
    expect(starts[0]).toBe(0);
    expect(starts.at(-1)).toBe(run.length - CHUNK);
    const stride = (run.length - CHUNK) / (SAMPLES - 1);
    starts.forEach((start, i) => expect(Math.abs(start - i * stride)).toBeLessThanOrEqual(1));
    // 32 tokens per 128-character sample: the run is counted at that rate.
    expect(tokens).toBe(Math.round(run.length / 4));
  });

  test("a sampled run is at least one token, and its samples never split a surrogate pair", () => {
    const zero = boundedTokenLength(() => 0, "-".repeat(EXACT_HAZARD_LIMIT + 1));
    expect(zero).toBe(1);
    const run = ` ${"🙂".repeat(EXACT_HAZARD_LIMIT * 2)}`;
    const { exact, measured } = recording();
    boundedTokenLength(exact, run);
    expect(measured).toHaveLength(SAMPLES);
    for (const sample of measured) expect(sample).not.toMatch(LONE_SURROGATE);
  });

  test("with the real encoder, a chunked hazard is within one token a chunk of the exact count", () => {
    const encoder = offlineEncoder("o200k_base");
    const exact = (text: string) => encoder.encode(text).length;
    for (const run of [symbolRun(EXACT_HAZARD_LIMIT), " \n".repeat(EXACT_HAZARD_LIMIT / 2), "ab".repeat(400)]) {
      const counted = boundedTokenLength(exact, run);
      expect(Math.abs(counted - exact(run))).toBeLessThanOrEqual(Math.ceil(run.length / CHUNK));
    }
  });
});

describe("exact lengths with the real encoder", () => {
  const encoder = offlineEncoder("o200k_base");
  // o200k_base's pre-split pattern, as js-tiktoken ships it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ranks = require("js-tiktoken/ranks/o200k_base") as { default?: { pat_str: string }; pat_str?: string };
  const pattern = (ranks.default ?? (ranks as { pat_str: string })).pat_str;

  test("a special token's spelling is plain text: several tokens, never one, never an error", () => {
    for (const special of ["<|endoftext|>", "<|endofprompt|>"]) {
      expect(plainTokenLength(encoder, special)).toBe(encoder.encode(special, [], []).length);
      expect(plainTokenLength(encoder, special)).toBeGreaterThan(1);
      expect(encoder.encode(special, "all").length).toBe(1);
    }
  });

  test("short and long texts, with repeated pieces and special spellings, count as encode counts them", () => {
    const exact = exactTokenLength(encoder, pattern);
    const texts = [
      "short text",
      "x".repeat(511),
      `${"log line 17: ok\n".repeat(40)}<|endoftext|> done`,
      `${"a b ".repeat(200)}  \n\n  trailing   `,
      `${"don't stop 'LL 123456 ABCdef ==> ".repeat(30)}🙂\u{53d3c}`,
    ];
    for (const text of texts) expect(exact(text)).toBe(encoder.encode(text, [], []).length);
    // Measured twice: the second long text is not confused by the first.
    expect(exact(texts[2]!)).toBe(encoder.encode(texts[2]!, [], []).length);
  });

  /** The pieces tiktoken's pre-split makes of `text`, each once, in the order they first appear. */
  const distinctPieces = (text: string) => [...new Set(text.match(new RegExp(pattern, "gu")))];

  /** The real encoder, recording each text it is asked to encode. */
  function recordingEncoder(inner: Encoder = encoder) {
    const asked: string[] = [];
    return {
      asked,
      encode: (text: string, allowed?: string[] | "all", disallowed?: string[] | "all") => {
        asked.push(text);
        return inner.encode(text, allowed, disallowed);
      },
    };
  }

  test("a long text's distinct pieces go to the encoder in one call, each once", () => {
    const recording = recordingEncoder();
    const exact = exactTokenLength(recording, pattern);
    recording.asked.length = 0; // the separator's id, asked for once when the length is built
    const text = `${"alpha beta gamma delta 17 ==> ".repeat(30)}<|endofprompt|> omega`;
    expect(exact(text)).toBe(encoder.encode(text, [], []).length);
    expect(recording.asked).toEqual([distinctPieces(text).join("<|endoftext|>")]);
    expect(distinctPieces(text)).toHaveLength(12); // 8 of the repeated unit (" alpha" after the first), 4 of the tail
  });

  test("a piece seen in an earlier text is looked up: only the new pieces go to the encoder, in one call", () => {
    const recording = recordingEncoder();
    const exact = exactTokenLength(recording, pattern);
    recording.asked.length = 0;
    const first = "alpha beta gamma, 17 times: alpha beta";
    const second = "alpha beta delta, 17 times: omega";
    expect(exact(first)).toBe(encoder.encode(first, [], []).length);
    expect(recording.asked).toEqual([distinctPieces(first).join("<|endoftext|>")]);
    recording.asked.length = 0;
    expect(exact(second)).toBe(encoder.encode(second, [], []).length);
    const seen = new Set(distinctPieces(first));
    const fresh = distinctPieces(second).filter((piece) => !seen.has(piece));
    expect(fresh).toEqual([" delta", " omega"]);
    expect(recording.asked).toEqual([fresh.join("<|endoftext|>")]);
    // A text made only of pieces seen before is not encoded at all, and still counts as encode counts it.
    recording.asked.length = 0;
    expect(exact(" beta alpha")).toBe(encoder.encode(" beta alpha", [], []).length);
    expect(recording.asked).toEqual([]);
    // An empty text has no pieces: no tokens, no call.
    expect(exact("")).toBe(0);
    expect(recording.asked).toEqual([]);
  });

  test("pieces longer than REMEMBERED_PIECE_LENGTH are encoded in every text they are in; shorter ones once", () => {
    const recording = recordingEncoder();
    const exact = exactTokenLength(recording, pattern);
    const atLimit = ` ${"q".repeat(REMEMBERED_PIECE_LENGTH - 1)}`; // one piece: a space and letters
    const overLimit = ` ${"q".repeat(REMEMBERED_PIECE_LENGTH)}`;
    expect(distinctPieces(atLimit)).toEqual([atLimit]);
    expect(distinctPieces(overLimit)).toEqual([overLimit]);
    recording.asked.length = 0;
    for (let round = 0; round < 2; round += 1) {
      expect(exact(atLimit)).toBe(encoder.encode(atLimit, [], []).length);
      expect(exact(overLimit)).toBe(encoder.encode(overLimit, [], []).length);
    }
    expect(recording.asked).toEqual([atLimit, overLimit, overLimit]);
  });

  test("the memory is forgotten whole once it holds REMEMBERED_PIECES pieces, and by forgetRememberedPieces", () => {
    const recording = recordingEncoder();
    const exact = exactTokenLength(recording, pattern);
    // REMEMBERED_PIECES distinct pieces, each a space and letters (a number written in base 26).
    const word = (n: number) => {
      let letters = "";
      do {
        letters = String.fromCharCode(97 + (n % 26)) + letters;
        n = Math.floor(n / 26);
      } while (n > 0);
      return ` x${letters}`;
    };
    const many = Array.from({ length: REMEMBERED_PIECES }, (_, n) => word(n)).join("");
    expect(new Set(distinctPieces(many)).size).toBe(REMEMBERED_PIECES);
    expect(exact(many)).toBe(encoder.encode(many, [], []).length);
    recording.asked.length = 0;
    // Full, not yet forgotten: every one of them is still known.
    expect(exact(`${word(0)}${word(REMEMBERED_PIECES - 1)}`)).toBe(encoder.encode(`${word(0)}${word(REMEMBERED_PIECES - 1)}`, [], []).length);
    expect(recording.asked).toEqual([]);
    // One new piece makes room by forgetting the rest: the first word is asked for again.
    expect(exact(" newcomer")).toBe(encoder.encode(" newcomer", [], []).length);
    expect(exact(word(0))).toBe(encoder.encode(word(0), [], []).length);
    expect(recording.asked).toEqual([" newcomer", word(0)]);
    // Known again, until forgetRememberedPieces empties every memory.
    recording.asked.length = 0;
    exact(word(0));
    expect(recording.asked).toEqual([]);
    forgetRememberedPieces();
    exact(word(0));
    exact(word(0));
    expect(recording.asked).toEqual([word(0)]);
  });

  test("a long text spelling the separator is measured in one call too; an encoder without the separator, piece by piece", () => {
    const recording = recordingEncoder();
    const exact = exactTokenLength(recording, pattern);
    recording.asked.length = 0;
    const text = `${"stop at <|endoftext|> now ".repeat(30)}`;
    expect(exact(text)).toBe(encoder.encode(text, [], []).length);
    // The pre-split parts `<|` and `|>` from the letters, so no piece spells the separator.
    expect(distinctPieces(text)).toEqual(["stop", " at", " <|", "endoftext", "|>", " now", " stop", " "]);
    expect(recording.asked).toEqual([distinctPieces(text).join("<|endoftext|>")]);

    // An encoder whose special tokens do not include the separator reads its spelling as several tokens.
    const plain = recordingEncoder({ encode: (text, _allowed, disallowed) => encoder.encode(text, [], disallowed) });
    const exactPlain = exactTokenLength(plain, pattern);
    plain.asked.length = 0;
    const prose = "one two three four five six seven ".repeat(20);
    expect(exactPlain(prose)).toBe(encoder.encode(prose, [], []).length);
    expect(plain.asked).toEqual(distinctPieces(prose));
  });
});

describe("tiktokenCounter's framing and setup", () => {
  const count = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;
  const encoder = offlineEncoder("o200k_base");
  const tokens = (text: string) => encoder.encode(text).length;

  test("an empty name costs nothing; a name costs one token plus its own", () => {
    expect(count([new HumanMessage({ content: "hello there", name: "" })])).toBe(4 + tokens("hello there"));
    expect(count([new HumanMessage({ content: "hello there", name: "bo" })])).toBe(4 + 1 + tokens("hello there") + tokens("bo"));
  });

  test("an image block is the fixed image charge, beside its text", () => {
    const message = new HumanMessage({
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(5_000)}` } },
      ],
    });
    expect(count([message])).toBe(4 + tokens("what is this?") + IMAGE_BLOCK_TOKENS);
  });

  test("the counter is named after its encoding (errors and logs name it), and each encoder is loaded once", () => {
    expect(tiktokenCounter("o200k_base").name).toBe("tiktokenCounter(o200k_base)");
    expect(tiktokenCounter("cl100k_base").name).toBe("tiktokenCounter(cl100k_base)");
    expect(offlineEncoder("o200k_base")).toBe(encoder);
    expect(offlineEncoder("cl100k_base")).not.toBe(encoder);
  });
});
