/**
 * Issue 31, item 4: the summary model's own settings stay valid. The stage
 * holds a summary to `maxSummaryTokens` by asking a copy of the model with a
 * lower output limit; an output limit covers the model's reasoning too. Each
 * case builds the provider's real chat model (ChatAnthropic, ChatOpenAI on
 * Chat Completions and the Responses API, ChatGoogleGenerativeAI), captures
 * the request its SDK sends offline (`support/provider-wire.ts`), and checks
 * it against the provider's documented rules, the limit it carries against
 * the decision documented in `bounded-model.ts`, and the user's model for
 * changes.
 */
import { BaseMessage } from "@langchain/core/messages";
import { SummarizationCompactor, SummarizationError } from "../../src";
import type { SummaryModel } from "../../src";
import { withOutputLimit } from "../../src/compactors/bounded-model";
import { anthropicModel, chatCompletion, geminiModel, openAIModel, outputText, responsesMessage, responsesResult } from "../support/provider-wire";
import type { WireRequest } from "../support/provider-wire";
import { answer, human, lengthCounter, system } from "../support/stages";

/** The summary size asked for: a number no provider default or minimum shares. */
const SUMMARY_TOKENS = 700;
const SUMMARY = "## Objective\n- ship v2";

function history(): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let t = 1; t <= 6; t += 1) messages.push(human(50, `Q${t}-`), answer(50, `A${t}-`));
  messages.push(human(10, "TASK"));
  return messages;
}

/** Runs one compaction that needs a summary; the summary must have been used (the fake answer is valid). */
async function summarize(model: SummaryModel, offline: <T>(run: () => Promise<T>) => Promise<T> = (run) => run()) {
  const report = await offline(() =>
    new SummarizationCompactor({ model, maxSummaryTokens: SUMMARY_TOKENS, raiseOnFailure: true, cache: null }).compactWithReport(history(), 400, lengthCounter),
  );
  expect(report.added.map((message) => message.content)).toEqual([`<conversation_summary>\n${SUMMARY}\n</conversation_summary>`]);
}

/** The one request a compaction sent. */
function onlyRequest(requests: WireRequest[]): Record<string, unknown> {
  expect(requests).toHaveLength(1);
  return requests[0]!.body;
}

// ---- the providers' documented rules ----------------------------------------------------------------------

/**
 * Anthropic Messages API: `max_tokens` is required, a whole number of at
 * least 1; with `thinking: { type: "enabled" }`, `budget_tokens` is at least
 * 1024 and less than `max_tokens` (Anthropic SDK `ThinkingConfigEnabled`).
 */
function assertAnthropicValid(body: Record<string, unknown>): void {
  expect(Number.isInteger(body.max_tokens) && (body.max_tokens as number) >= 1).toBe(true);
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (thinking?.type === "enabled") {
    expect(thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
    expect(thinking.budget_tokens).toBeLessThan(body.max_tokens as number);
  }
}

/**
 * OpenAI Chat Completions: a reasoning model (o-series, GPT-5) takes
 * `max_completion_tokens` and refuses `max_tokens`; `reasoning_effort` is a
 * reasoning model's parameter.
 */
function assertOpenAIChatValid(body: Record<string, unknown>, reasoningModel: boolean): void {
  if (reasoningModel) expect("max_tokens" in body).toBe(false);
  else expect("reasoning_effort" in body).toBe(false);
  for (const key of ["max_tokens", "max_completion_tokens"]) if (key in body) expect(Number.isInteger(body[key]) && (body[key] as number) >= 1).toBe(true);
}

/** OpenAI Responses API: the limit is `max_output_tokens` (there is no `max_tokens` nor `max_completion_tokens`). */
function assertOpenAIResponsesValid(body: Record<string, unknown>): void {
  expect("max_tokens" in body).toBe(false);
  expect("max_completion_tokens" in body).toBe(false);
  if ("max_output_tokens" in body) expect(Number.isInteger(body.max_output_tokens) && (body.max_output_tokens as number) >= 1).toBe(true);
}

/**
 * Gemini generateContent: `maxOutputTokens` a whole number from 1 to the
 * model's output limit (65,536 for Gemini 2.5 Flash); `thinkingBudget` -1
 * (dynamic), 0 (off) or up to 24,576 on 2.5 Flash. Thoughts are billed
 * against `maxOutputTokens`, so a budget must leave the answer room below it.
 */
function assertGeminiValid(body: Record<string, unknown>): void {
  const config = (body.generationConfig ?? {}) as { maxOutputTokens?: number; thinkingConfig?: { thinkingBudget?: number } };
  if (config.maxOutputTokens !== undefined) {
    expect(Number.isInteger(config.maxOutputTokens) && config.maxOutputTokens >= 1 && config.maxOutputTokens <= 65_536).toBe(true);
  }
  const budget = config.thinkingConfig?.thinkingBudget;
  if (budget !== undefined) {
    expect(budget === -1 || (Number.isInteger(budget) && budget >= 0 && budget <= 24_576)).toBe(true);
    if (budget > 0 && config.maxOutputTokens !== undefined) expect(config.maxOutputTokens).toBeGreaterThan(budget);
  }
}

const anthropicReply = [{ type: "thinking", thinking: "considering", signature: "sig" }, { type: "text", text: SUMMARY }];

describe("ChatAnthropic", () => {
  test("thinking with a budget: max_tokens is the budget plus maxSummaryTokens, so the budget stays below it and the answer keeps its tokens", async () => {
    const { model, requests } = anthropicModel(anthropicReply, { maxTokens: 8000, thinking: { type: "enabled", budget_tokens: 2048 } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertAnthropicValid(body);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body.max_tokens).toBe(2048 + SUMMARY_TOKENS);
    // The user's model is not changed.
    expect(model.maxTokens).toBe(8000);
    expect(model.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  test("thinking with a budget and a lower limit of its own: the model's own max_tokens, never more", async () => {
    const { model, requests } = anthropicModel(anthropicReply, { maxTokens: 2500, thinking: { type: "enabled", budget_tokens: 2048 } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertAnthropicValid(body);
    expect(body.max_tokens).toBe(2500);
  });

  test("thinking set through invocationKwargs counts as well", async () => {
    const { model, requests } = anthropicModel(anthropicReply, { maxTokens: 8000, invocationKwargs: { thinking: { type: "enabled", budget_tokens: 3000 } } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertAnthropicValid(body);
    expect(body.max_tokens).toBe(3000 + SUMMARY_TOKENS);
  });

  test("no thinking, or thinking disabled: max_tokens is maxSummaryTokens", async () => {
    for (const fields of [{ maxTokens: 8000 }, { maxTokens: 8000, thinking: { type: "disabled" as const } }]) {
      const { model, requests } = anthropicModel([{ type: "text", text: SUMMARY }], fields);
      await summarize(model);
      const body = onlyRequest(requests);
      assertAnthropicValid(body);
      expect(body.max_tokens).toBe(SUMMARY_TOKENS);
    }
  });

  test("adaptive thinking has no budget: the model keeps its own max_tokens", async () => {
    const { model, requests } = anthropicModel(anthropicReply, { model: "claude-opus-4-6", maxTokens: 8000, thinking: { type: "adaptive" } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertAnthropicValid(body);
    expect(body.thinking).toEqual({ type: "adaptive" });
    expect(body.max_tokens).toBe(8000);
  });

  test("a max_tokens in invocationKwargs, which wins over the field, leaves the model as it is (no copy that would not carry the limit)", async () => {
    const { model, requests } = anthropicModel([{ type: "text", text: SUMMARY }], { maxTokens: 8000, invocationKwargs: { max_tokens: 5000 } });
    expect(withOutputLimit(model, SUMMARY_TOKENS)).toEqual({ model, bounded: false });
    await summarize(model);
    expect(onlyRequest(requests).max_tokens).toBe(5000);
  });

  test("thinking set on the model after it was built (so not in the arguments a copy is built from) leaves the model as it is", async () => {
    const { model, requests } = anthropicModel(anthropicReply, { maxTokens: 8000 });
    model.invocationKwargs = { thinking: { type: "enabled", budget_tokens: 2048 } };
    await summarize(model);
    const body = onlyRequest(requests);
    assertAnthropicValid(body);
    // A copy would have lost the thinking the user asked for.
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body.max_tokens).toBe(8000);
  });
});

describe("ChatOpenAI, Chat Completions", () => {
  const reply = (model: string) => chatCompletion({ content: SUMMARY }, model);

  test("a reasoning model with an effort: its own max_completion_tokens, never max_tokens", async () => {
    const { model, requests } = openAIModel(reply("o3-mini"), { model: "o3-mini", maxCompletionTokens: 4000, reasoning: { effort: "low" } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIChatValid(body, true);
    expect(body.reasoning_effort).toBe("low");
    expect(body.max_completion_tokens).toBe(4000);
    expect(model.maxTokens).toBe(4000);
  });

  test("a reasoning model with no settings reasons by default: no limit is added", async () => {
    const { model, requests } = openAIModel(reply("gpt-5"), { model: "gpt-5" });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIChatValid(body, true);
    expect("max_completion_tokens" in body).toBe(false);
  });

  test("a reasoning model LangChain sends max_completion_tokens to, with no profile (a dated snapshot): no limit is added", async () => {
    const { model, requests } = openAIModel(reply("o3-mini-2025-01-31"), { model: "o3-mini-2025-01-31", maxTokens: 4000 });
    expect(model.profile.reasoningOutput).toBeUndefined();
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIChatValid(body, true);
    expect(body.max_completion_tokens).toBe(4000);
  });

  test("a reasoning model with effort none: max_completion_tokens is maxSummaryTokens", async () => {
    const { model, requests } = openAIModel(reply("gpt-5.1"), { model: "gpt-5.1", maxTokens: 4000, reasoning: { effort: "none" } as never });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIChatValid(body, true);
    expect(body.reasoning_effort).toBe("none");
    expect(body.max_completion_tokens).toBe(SUMMARY_TOKENS);
  });

  test("an effort given through modelKwargs to a deployment LangChain does not know as a reasoning model: no max_tokens is added", async () => {
    // LangChain sends such a model max_tokens, which a reasoning model refuses: a limit added here would make the request invalid.
    const { model, requests } = openAIModel(reply("my-o3-deployment"), { model: "my-o3-deployment", modelKwargs: { reasoning_effort: "low" } });
    await summarize(model);
    const body = onlyRequest(requests);
    expect(body.reasoning_effort).toBe("low");
    assertOpenAIChatValid(body, true);
  });

  test("a model that does not reason: max_tokens is maxSummaryTokens", async () => {
    const { model, requests } = openAIModel(reply("gpt-4o-mini"), { model: "gpt-4o-mini", maxTokens: 4000 });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIChatValid(body, false);
    expect(body.max_tokens).toBe(SUMMARY_TOKENS);
    expect(model.maxTokens).toBe(4000);
  });
});

describe("ChatOpenAI, Responses API", () => {
  const reply = (model: string) => responsesResult([{ type: "reasoning", id: "rs_1", summary: [] }, responsesMessage([outputText(SUMMARY)])], model);

  test("a reasoning model with an effort: its own max_output_tokens", async () => {
    const { model, requests } = openAIModel(reply("o3-mini"), { model: "o3-mini", useResponsesApi: true, maxCompletionTokens: 4000, reasoning: { effort: "medium" } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIResponsesValid(body);
    expect(body.reasoning).toEqual({ effort: "medium" });
    expect(body.max_output_tokens).toBe(4000);
  });

  test("a reasoning model with no profile (a dated snapshot) and an effort: the effort alone says it reasons", async () => {
    const { model, requests } = openAIModel(reply("o3-mini-2025-01-31"), { model: "o3-mini-2025-01-31", useResponsesApi: true, maxTokens: 4000, reasoning: { effort: "low" } });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIResponsesValid(body);
    expect(body.reasoning).toEqual({ effort: "low" });
    expect(body.max_output_tokens).toBe(4000);
  });

  test("a reasoning model with no settings: no limit is added", async () => {
    const { model, requests } = openAIModel(reply("gpt-5"), { model: "gpt-5", useResponsesApi: true });
    await summarize(model);
    const body = onlyRequest(requests);
    assertOpenAIResponsesValid(body);
    expect("max_output_tokens" in body).toBe(false);
  });

  test("effort none, or a model that does not reason: max_output_tokens is maxSummaryTokens", async () => {
    for (const fields of [{ model: "gpt-5.1", reasoning: { effort: "none" } as never }, { model: "gpt-4o-mini" }]) {
      const { model, requests } = openAIModel(reply(fields.model), { ...fields, useResponsesApi: true, maxTokens: 4000 });
      await summarize(model);
      const body = onlyRequest(requests);
      assertOpenAIResponsesValid(body);
      expect(body.max_output_tokens).toBe(SUMMARY_TOKENS);
    }
  });
});

describe("ChatGoogleGenerativeAI", () => {
  const parts = [{ text: "considering", thought: true }, { text: SUMMARY }];

  test("a thinking budget: maxOutputTokens is the budget plus maxSummaryTokens, within the model's own limit or, without one, its profile's", async () => {
    for (const [maxOutputTokens, expected] of [
      [8000, 2048 + SUMMARY_TOKENS],
      [2500, 2500],
      [undefined, 2048 + SUMMARY_TOKENS],
    ] as const) {
      const { model, requests, offline } = geminiModel(parts, { thinkingConfig: { thinkingBudget: 2048 }, ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }) });
      await summarize(model, offline);
      const body = onlyRequest(requests);
      assertGeminiValid(body);
      const config = body.generationConfig as { maxOutputTokens: number; thinkingConfig: unknown };
      expect(config.thinkingConfig).toEqual({ thinkingBudget: 2048 });
      expect(config.maxOutputTokens).toBe(expected);
      expect(model.maxOutputTokens).toBe(maxOutputTokens);
    }
  });

  test("a budget larger than the profile's limit allows: the profile's limit", async () => {
    // gemini-2.0-flash's profile gives 8,192 output tokens; a budget set on it is the user's own choice.
    const { model, requests, offline } = geminiModel(parts, { model: "gemini-2.0-flash", thinkingConfig: { thinkingBudget: 8000 } });
    await summarize(model, offline);
    expect((onlyRequest(requests).generationConfig as { maxOutputTokens: number }).maxOutputTokens).toBe(8192);
  });

  test("thinking off (budget 0), or a model that does not think: maxOutputTokens is maxSummaryTokens", async () => {
    for (const fields of [{ thinkingConfig: { thinkingBudget: 0 } }, { model: "gemini-2.0-flash" }]) {
      const { model, requests, offline } = geminiModel([{ text: SUMMARY }], { maxOutputTokens: 8000, ...fields });
      await summarize(model, offline);
      const body = onlyRequest(requests);
      assertGeminiValid(body);
      expect((body.generationConfig as { maxOutputTokens: number }).maxOutputTokens).toBe(SUMMARY_TOKENS);
    }
  });

  test("dynamic thinking, a thinking level, or a thinking model with no setting: the model keeps its own limit", async () => {
    const cases = [
      { thinkingConfig: { thinkingBudget: -1 }, maxOutputTokens: 8000 },
      { model: "gemini-3-pro-preview", thinkingConfig: { thinkingLevel: "LOW" as const }, maxOutputTokens: 8000 },
      // A model newer than the package's profiles: the setting alone says it thinks.
      { model: "gemini-3.1-pro-preview", thinkingConfig: { thinkingLevel: "LOW" as const }, maxOutputTokens: 8000 },
      { maxOutputTokens: 8000 },
    ];
    for (const fields of cases) {
      const { model, requests, offline } = geminiModel(parts, fields);
      await summarize(model, offline);
      const body = onlyRequest(requests);
      assertGeminiValid(body);
      expect((body.generationConfig as { maxOutputTokens: number }).maxOutputTokens).toBe(8000);
    }
  });
});

describe("where no limit can be applied safely, the prompt and the size rule hold the summary", () => {
  test("the prompt states maxSummaryTokens, and a summary no smaller than what it replaces is refused", async () => {
    const long = "x".repeat(5000);
    const { model, requests } = openAIModel(chatCompletion({ content: long }, "o3-mini"), { model: "o3-mini", reasoning: { effort: "high" } });
    const error = await new SummarizationCompactor({ model, maxSummaryTokens: SUMMARY_TOKENS, raiseOnFailure: true, cache: null })
      .compact(history(), 400, lengthCounter)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SummarizationError);
    expect((error as SummarizationError).reason).toBe("too_large");
    const body = onlyRequest(requests);
    expect("max_completion_tokens" in body).toBe(false);
    expect(JSON.stringify(body.messages)).toContain(`within about ${SUMMARY_TOKENS} tokens`);
  });
});
