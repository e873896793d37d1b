/**
 * Recognising a provider's "request too long" error (`src/integrations/context-overflow.ts`), on the errors the
 * providers' own integrations throw (built offline from their API's error responses), and nothing else.
 */
import { contextOverflowOf } from "../../src/integrations/context-overflow";
import { anthropicOverflow, bedrockOverflow, geminiOverflow, openAIOverflow, openAIResponsesOverflow } from "../support/provider-errors";

describe("contextOverflowOf", () => {
  test("ChatOpenAI (Chat Completions): a ContextOverflowError, with the counts of the wrapped error", async () => {
    const error = await openAIOverflow();
    expect((error as Error).name).toBe("ContextOverflowError");
    expect(contextOverflowOf(error)).toMatchObject({ requestTokens: 130532, limitTokens: 128000 });
  });

  test("ChatOpenAI (Responses API): recognised by its code, with no counts", async () => {
    const overflow = contextOverflowOf(await openAIResponsesOverflow());
    expect(overflow).not.toBeNull();
    expect(overflow!.requestTokens).toBeUndefined();
    expect(overflow!.limitTokens).toBeUndefined();
  });

  test("ChatAnthropic: prompt is too long, with both counts", async () => {
    expect(contextOverflowOf(await anthropicOverflow())).toMatchObject({ requestTokens: 215345, limitTokens: 200000 });
  });

  test("ChatGoogleGenerativeAI: the SDK's own error, with both counts", async () => {
    const error = await geminiOverflow();
    expect((error as Error).name).not.toBe("ContextOverflowError");
    expect(contextOverflowOf(error)).toMatchObject({ requestTokens: 1250000, limitTokens: 1048576 });
  });

  test("Bedrock's ValidationException, Mistral's and vLLM's wording", () => {
    expect(contextOverflowOf(bedrockOverflow())).not.toBeNull();
    expect(contextOverflowOf(bedrockOverflow("prompt is too long: 210000 tokens > 200000 maximum"))).toMatchObject({ requestTokens: 210000, limitTokens: 200000 });
    expect(contextOverflowOf(new Error("Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"))).toMatchObject({ requestTokens: 40000, limitTokens: 32768 });
    expect(contextOverflowOf(new Error("This model's maximum context length is 4,096 tokens. However, you requested 5,000 tokens (4000 in the messages, 1000 in the completion)."))).toMatchObject({ requestTokens: 5000, limitTokens: 4096 });
  });

  test("anything else is no overflow: other provider errors, an argument check, odd values", async () => {
    expect(contextOverflowOf(new Error("Rate limit reached for gpt-4o"))).toBeNull();
    expect(contextOverflowOf(Object.assign(new Error("400 tool_calls must be followed by tool messages"), { status: 400 }))).toBeNull();
    // "input is too long" from anything but a provider's validation error is someone's argument check.
    expect(contextOverflowOf(new RangeError("input is too long for this buffer"))).toBeNull();
    for (const value of [null, undefined, 42, "boom", {}, []]) expect(contextOverflowOf(value)).toBeNull();
    const hostile = new Proxy({}, { get: () => { throw new Error("no"); } });
    expect(contextOverflowOf(hostile)).toBeNull();
  });

  test("a wrapped overflow is found through `cause`", () => {
    const inner = new Error("prompt is too long: 300 tokens > 200 maximum");
    const outer = new Error("agent failed", { cause: inner });
    expect(contextOverflowOf(outer)).toMatchObject({ requestTokens: 300, limitTokens: 200, error: inner });
  });
});
