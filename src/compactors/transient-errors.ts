import { raceAbort, throwIfAborted } from "./abort";

/**
 * Which errors of a model call are worth retrying, and the retry itself.
 *
 * Transient: a rate limit (429), a timeout (408), a server error (5xx,
 * Anthropic's 529 "overloaded"), a dropped or refused connection, and any
 * error `@langchain/core` marked retryable. Not: an abort, a refused request
 * (other 4xx, an overflow), an error marked not retryable, an answer that
 * was no summary.
 */

/** `@langchain/core`'s retryability mark (`stampRetryable`), read by its registry symbol so any copy of core is understood. */
const RETRYABLE = Symbol.for("langchain.errors.retryable");

const TRANSIENT_CODES = new Set(["ECONNRESET", "ETIMEDOUT", "ECONNREFUSED", "EPIPE", "EAI_AGAIN", "ENETUNREACH", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT"]);
const TRANSIENT_NAMES = new Set(["TimeoutError", "APIConnectionError", "APIConnectionTimeoutError", "InternalServerError", "RateLimitError", "ThrottlingException", "ServiceUnavailableException"]);

function field(value: unknown, key: string | symbol): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Record<string | symbol, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** Whether retrying the call that failed with `error` may succeed (see the module comment). */
export function isTransientError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const mark = Object.getOwnPropertyDescriptor(error, RETRYABLE)?.value;
  if (typeof mark === "boolean") return mark;
  const name = field(error, "name");
  if (name === "AbortError") return false;
  const status = field(error, "status") ?? field(error, "statusCode") ?? field(field(error, "$metadata"), "httpStatusCode");
  if (typeof status === "number") return status === 408 || status === 429 || status >= 500;
  if (field(error, "lc_error_code") === "MODEL_RATE_LIMIT") return true;
  const code = field(error, "code");
  if (typeof code === "string" && TRANSIENT_CODES.has(code)) return true;
  if (typeof name === "string" && TRANSIENT_NAMES.has(name)) return true;
  const cause = field(error, "cause");
  return cause !== undefined && cause !== error && isTransientError(cause);
}

/** How to retry: how many times, and the first delay (doubled each time, with up to a quarter of jitter). */
export interface RetryPolicy {
  retries: number;
  firstDelayMs: number;
}

/** The longest wait between two attempts. */
const MAX_DELAY_MS = 30_000;

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return raceAbort(waited, signal).finally(() => clearTimeout(timer));
}

/**
 * `attempt()`, retried after a transient error up to `policy.retries` times
 * with a growing pause; any other error, or the last, is rethrown as it is.
 * An abort stops the waiting and rejects with the signal's reason.
 * `onRetry` hears of each error retried.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  onRetry?: (error: unknown, attemptNumber: number) => void,
): Promise<T> {
  for (let tried = 0; ; tried += 1) {
    throwIfAborted(signal);
    try {
      return await attempt();
    } catch (error) {
      throwIfAborted(signal);
      if (tried >= policy.retries || !isTransientError(error)) throw error;
      onRetry?.(error, tried + 1);
      const base = Math.min(MAX_DELAY_MS, policy.firstDelayMs * 2 ** tried);
      await pause(base + Math.random() * base * 0.25, signal);
    }
  }
}
