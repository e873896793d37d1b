/**
 * Holding a summary model to an output-token limit. LangChain's chat models
 * take that limit as a constructor field read when the request is built
 * (`maxTokens` on ChatOpenAI and ChatAnthropic, `maxOutputTokens` on
 * ChatGoogleGenerativeAI), not as a call option, so the limit is applied by
 * building a copy of the model from the arguments it was constructed with
 * (`lc_kwargs`, which every serializable LangChain model keeps) plus the
 * limit. The user's model is never modified.
 */

/** The constructor fields that limit output tokens, in the order they are tried. */
const LIMIT_FIELDS = ["maxOutputTokens", "maxTokens"] as const;

interface Reconstructible {
  lc_kwargs?: Record<string, unknown>;
  constructor: new (fields: Record<string, unknown>) => unknown;
}

const copies = new WeakMap<object, Map<number, unknown>>();

/**
 * A copy of `model` limited to `maxTokens` output tokens, or `model` itself
 * when it has no such field or cannot be rebuilt (then the limit is stated in
 * the prompt only). Copies are remembered per model and limit.
 */
export function withOutputLimit<T extends object>(model: T, maxTokens: number): { model: T; bounded: boolean } {
  const field = LIMIT_FIELDS.find((name) => name in model);
  const { lc_kwargs: kwargs, constructor: Ctor } = model as unknown as Reconstructible;
  if (field === undefined || typeof kwargs !== "object" || kwargs === null || typeof Ctor !== "function") return { model, bounded: false };
  if ((model as Record<string, unknown>)[field] === maxTokens) return { model, bounded: true };
  let byLimit = copies.get(model);
  const known = byLimit?.get(maxTokens);
  if (known !== undefined) return { model: known as T, bounded: true };
  try {
    const fields: Record<string, unknown> = { ...kwargs, [field]: maxTokens };
    // ChatOpenAI prefers `maxCompletionTokens` over `maxTokens` when both are given.
    if ("maxCompletionTokens" in kwargs) fields.maxCompletionTokens = maxTokens;
    const copy = new Ctor(fields) as Record<string, unknown>;
    if (copy[field] !== maxTokens) return { model, bounded: false };
    if (byLimit === undefined) copies.set(model, (byLimit = new Map()));
    byLimit.set(maxTokens, copy);
    return { model: copy as T, bounded: true };
  } catch {
    return { model, bounded: false };
  }
}
