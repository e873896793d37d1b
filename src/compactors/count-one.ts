import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCountCache } from "../counting/cache";
import { AsyncCountNeeded, MessageCounts } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";

/**
 * The tokens of one message through the cache: synchronously when the
 * counter is (so a loop over thousands of candidates awaits nothing), else a
 * promise.
 */
export function countOne(message: BaseMessage, counter: MessageCounter, cache: TokenCountCache | null): number | Promise<number> {
  const counts = new MessageCounts([message], counter, cache);
  try {
    return counts.of(0);
  } catch (error) {
    if (!(error instanceof AsyncCountNeeded)) throw error;
    return counts.countAll().then(() => counts.of(0));
  }
}
