/**
 * Holding a summary model to an output-token limit. LangChain's chat models
 * take that limit as a constructor field read when the request is built
 * (`maxTokens` on ChatOpenAI and ChatAnthropic, `maxOutputTokens` on
 * ChatGoogleGenerativeAI), not as a call option, so the limit is applied by
 * building a copy of the model from the arguments it was constructed with
 * (`lc_kwargs`, which every serializable LangChain model keeps) plus the
 * limit. The user's model is never modified.
 *
 * A provider's output limit covers the model's hidden reasoning as well as
 * its answer: Anthropic's `max_tokens` includes thinking (and a request
 * whose `thinking.budget_tokens` is not below `max_tokens` is refused),
 * OpenAI's `max_completion_tokens` / `max_output_tokens` include reasoning
 * tokens, Gemini bills thoughts against `maxOutputTokens`. A limit of
 * `maxSummaryTokens` would leave a reasoning model no room to answer, or
 * make the request invalid. So the limit follows the reasoning the model's
 * own request carries (read from its `invocationParams()`, the parameters it
 * sends):
 * - no reasoning: the limit is `maxSummaryTokens`;
 * - reasoning with a token budget (Anthropic `thinking: { type: "enabled",
 *   budget_tokens }`, Gemini `thinkingConfig.thinkingBudget` above 0): the
 *   budget plus `maxSummaryTokens`, so the budget stays below the limit and
 *   the answer keeps its `maxSummaryTokens`; never above the limit the model
 *   already sends (that request is the user's own), nor, when it sends none,
 *   above its profile's `maxOutputTokens`;
 * - reasoning without a budget (Anthropic adaptive thinking, an OpenAI
 *   reasoning model at any effort but `"none"`, Gemini dynamic thinking
 *   `thinkingBudget: -1` or a `thinkingLevel`): no share of the limit is
 *   known to be left for the answer, so none is imposed. The model is used
 *   as it is, with its own limit; the prompt states the size, and a summary
 *   no smaller than what it replaces is refused.
 *
 * When the request sets nothing, the provider's default applies: Anthropic
 * thinks only when asked; any other model is taken to reason when its
 * profile says it gives reasoning output (`profile.reasoningOutput`, as
 * OpenAI's o-series and GPT-5 and Gemini 2.5 and 3 do by default) or when
 * LangChain sends it `max_completion_tokens` (OpenAI's reasoning models).
 * A copy whose request does not carry the chosen limit and the same
 * reasoning (a `max_tokens` in `invocationKwargs` or `modelKwargs` wins over
 * the field) is not used either: the model as it is.
 */

/** The constructor fields that limit output tokens, in the order they are tried. */
const LIMIT_FIELDS = ["maxOutputTokens", "maxTokens"] as const;

interface Reconstructible {
  lc_kwargs?: Record<string, unknown>;
  constructor: new (fields: Record<string, unknown>) => unknown;
}

/** How much of an output limit a request's reasoning may take: nothing, at most a budget, or an unknown share. */
type Reasoning = { kind: "none" } | { kind: "budget"; tokens: number } | { kind: "unknown" };

type Params = Record<string, unknown>;

/** What a model is held to (or not) for one limit. */
interface Bounded<T> {
  model: T;
  bounded: boolean;
}

const chosen = new WeakMap<object, Map<number, Bounded<unknown>>>();

const isRecord = (value: unknown): value is Params => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The model to ask for a summary of at most `maxTokens` tokens: a copy
 * limited as the module comment says (`bounded: true`), or `model` itself
 * when it has no limit field, cannot be rebuilt, or reasons without a budget
 * (`bounded: false`; then the limit is stated in the prompt only). Remembered
 * per model and limit.
 */
export function withOutputLimit<T extends object>(model: T, maxTokens: number): Bounded<T> {
  let byLimit = chosen.get(model);
  const known = byLimit?.get(maxTokens);
  if (known !== undefined) return known as Bounded<T>;
  const result = chooseLimited(model, maxTokens);
  if (byLimit === undefined) chosen.set(model, (byLimit = new Map()));
  byLimit.set(maxTokens, result);
  return result;
}

function chooseLimited<T extends object>(model: T, maxTokens: number): Bounded<T> {
  const unbounded: Bounded<T> = { model, bounded: false };
  const field = LIMIT_FIELDS.find((name) => name in model);
  const { lc_kwargs: kwargs, constructor: Ctor } = model as unknown as Reconstructible;
  if (field === undefined || typeof kwargs !== "object" || kwargs === null || typeof Ctor !== "function") return unbounded;
  const params = requestParams(model);
  if (params === "unreadable") return unbounded;
  const reasoning = params === undefined ? NO_REASONING : reasoningOf(params, model);
  if (reasoning.kind === "unknown") return unbounded;
  let limit = maxTokens;
  if (reasoning.kind === "budget") {
    const profileLimit = profileOf(model).maxOutputTokens;
    const ceiling = (params === undefined ? undefined : requestLimit(params)) ?? (typeof profileLimit === "number" ? profileLimit : undefined);
    limit = Math.min(reasoning.tokens + maxTokens, ceiling ?? Number.POSITIVE_INFINITY);
  }
  if ((model as Record<string, unknown>)[field] === limit) return { model, bounded: true };
  try {
    const fields: Record<string, unknown> = { ...kwargs, [field]: limit };
    // ChatOpenAI prefers `maxCompletionTokens` over `maxTokens` when both are given.
    if ("maxCompletionTokens" in kwargs) fields.maxCompletionTokens = limit;
    const copy = new Ctor(fields) as T;
    if ((copy as Record<string, unknown>)[field] !== limit) return unbounded;
    if (params !== undefined) {
      const sent = requestParams(copy);
      if (sent === undefined || sent === "unreadable" || requestLimit(sent) !== limit || !sameReasoning(reasoningOf(sent, copy), reasoning)) return unbounded;
    }
    return { model: copy, bounded: true };
  } catch {
    return unbounded;
  }
}

const NO_REASONING: Reasoning = { kind: "none" };

/**
 * The parameters `model` sends with a request (its `invocationParams()`);
 * `undefined` when it has no such method (not a provider's chat model), and
 * `"unreadable"` when it throws or answers something else.
 */
function requestParams(model: object): Params | undefined | "unreadable" {
  const read = (model as { invocationParams?: unknown }).invocationParams;
  if (typeof read !== "function") return undefined;
  try {
    const params: unknown = read.call(model, {});
    return isRecord(params) ? params : "unreadable";
  } catch {
    return "unreadable";
  }
}

/** The output limit a request carries, in whichever provider's parameter. */
function requestLimit(params: Params): number | undefined {
  const generation = isRecord(params.generationConfig) ? params.generationConfig : {};
  for (const value of [params.max_tokens, params.max_completion_tokens, params.max_output_tokens, generation.maxOutputTokens]) {
    if (typeof value === "number") return value;
  }
  return undefined;
}

/** What a model's profile says about it (`{}` when it has none). */
function profileOf(model: object): { reasoningOutput?: unknown; maxOutputTokens?: unknown } {
  try {
    const profile: unknown = (model as { profile?: unknown }).profile;
    return isRecord(profile) ? profile : {};
  } catch {
    return {};
  }
}

/** The provider a LangChain model names in its traces (`ls_provider`), if it says. */
function providerOf(model: object): unknown {
  const read = (model as { getLsParams?: unknown }).getLsParams;
  if (typeof read !== "function") return undefined;
  try {
    const params: unknown = read.call(model, {});
    return isRecord(params) ? params.ls_provider : undefined;
  } catch {
    return undefined;
  }
}

/** The reasoning a request carries: what it sets for Anthropic, Gemini or OpenAI, else the provider's default. */
function reasoningOf(params: Params, model: object): Reasoning {
  // Anthropic: `thinking`.
  const thinking = params.thinking;
  if (isRecord(thinking)) {
    if (thinking.type === "disabled") return NO_REASONING;
    if (thinking.type === "enabled" && typeof thinking.budget_tokens === "number") return { kind: "budget", tokens: thinking.budget_tokens };
    return { kind: "unknown" }; // adaptive, or a kind this code does not know
  }
  // Gemini: `generationConfig.thinkingConfig`; `includeThoughts` alone leaves the amount to the default.
  const generation = isRecord(params.generationConfig) ? params.generationConfig : {};
  const thinkingConfig = generation.thinkingConfig;
  if (isRecord(thinkingConfig)) {
    if (thinkingConfig.thinkingLevel !== undefined) return { kind: "unknown" };
    const budget = thinkingConfig.thinkingBudget;
    if (typeof budget === "number") return budget === 0 ? NO_REASONING : budget > 0 ? { kind: "budget", tokens: budget } : { kind: "unknown" };
  }
  // OpenAI: `reasoning_effort` (Chat Completions) or `reasoning` (Responses API); only "none" turns reasoning off.
  const effort = params.reasoning_effort ?? (isRecord(params.reasoning) ? params.reasoning.effort : undefined);
  if (effort === "none") return NO_REASONING;
  if (effort !== undefined || isRecord(params.reasoning)) return { kind: "unknown" };
  // Nothing set: the provider's default.
  if (providerOf(model) === "anthropic") return NO_REASONING;
  if ("max_completion_tokens" in params || profileOf(model).reasoningOutput === true) return { kind: "unknown" };
  return NO_REASONING;
}

function sameReasoning(a: Reasoning, b: Reasoning): boolean {
  return a.kind === b.kind && (a.kind !== "budget" || a.tokens === (b as { tokens: number }).tokens);
}
