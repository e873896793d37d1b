/**
 * The error a real provider integration throws when a request exceeds the
 * model's context window, produced offline: a real `ChatAnthropic` or
 * `ChatOpenAI` is called with a `fetch` that answers as the provider's API
 * does (HTTP 400, Anthropic's "prompt is too long: N tokens > M maximum",
 * OpenAI's `context_length_exceeded`), so the SDK builds its `BadRequestError`
 * and the integration wraps it in `@langchain/core`'s `ContextOverflowError`
 * exactly as it would online.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOpenAI } from "@langchain/openai";

/** Whose error the hidden-window provider throws. */
export type OverflowProvider = "anthropic" | "openai";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "request-id": "req_offline" } });
}

/** The error `provider`'s integration throws for a request of `tokens` against a window of `limit`. */
export async function contextOverflowError(provider: OverflowProvider, tokens: number, limit: number): Promise<Error> {
  try {
    if (provider === "anthropic") {
      const model = new ChatAnthropic({
        model: "claude-sonnet-4-5",
        apiKey: "offline",
        maxRetries: 0,
        clientOptions: {
          fetch: async () => jsonResponse(400, { type: "error", error: { type: "invalid_request_error", message: `prompt is too long: ${tokens} tokens > ${limit} maximum` } }),
        },
      });
      await model.invoke("x");
    } else {
      const model = new ChatOpenAI({
        model: "gpt-4o",
        apiKey: "offline",
        maxRetries: 0,
        configuration: {
          fetch: async () =>
            jsonResponse(400, {
              error: {
                message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
                type: "invalid_request_error",
                param: "messages",
                code: "context_length_exceeded",
              },
            }),
        },
      });
      await model.invoke("x");
    }
  } catch (error) {
    return error as Error;
  }
  throw new Error(`the ${provider} stub accepted an over-long request`);
}
