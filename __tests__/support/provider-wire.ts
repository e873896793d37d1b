/**
 * Providers' chat models talking to a fake API, offline: each model is the
 * real LangChain class (`ChatAnthropic`, `ChatOpenAI` on Chat Completions or
 * the Responses API, `ChatGoogleGenerativeAI`), its SDK handed a `fetch`
 * that records every request body and answers with a raw API response
 * written here. So the request is the one the SDK would put on the wire, and
 * the reply is the `AIMessage` the provider package's own parser builds from
 * that response.
 *
 * The Anthropic and OpenAI SDKs take a custom `fetch` (`clientOptions`,
 * `configuration`). `@google/generative-ai` calls the global `fetch`, so the
 * Gemini model is invoked with the global replaced for the duration of one
 * call only (`withGlobalFetch`).
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatOpenAI } from "@langchain/openai";
import type { BaseMessage } from "@langchain/core/messages";

type AnthropicFields = Exclude<ConstructorParameters<typeof ChatAnthropic>[0], string | undefined>;
type OpenAIFields = Exclude<ConstructorParameters<typeof ChatOpenAI>[0], string | undefined>;
type GeminiFields = Exclude<ConstructorParameters<typeof ChatGoogleGenerativeAI>[0], string | undefined>;

/** A request as the SDK sent it: its URL and its JSON body. */
export interface WireRequest {
  url: string;
  body: Record<string, unknown>;
}

type Fetch = (input: unknown, init?: { body?: unknown }) => Promise<Response>;

function jsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

/** A fetch that records each request and answers `respond(call)`. */
function recordingFetch(requests: WireRequest[], respond: (call: number) => unknown): Fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : String((input as { url?: unknown }).url ?? input);
    requests.push({ url, body: JSON.parse(String(init?.body)) as Record<string, unknown> });
    return jsonResponse(respond(requests.length - 1));
  };
}

/** What a fake answers on call `n`: the same for every call, or per call. */
type Script<T> = T | ((call: number) => T);
const pick = <T>(script: Script<T>, call: number): T => (typeof script === "function" ? (script as (call: number) => T)(call) : script);

// ---- Anthropic Messages API ----------------------------------------------------------------------------------

/** A Messages API response with these content blocks. */
export function anthropicMessage(content: unknown[], stopReason = "end_turn"): Record<string, unknown> {
  return {
    id: "msg_offline",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20 },
  };
}

/** A ChatAnthropic whose API answers `content` (or a whole response). */
export function anthropicModel(content: Script<unknown[] | Record<string, unknown>>, fields: Partial<AnthropicFields> = {}) {
  const requests: WireRequest[] = [];
  const fetch = recordingFetch(requests, (call) => {
    const answer = pick(content, call);
    return Array.isArray(answer) ? anthropicMessage(answer) : answer;
  });
  const model = new ChatAnthropic({ model: "claude-sonnet-4-5-20250929", apiKey: "sk-ant-offline", maxRetries: 0, ...fields, clientOptions: { fetch } });
  return { model, requests };
}

// ---- OpenAI Chat Completions ----------------------------------------------------------------------------------

/** A Chat Completions response with this assistant message. */
export function chatCompletion(message: Record<string, unknown>, model = "gpt-4o-mini"): Record<string, unknown> {
  return {
    id: "chatcmpl-offline",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: null, refusal: null, ...message }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

// ---- OpenAI Responses API -------------------------------------------------------------------------------------

/** A Responses API response with these output items. */
export function responsesResult(output: unknown[], model = "gpt-4o-mini"): Record<string, unknown> {
  return {
    id: "resp_offline",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: null,
    model,
    output,
    parallel_tool_calls: true,
    metadata: {},
    usage: {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120,
    },
  };
}

/** A Responses API `message` output item holding these parts (`output_text` by default). */
export function responsesMessage(parts: unknown[], phase?: string): Record<string, unknown> {
  return { type: "message", id: `msg_${parts.length}`, role: "assistant", status: "completed", content: parts, ...(phase === undefined ? {} : { phase }) };
}

export const outputText = (text: string) => ({ type: "output_text", text, annotations: [] });

/** A ChatOpenAI whose API answers `respond(call)` (a Chat Completions or Responses body, whichever the model uses). */
export function openAIModel(respond: Script<Record<string, unknown>>, fields: Partial<OpenAIFields> = {}) {
  const requests: WireRequest[] = [];
  const fetch = recordingFetch(requests, (call) => pick(respond, call));
  const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "sk-offline", maxRetries: 0, ...fields, configuration: { fetch } });
  return { model, requests };
}

// ---- Google Gemini --------------------------------------------------------------------------------------------

/** A generateContent response with one candidate of these parts. */
export function geminiResponse(parts: unknown[], finishReason = "STOP"): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
    modelVersion: "gemini-2.5-flash",
  };
}

/**
 * A ChatGoogleGenerativeAI whose API answers `parts`. Its SDK reads the
 * global `fetch` when it sends (and so does every copy of the model a stage
 * builds), so whatever calls the model runs inside `offline(...)`, which
 * replaces the global for that run alone and restores it after. Jest runs
 * the tests of a file one at a time, so no other test sees the replacement.
 */
export function geminiModel(parts: Script<unknown[]>, fields: Partial<GeminiFields> = {}) {
  const requests: WireRequest[] = [];
  const fetch = recordingFetch(requests, (call) => geminiResponse(pick(parts, call)));
  const model = new ChatGoogleGenerativeAI({ model: "gemini-2.5-flash", apiKey: "offline-key", maxRetries: 0, ...fields });
  const offline = async <T>(run: () => Promise<T>): Promise<T> => {
    const real = globalThis.fetch;
    globalThis.fetch = fetch as typeof globalThis.fetch;
    try {
      return await run();
    } finally {
      globalThis.fetch = real;
    }
  };
  return { model, requests, offline };
}

/** The kinds of content blocks a reply holds, for test names and messages. */
export function blockTypes(message: BaseMessage): string[] {
  return typeof message.content === "string" ? ["string"] : message.content.map((block) => String((block as { type?: unknown }).type));
}
