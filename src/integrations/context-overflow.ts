/**
 * Recognising a provider's "the request is too long" error, so an
 * integration can compact harder and retry instead of failing the run.
 *
 * Token counts are estimates: tokenizers differ by provider (tool-use
 * blocks, reasoning content and CJK text are where they differ most), and a
 * provider's real window may be smaller than the one configured. A request
 * can therefore still be refused. Recognised, whatever copy of
 * `@langchain/core` or of a provider package threw it:
 *
 * - `@langchain/core`'s `ContextOverflowError` (what `ChatOpenAI` and
 *   `ChatAnthropic` throw for it), by its name or its `CONTEXT_OVERFLOW`
 *   error code, and whatever it wraps as `cause`;
 * - the raw errors of integrations that do not wrap theirs: OpenAI and
 *   compatible servers (`context_length_exceeded`, "maximum context length",
 *   "exceeds the context window"), Anthropic ("prompt is too long"), Google
 *   Gemini ("input token count ... exceeds the maximum number of tokens"),
 *   AWS Bedrock (a `ValidationException` saying the input is too long) and
 *   Mistral ("too large for model with ... maximum context length").
 *
 * Where the message says how many tokens the request had and what the
 * limit is, both are read, so the retry can be sized by the provider's own
 * count.
 */

/** What a recognised overflow says. */
export interface ContextOverflow {
  /** The request's size as the provider counted it, when its error says. */
  requestTokens?: number;
  /** The provider's limit, when its error says. */
  limitTokens?: number;
  /** The error that was recognised (the one thrown, or the cause it wraps). */
  error: unknown;
}

/** Phrases of an overflow in the providers' messages (lower case). */
const OVERFLOW_PHRASES = [
  "context_length_exceeded",
  "maximum context length",
  "exceeds the context window",
  "input tokens exceed the configured limit",
  "prompt is too long",
  "input is too long",
  "exceeds the maximum number of tokens allowed",
  "too many input tokens",
  "context window exceeded",
  "reduce the length of the messages",
];

/** `(request, limit)` read off a message, by provider wording; the first pattern that matches wins. */
const COUNT_PATTERNS: { pattern: RegExp; request: number; limit: number }[] = [
  // Anthropic (and Claude on Bedrock): "prompt is too long: 215345 tokens > 200000 maximum"
  { pattern: /(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)\s*maximum/i, request: 1, limit: 2 },
  // OpenAI: "maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens"
  { pattern: /maximum context length is (\d[\d,]*) tokens?[^]*?resulted in (\d[\d,]*) tokens?/i, request: 2, limit: 1 },
  // vLLM and other OpenAI-compatible servers: "maximum context length is 4096 tokens. However, you requested 5000 tokens"
  { pattern: /maximum context length is (\d[\d,]*) tokens?[^]*?requested (\d[\d,]*) tokens?/i, request: 2, limit: 1 },
  // Gemini: "The input token count (1250000) exceeds the maximum number of tokens allowed (1048576)"
  { pattern: /input token count \((\d[\d,]*)\) exceeds the maximum number of tokens allowed \((\d[\d,]*)\)/i, request: 1, limit: 2 },
  // Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"
  { pattern: /contains (\d[\d,]*) tokens[^]*?model with (\d[\d,]*) maximum context length/i, request: 1, limit: 2 },
];

function fieldOf(value: unknown, key: string): unknown {
  try {
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  } catch {
    return undefined; // a getter that throws: no such field as far as this is concerned
  }
}

function messageOf(error: unknown): string {
  if (typeof error === "string") return error;
  const message = fieldOf(error, "message");
  return typeof message === "string" ? message : "";
}

function toNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.replace(/,/g, ""));
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Whether this one error (not its causes) says the context overflowed. */
function saysOverflow(error: unknown): boolean {
  if (fieldOf(error, "name") === "ContextOverflowError" || fieldOf(error, "lc_error_code") === "CONTEXT_OVERFLOW") return true;
  // OpenAI's SDK puts the code on the error and in its body; compatible servers often put it in `error.code`.
  for (const code of [fieldOf(error, "code"), fieldOf(fieldOf(error, "error"), "code")]) if (code === "context_length_exceeded") return true;
  const message = messageOf(error).toLowerCase();
  if (message === "") return false;
  if (OVERFLOW_PHRASES.some((phrase) => message.includes(phrase))) {
    // "input is too long" alone is Bedrock's wording for an overflow only on a validation error; elsewhere it may be an argument check.
    if (message.includes("input is too long") && !OVERFLOW_PHRASES.some((phrase) => phrase !== "input is too long" && message.includes(phrase))) {
      return fieldOf(error, "name") === "ValidationException" || fieldOf(error, "status") === 400 || fieldOf(fieldOf(error, "$metadata"), "httpStatusCode") === 400;
    }
    return true;
  }
  return false;
}

/** The counts an error's message gives, if any. */
function countsIn(error: unknown): Pick<ContextOverflow, "requestTokens" | "limitTokens"> {
  const message = messageOf(error);
  for (const { pattern, request, limit } of COUNT_PATTERNS) {
    const match = pattern.exec(message);
    if (match === null) continue;
    const counts: Pick<ContextOverflow, "requestTokens" | "limitTokens"> = {};
    const requestTokens = toNumber(match[request]);
    const limitTokens = toNumber(match[limit]);
    if (requestTokens !== undefined) counts.requestTokens = requestTokens;
    if (limitTokens !== undefined) counts.limitTokens = limitTokens;
    return counts;
  }
  return {};
}

/**
 * The overflow `error` reports, or `null` when it is anything else. Follows
 * `cause` (a wrapped provider error carries the counts) a few levels deep.
 */
export function contextOverflowOf(error: unknown): ContextOverflow | null {
  let current: unknown = error;
  let recognised: unknown = null;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    if (saysOverflow(current)) {
      recognised ??= current;
      const counts = countsIn(current);
      if (counts.requestTokens !== undefined || counts.limitTokens !== undefined) return { ...counts, error: current };
    }
    current = fieldOf(current, "cause");
  }
  return recognised === null ? null : { error: recognised };
}
