import type { BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import type { Runnable } from "@langchain/core/runnables";
import { assertConversation, SlidingWindowCompactor } from "../compactors/sliding-window";
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
   * A compactor to use instead of one built from `minKeepSteps` and
   * `omissionNote` (for a shared cache or settings). It carries its own
   * settings, so passing either of those beside it is an error rather than a
   * silent choice of one.
   */
  compactor?: SlidingWindowCompactor;
}

/** The run name under which the Runnable form shows up in traces. */
export const COMPACT_MESSAGES_RUN_NAME = "compactMessages";

type Compact = (messages: BaseMessage[]) => Promise<BaseMessage[]>;

/** Validates everything up front, so a bad option fails where it is written, not on the first invocation. */
function compileOptions(options: unknown): Compact {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`compactMessages options must be an object, got ${describeValue(options)}`);
  }
  const { targetTokens, tokenCounter, minKeepSteps, omissionNote, compactor } = options as CompactMessagesOptions;
  assertTokenBudget("targetTokens", targetTokens);
  resolveTokenCounter(tokenCounter);
  let chosen: SlidingWindowCompactor;
  if (compactor !== undefined) {
    if (!(compactor instanceof SlidingWindowCompactor)) {
      throw new TypeError(`\`compactor\` must be a SlidingWindowCompactor, got ${describeValue(compactor)}`);
    }
    const clashing = (["minKeepSteps", "omissionNote"] as const).filter((name) => (options as CompactMessagesOptions)[name] !== undefined);
    if (clashing.length > 0) {
      throw new TypeError(
        `\`${clashing.join("` and `")}\` cannot be combined with \`compactor\`: the compactor carries its own settings (got a SlidingWindowCompactor with minKeepSteps ${compactor.minKeepSteps})`,
      );
    }
    chosen = compactor;
  } else {
    chosen = new SlidingWindowCompactor({
      ...(minKeepSteps !== undefined ? { minKeepSteps } : {}),
      ...(omissionNote !== undefined ? { omissionNote } : {}),
    });
  }
  return async (messages) => {
    assertConversation(messages);
    return (await chosen.compact(messages, targetTokens, tokenCounter)) ?? messages;
  };
}

/**
 * Compacts a message list to a token budget with a
 * {@link SlidingWindowCompactor}, in the two forms of `trimMessages`:
 *
 * - `compactMessages(options)` returns a Runnable for chains, traced under
 *   the run name `"compactMessages"`;
 * - `compactMessages(messages, options)` compacts now.
 *
 * Either way the result is a list: the input array itself when nothing was
 * removed, otherwise a new array of the kept messages (the same objects) and
 * at most one omission note.
 *
 * @example
 * ```ts
 * const chain = compactMessages({ targetTokens: 8_000 }).pipe(model);
 * const reply = await chain.invoke(history);
 * ```
 */
export function compactMessages(options: CompactMessagesOptions): Runnable<BaseMessage[], BaseMessage[]>;
export function compactMessages(messages: BaseMessage[], options: CompactMessagesOptions): Promise<BaseMessage[]>;
export function compactMessages(
  messagesOrOptions: BaseMessage[] | CompactMessagesOptions,
  options?: CompactMessagesOptions,
): Runnable<BaseMessage[], BaseMessage[]> | Promise<BaseMessage[]> {
  if (Array.isArray(messagesOrOptions)) {
    // Reject synchronously-detectable mistakes through the promise, like the compaction itself.
    try {
      const compact = compileOptions(options);
      return compact(messagesOrOptions);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const compact = compileOptions(messagesOrOptions);
  return RunnableLambda.from(compact).withConfig({ runName: COMPACT_MESSAGES_RUN_NAME });
}
