/**
 * The errors providers' chat models throw when a request is too long, made offline: each is the real LangChain
 * class whose SDK is handed a `fetch` answering with the provider's own error response (status and body as the API
 * sends them), so the error is exactly what the integration throws (`ChatOpenAI` and `ChatAnthropic` wrap theirs in
 * `@langchain/core`'s `ContextOverflowError`; `ChatGoogleGenerativeAI` throws the SDK's error as it is). Bedrock's
 * SDK is not installed: its `ValidationException` is built with the fields the AWS SDK gives it.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { HumanMessage } from "@langchain/core/messages";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatOpenAI } from "@langchain/openai";

function errorFetch(status: number, body: unknown) {
  return async () => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** What `model.invoke` rejected with. */
async function thrownBy(invoke: () => Promise<unknown>): Promise<unknown> {
  try {
    await invoke();
  } catch (error) {
    return error;
  }
  throw new Error("the model did not throw");
}

export const OPENAI_OVERFLOW_MESSAGE =
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens (130000 in the messages, 532 in the functions). Please reduce the length of the messages or functions.";
export const ANTHROPIC_OVERFLOW_MESSAGE = "prompt is too long: 215345 tokens > 200000 maximum";
export const GEMINI_OVERFLOW_MESSAGE = "The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).";

/** `ChatOpenAI`'s error for an overflow on Chat Completions (a `ContextOverflowError` wrapping the SDK's 400). */
export function openAIOverflow(message = OPENAI_OVERFLOW_MESSAGE): Promise<unknown> {
  const fetch = errorFetch(400, { error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } });
  const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "sk-offline", maxRetries: 0, configuration: { fetch } });
  return thrownBy(() => model.invoke([new HumanMessage("hi")]));
}

/** `ChatOpenAI`'s error on the Responses API, whose message gives no counts. */
export function openAIResponsesOverflow(): Promise<unknown> {
  const fetch = errorFetch(400, { error: { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", param: "input", code: "context_length_exceeded" } });
  const model = new ChatOpenAI({ model: "gpt-5", apiKey: "sk-offline", maxRetries: 0, useResponsesApi: true, configuration: { fetch } });
  return thrownBy(() => model.invoke([new HumanMessage("hi")]));
}

/** `ChatAnthropic`'s error for an overflow (a `ContextOverflowError` wrapping the SDK's 400). */
export function anthropicOverflow(message = ANTHROPIC_OVERFLOW_MESSAGE): Promise<unknown> {
  const fetch = errorFetch(400, { type: "error", error: { type: "invalid_request_error", message } });
  const model = new ChatAnthropic({ model: "claude-sonnet-4-5-20250929", apiKey: "sk-ant-offline", maxRetries: 0, clientOptions: { fetch } });
  return thrownBy(() => model.invoke([new HumanMessage("hi")]));
}

/** `ChatGoogleGenerativeAI`'s error for an overflow: the SDK's own fetch error, not wrapped. */
export async function geminiOverflow(message = GEMINI_OVERFLOW_MESSAGE): Promise<unknown> {
  const model = new ChatGoogleGenerativeAI({ model: "gemini-2.5-flash", apiKey: "offline", maxRetries: 0 });
  const original = globalThis.fetch;
  globalThis.fetch = errorFetch(400, { error: { code: 400, message, status: "INVALID_ARGUMENT" } }) as typeof fetch;
  try {
    return await thrownBy(() => model.invoke([new HumanMessage("hi")]));
  } finally {
    globalThis.fetch = original;
  }
}

/** AWS Bedrock's `ValidationException` for an input over the model's limit, with the fields the AWS SDK sets. */
export function bedrockOverflow(message = "Input is too long for requested model."): Error {
  return Object.assign(new Error(message), { name: "ValidationException", $fault: "client", $metadata: { httpStatusCode: 400, attempts: 1 } });
}
