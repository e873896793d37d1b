/**
 * The rules of `src/counting/bounded-encoding.ts` and `exact-length.ts`, read through what they hand to the exact
 * encoder (a recording stand-in) and checked against js-tiktoken's own `encode` where a count is exact. Fast and
 * deterministic, so that a mutation run can afford them (the 200,000-character runs are in `long-runs.test.ts`).
 */
import { CHUNK, EXACT_HAZARD_LIMIT, HAZARD_RUN, SAMPLES, boundedTokenLength } from "../../src/counting/bounded-encoding";
import { exactTokenLength, plainTokenLength } from "../../src/counting/exact-length";
import type { Encoder } from "../../src/counting/exact-length";
import { HumanMessage } from "@langchain/core/messages";
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
