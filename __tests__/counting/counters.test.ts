/**
 * The offline counters: `approximateTokenCounter`'s rules, and
 * `tiktokenCounter` agreeing with js-tiktoken itself (loaded here
 * independently, from the ranks js-tiktoken ships).
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { Tiktoken } from "js-tiktoken/lite";
import type { TiktokenBPE } from "js-tiktoken/lite";
import {
  APPROXIMATE_CHARS_PER_TOKEN,
  approximateTokenCounter,
  IMAGE_BLOCK_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  tiktokenCounter,
} from "../../src";
import type { TiktokenEncodingName } from "../../src";
import { conversationArbitrary } from "../support/conversations";
import { assertOnSeeds } from "../support/seeds";

// The README's rule, written out here rather than read from the library's own constants: about 4 characters a
// token, and 3 tokens per message.
const CHARS_PER_TOKEN = 4;
const PER_MESSAGE = 3;
const approx = (chars: number) => PER_MESSAGE + Math.ceil(chars / CHARS_PER_TOKEN);

describe("approximateTokenCounter", () => {
  test("about 4 characters a token, plus the per-message framing", () => {
    // The exported constants say what the counter does.
    expect(APPROXIMATE_CHARS_PER_TOKEN).toBe(CHARS_PER_TOKEN);
    expect(MESSAGE_OVERHEAD_TOKENS).toBe(PER_MESSAGE);
    for (const n of [0, 1, 3, 4, 5, 8, 9, 400, 4001]) {
      const expected = approx(n);
      expect(approximateTokenCounter([new HumanMessage("a".repeat(n))])).toBe(expected);
      expect(approximateTokenCounter([new SystemMessage("b".repeat(n))])).toBe(expected);
      expect(approximateTokenCounter([new AIMessage("c".repeat(n))])).toBe(expected);
    }
    expect(approximateTokenCounter([])).toBe(0);
  });

  test("text blocks count their text; other non-image blocks count as JSON", () => {
    const text = new HumanMessage({ content: [{ type: "text", text: "abcdefgh" }, { type: "text", text: "ijkl" }] });
    expect(approximateTokenCounter([text])).toBe(approx(12));
    const block = { type: "reasoning", reasoning: "think first" };
    expect(approximateTokenCounter([new AIMessage({ content: [block] })])).toBe(approx(JSON.stringify(block).length));
  });

  test("an image block is a fixed charge, whatever its size", () => {
    // 765 tokens an image, as the README states.
    expect(IMAGE_BLOCK_TOKENS).toBe(765);
    const small = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } };
    const huge = { type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(200_000)}` } };
    const withText = (image: object) => new HumanMessage({ content: [{ type: "text", text: "what is this?" }, image] as never });
    const expected = approx("what is this?".length) + 765;
    expect(approximateTokenCounter([withText(small)])).toBe(expected);
    expect(approximateTokenCounter([withText(huge)])).toBe(expected);
    const standard = { type: "image", source_type: "base64", data: "B".repeat(50_000), mime_type: "image/png" };
    expect(approximateTokenCounter([new HumanMessage({ content: [standard, standard] as never })])).toBe(
      PER_MESSAGE + 2 * 765,
    );
  });

  test("tool-call names, JSON arguments and ids, tool_call_id and name are counted", () => {
    const args = { city: "Oslo", days: 2 };
    const call = new AIMessage({ content: "ok", tool_calls: [{ id: "call_1", name: "weather", args, type: "tool_call" }] });
    expect(approximateTokenCounter([call])).toBe(approx(2 + "weather".length + JSON.stringify(args).length + "call_1".length));
    const two = new AIMessage({
      content: "",
      tool_calls: [
        { id: "a", name: "f", args: {}, type: "tool_call" },
        { id: "bb", name: "gg", args: { q: "x" }, type: "tool_call" },
      ],
    });
    expect(approximateTokenCounter([two])).toBe(approx(1 + 2 + 1 + 2 + 2 + JSON.stringify({ q: "x" }).length));
    const result = new ToolMessage({ tool_call_id: "call_1", name: "weather", content: "sunny" });
    expect(approximateTokenCounter([result])).toBe(approx(5 + "call_1".length + "weather".length));
  });

  test("additive over messages", () => {
    assertOnSeeds(
      fc.property(conversationArbitrary(), (messages) => {
        const oneByOne = messages.reduce((sum, m) => sum + approximateTokenCounter([m]), 0);
        expect(approximateTokenCounter(messages)).toBe(oneByOne);
      }),
      100,
    );
  });
});

// The ranks js-tiktoken ships; required by path because this project's `moduleResolution: node` does not read their types.
/* eslint-disable @typescript-eslint/no-require-imports */
const ranks = (mod: { default?: TiktokenBPE } & TiktokenBPE): TiktokenBPE => mod.default ?? mod;
const reference: Record<TiktokenEncodingName, Tiktoken> = {
  o200k_base: new Tiktoken(ranks(require("js-tiktoken/ranks/o200k_base"))),
  cl100k_base: new Tiktoken(ranks(require("js-tiktoken/ranks/cl100k_base"))),
};
/* eslint-enable @typescript-eslint/no-require-imports */
/** OpenAI's chat framing: 3 tokens per message, 1 for the role, 1 more with a name. */
const FRAMING = 3 + 1;

// Plain text: words, digits, punctuation, emoji and non-Latin scripts, in pieces short enough that
// tiktoken's pre-split, not the bounded long-run path, decides the count.
const plainText = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.constantFrom("hello", "world", "42", "3.14", "🙂", "日本語のテキスト", "Привет", "naïve", "\n", "\t", "{\"a\":1}"),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(" "));

describe.each(["o200k_base", "cl100k_base"] as const)("tiktokenCounter(%s)", (encoding) => {
  const count = tiktokenCounter(encoding) as (messages: BaseMessage[]) => number;
  const encoder = reference[encoding];
  const tokens = (text: string) => encoder.encode(text).length;

  test("agrees with js-tiktoken on plain text: content tokens + the per-message framing", () => {
    assertOnSeeds(
      fc.property(plainText, fc.constantFrom("human", "ai", "system"), (text, role) => {
        const message =
          role === "human" ? new HumanMessage(text) : role === "ai" ? new AIMessage(text) : new SystemMessage(text);
        expect(count([message])).toBe(tokens(text) + FRAMING);
      }),
      300,
    );
  });

  test("a fixed text, spelled out", () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    expect(count([new HumanMessage(text)])).toBe(tokens(text) + FRAMING);
    // The pangram is ten tokens in both encodings: nine words and the full stop.
    expect(tokens(text)).toBe(10);
    expect(count([new HumanMessage(text)])).toBe(10 + 4);
    expect(count([new HumanMessage("")])).toBe(FRAMING);
  });

  test("a name costs one token plus its own", () => {
    const message = new HumanMessage({ content: "hi there", name: "alice" });
    expect(count([message])).toBe(FRAMING + 1 + tokens("hi there") + tokens("alice"));
  });

  test("tool calls and tool results are counted", () => {
    const args = { city: "Oslo", days: 2 };
    const call = new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "weather", args, type: "tool_call" }] });
    expect(count([call])).toBe(FRAMING + tokens("weather") + tokens(JSON.stringify(args)) + tokens("call_1"));
    const result = new ToolMessage({ tool_call_id: "call_1", content: "sunny, 24°C" });
    expect(count([result])).toBe(FRAMING + tokens("sunny, 24°C") + tokens("call_1"));
  });

  test("additive over messages", () => {
    assertOnSeeds(
      fc.property(conversationArbitrary({ maxTurns: 3, maxSteps: 3 }), (messages) => {
        expect(count(messages)).toBe(messages.reduce((sum, m) => sum + count([m]), 0));
      }),
      50,
    );
  });
});

describe("tiktokenCounter setup", () => {
  test("works offline: loads and counts with no network access", () => {
    const realFetch = globalThis.fetch;
    const attempts: string[] = [];
    globalThis.fetch = ((input: unknown) => {
      attempts.push(String(input));
      return Promise.reject(new Error("network disabled in this test"));
    }) as typeof fetch;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const http = require("node:http") as typeof import("node:http");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const https = require("node:https") as typeof import("node:https");
    const spies = [jest.spyOn(http, "request"), jest.spyOn(http, "get"), jest.spyOn(https, "request"), jest.spyOn(https, "get")];
    try {
      jest.isolateModules(() => {
        // A fresh copy of the module: nothing memoized from the tests above.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const fresh = require("../../src/counting/tiktoken") as typeof import("../../src/counting/tiktoken");
        for (const encoding of ["o200k_base", "cl100k_base"] as const) {
          const counted = fresh.tiktokenCounter(encoding)([new HumanMessage("offline counting works")]);
          expect(counted).toBe(reference[encoding].encode("offline counting works").length + FRAMING);
        }
      });
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(attempts).toEqual([]);
    for (const spy of spies) {
      expect(spy).not.toHaveBeenCalled();
      spy.mockRestore();
    }
  });

  test("an unknown encoding is a RangeError naming it", () => {
    expect(() => tiktokenCounter("gpt2" as TiktokenEncodingName)).toThrow(RangeError);
    expect(() => tiktokenCounter("gpt2" as TiktokenEncodingName)).toThrow('"gpt2"');
    expect(() => tiktokenCounter("p50k_base" as TiktokenEncodingName)).toThrow('"p50k_base"');
  });

  test("the default is o200k_base, and one function per encoding (so its counts cache)", () => {
    expect(tiktokenCounter()).toBe(tiktokenCounter("o200k_base"));
    expect(tiktokenCounter("cl100k_base")).not.toBe(tiktokenCounter("o200k_base"));
    // The encodings differ, so the default really is o200k: on this text they disagree.
    const text = "日本語のテキストとemoji 🙂🙂 and code: const x = await fetch(url);";
    expect(reference.o200k_base.encode(text).length).not.toBe(reference.cl100k_base.encode(text).length);
    expect((tiktokenCounter() as (m: BaseMessage[]) => number)([new HumanMessage(text)])).toBe(
      reference.o200k_base.encode(text).length + FRAMING,
    );
  });
});
