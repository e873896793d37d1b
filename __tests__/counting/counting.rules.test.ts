/**
 * Rules of `src/counting` that a mutation run showed no test pinned (TESTING.md): what the shared walk
 * charges for (every image block type, string and odd blocks, a call without a name), when a cached count is stale
 * (a reassigned `tool_calls` of the same length), what is recognised as a cache, and the names in counter errors.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, IMAGE_BLOCK_TOKENS, SlidingWindowCompactor, TokenCountCache } from "../../src";
import { isTokenCountCache } from "../../src/counting/cache";
import { MessageCounts, resolveTokenCounter } from "../../src/counting/message-counts";

/** 3 tokens of framing per message, then a token per 4 characters, rounded up (the README's estimate). */
const approx = (chars: number, images = 0) => 3 + Math.ceil(chars / 4) + images * IMAGE_BLOCK_TOKENS;

describe("what a message is charged for", () => {
  test.each(["image", "image_url", "input_image"])("an %s block is a fixed charge, whatever its data", (type) => {
    const block = { type, image_url: { url: `data:image/png;base64,${"A".repeat(40_000)}` }, data: "B".repeat(40_000) };
    const message = new HumanMessage({ content: [{ type: "text", text: "abcd" }, block] as never });
    expect(approximateTokenCounter([message])).toBe(approx(4, 1));
  });

  test("a bare string in a content array is text; null and other non-objects are nothing", () => {
    const message = new HumanMessage({ content: ["abcdefgh", null, 42, true, { type: "text", text: "ijkl" }] as never });
    expect(approximateTokenCounter([message])).toBe(approx(8 + 4));
  });

  test("a tool call that lost its name is charged for its arguments and id only", () => {
    const message = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: undefined as never, args: {}, type: "tool_call" }] });
    expect(approximateTokenCounter([message])).toBe(approx("{}".length + "c1".length));
  });
});

describe("a cached count is stale when tool_calls is reassigned, even to a list of the same length", () => {
  test("same length, other calls: counted again", () => {
    const counter = approximateTokenCounter;
    const ai = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "search", args: {}, type: "tool_call" }] });
    const cache = new TokenCountCache();
    cache.set(counter, ai, counter([ai]));
    ai.tool_calls = [{ id: "a", name: "search", args: { q: "a far longer query ".repeat(20) }, type: "tool_call" }];
    expect(cache.get(counter, ai)).toBeUndefined();
  });
});

describe("what counts as a TokenCountCache", () => {
  const BRAND = Symbol.for("langchain-compaction.TokenCountCache");
  const method = () => undefined;

  test("a cache of any copy of the package is one; null, primitives and a bare brand are not", () => {
    expect(isTokenCountCache(new TokenCountCache())).toBe(true);
    expect(isTokenCountCache({ [BRAND]: true, get: method, set: method, clear: method })).toBe(true);
    expect(isTokenCountCache(null)).toBe(false);
    expect(isTokenCountCache("cache")).toBe(false);
    expect(isTokenCountCache({ [BRAND]: true })).toBe(false);
  });

  test.each(["get", "set", "clear"])("a branded object without %s() is not one, and a compactor refuses it by name", (missing) => {
    const candidate: Record<PropertyKey, unknown> = { [BRAND]: true, get: method, set: method, clear: method };
    delete candidate[missing];
    expect(isTokenCountCache(candidate)).toBe(false);
    expect(() => new SlidingWindowCompactor({ cache: candidate as never })).toThrow(TypeError);
  });
});

describe("counter errors name the counter", () => {
  const messages: BaseMessage[] = [new HumanMessage("hello there")];

  test("an anonymous counter is called `tokenCounter`", async () => {
    const anonymous = [(() => "many") as unknown as (list: BaseMessage[]) => number][0]!;
    expect(anonymous.name).toBe("");
    expect(resolveTokenCounter(anonymous).label).toBe("tokenCounter");
    await expect(new SlidingWindowCompactor({ cache: null }).compact(messages, 0, anonymous)).rejects.toThrow(
      /^tokenCounter returned "many" for the message at index 0 \(human\)/,
    );
  });

  test("a named counter keeps its name", () => {
    function wordCounter(list: BaseMessage[]): number {
      return list.length;
    }
    expect(resolveTokenCounter(wordCounter).label).toBe("wordCounter");
  });

  test("a message whose type cannot be read is still named in the error, not rethrown from", () => {
    const broken = new HumanMessage("x");
    Object.defineProperty(broken, "type", {
      get() {
        throw new Error("no type");
      },
    });
    const counts = new MessageCounts([broken], resolveTokenCounter(() => -1), null);
    expect(() => counts.of(0)).toThrow(new RangeError(
      "tokenCounter returned -1 for the message at index 0 (a message whose `type` cannot be read); a token count must be a finite number of at least 0",
    ));
  });
});
