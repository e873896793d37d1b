import type { BaseMessage } from "@langchain/core/messages";
import type { BasePromptValueInterface } from "@langchain/core/prompt_values";
import { RunnableLambda } from "@langchain/core/runnables";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { assertCompactOptions, raceAbort, throwIfAborted } from "../compactors/abort";
import { resolveCompactor } from "../compactors/resolve-compactor";
import type { CompactOptions, Compactor } from "../compactors/compactor";
import { SlidingWindowCompactor } from "../compactors/sliding-window";
import { assertConversation } from "../messages/conversation-check";
import { resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, describeValue } from "../errors";

/** Options of {@link compactMessages}. */
export interface CompactMessagesOptions {
  /** The token budget of the compacted list. Required: a finite number of at least 0. */
  targetTokens: number;
  /** Counts tokens. Default `approximateTokenCounter`. */
  tokenCounter?: TokenCounterLike;
  /** The newest steps of the current task to keep whatever their size. Default `1`. Not with `compactor`. */
  minKeepSteps?: number;
  /** Text of the omission note (`{num_removed}` is filled in); `null` or `""` for none. Not with `compactor`. */
  omissionNote?: string | null;
  /**
   * A compactor to use instead of the sliding window built from
   * `minKeepSteps` and `omissionNote`: any {@link Compactor}, or an array of
   * them, meaning `new CompactionPipeline(array)`. It carries its own
   * settings, so passing either of those beside it is an error rather than a
   * silent choice of one.
   */
  compactor?: Compactor | readonly Compactor[];
}

/** What the Runnable and the direct form take: a message list, or a prompt value (what `prompt.invoke(...)` returns). */
export type CompactMessagesInput = BaseMessage[] | BasePromptValueInterface;

/** Whether `value` is a prompt value (`ChatPromptValue` and the like), recognised by its `toChatMessages` method. */
function isPromptValue(value: unknown): value is BasePromptValueInterface {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as BasePromptValueInterface).toChatMessages === "function";
}

/** The message list of an input: itself, or a prompt value's messages. */
function messagesOf(input: unknown): BaseMessage[] {
  const messages = isPromptValue(input) ? input.toChatMessages() : input;
  assertConversation(messages);
  return messages;
}

/** The run name under which the Runnable form shows up in traces. */
export const COMPACT_MESSAGES_RUN_NAME = "compactMessages";

type Compact = (input: CompactMessagesInput, options?: CompactOptions) => Promise<BaseMessage[]>;

/** Validates everything up front, so a bad option fails where it is written, not on the first invocation. */
function compileOptions(options: unknown): Compact {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`compactMessages options must be an object, got ${describeValue(options)}`);
  }
  const { targetTokens, tokenCounter, minKeepSteps, omissionNote, compactor } = options as CompactMessagesOptions;
  assertTokenBudget("targetTokens", targetTokens);
  resolveTokenCounter(tokenCounter);
  let chosen: Compactor;
  if (compactor !== undefined) {
    chosen = resolveCompactor(compactor);
    const clashing = (["minKeepSteps", "omissionNote"] as const).filter((name) => (options as CompactMessagesOptions)[name] !== undefined);
    if (clashing.length > 0) {
      throw new TypeError(
        `\`${clashing.join("` and `")}\` cannot be combined with \`compactor\`: the compactor carries its own settings (got ${describeValue(compactor)})`,
      );
    }
  } else {
    chosen = new SlidingWindowCompactor({
      ...(minKeepSteps !== undefined ? { minKeepSteps } : {}),
      ...(omissionNote !== undefined ? { omissionNote } : {}),
    });
  }
  return async (input, compactOptions = {}) => {
    assertCompactOptions(compactOptions);
    const messages = messagesOf(input);
    const { signal } = compactOptions;
    throwIfAborted(signal);
    const compacted = await raceAbort(chosen.compact(messages, targetTokens, tokenCounter, signal === undefined ? undefined : { signal }), signal);
    return compacted ?? messages;
  };
}

/**
 * Compacts a message list to a token budget (by default with a
 * {@link SlidingWindowCompactor}; any compactor or array of them with
 * `compactor`), in the two forms of `trimMessages`:
 *
 * - `compactMessages(options)` returns a Runnable for chains, traced under
 *   the run name `"compactMessages"`. It takes a message list or a prompt
 *   value, so `prompt.pipe(compactMessages(...)).pipe(model)` works. The
 *   run's `signal` (and `timeout`, which LangChain turns into one) aborts it:
 *   the invocation rejects, even when a counter never settles.
 * - `compactMessages(messages, options, { signal })` compacts now.
 *
 * Either way the result is a list: the input list itself when nothing
 * changed (a prompt value's messages), otherwise a new array of the kept
 * messages (the same objects), their stand-ins and what was added.
 *
 * @example
 * ```ts
 * const chain = compactMessages({ targetTokens: 8_000 }).pipe(model);
 * const reply = await chain.invoke(history);
 * ```
 */
export function compactMessages(options: CompactMessagesOptions): Runnable<CompactMessagesInput, BaseMessage[]>;
export function compactMessages(
  messages: CompactMessagesInput,
  options: CompactMessagesOptions,
  compactOptions?: CompactOptions,
): Promise<BaseMessage[]>;
export function compactMessages(
  messagesOrOptions: CompactMessagesInput | CompactMessagesOptions,
  options?: CompactMessagesOptions,
  compactOptions?: CompactOptions,
): Runnable<CompactMessagesInput, BaseMessage[]> | Promise<BaseMessage[]> {
  if (Array.isArray(messagesOrOptions) || isPromptValue(messagesOrOptions)) {
    // Reject synchronously-detectable mistakes through the promise, like the compaction itself.
    try {
      const compact = compileOptions(options);
      return compact(messagesOrOptions, compactOptions);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const compact = compileOptions(messagesOrOptions);
  return RunnableLambda.from((input: CompactMessagesInput, config?: RunnableConfig) =>
    compact(input, config?.signal === undefined ? {} : { signal: config.signal }),
  ).withConfig({ runName: COMPACT_MESSAGES_RUN_NAME });
}
