import type { BaseMessage } from "@langchain/core/messages";
import type { MessageContent } from "@langchain/core/messages";

/**
 * Counts the tokens of a list of messages: the same function form that
 * `trimMessages` accepts. The compactor treats every counter as additive over
 * messages (`count([a, b]) === count([a]) + count([b])`), so it calls it one
 * message at a time and caches the answers.
 */
export type TokenCounter = (messages: BaseMessage[]) => number | Promise<number>;

/** Anything with `getNumTokens`, such as a chat model, as `trimMessages` accepts. */
export interface TokenCountingModel {
  /** The tokens of one message's content (a chat model's own count; some models fetch a tokenizer on first use). */
  getNumTokens(content: MessageContent): Promise<number> | number;
}

/** What a `tokenCounter` option accepts: a counter function or a model that counts. */
export type TokenCounterLike = TokenCounter | TokenCountingModel;
