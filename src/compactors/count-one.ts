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
  // A replacement counted before (the same stand-in met again) needs no list of one.
  const cached = cache?.get(counter.key, message);
  if (cached !== undefined) return cached;
  const counts = new MessageCounts([message], counter, cache);
  try {
    return counts.of(0);
  } catch (error) {
    if (!(error instanceof AsyncCountNeeded)) throw error;
    return counts.countAll().then(() => counts.of(0));
  }
}

/** The tokens of every message of `counts` (counting what is not known yet) and their sum. */
export async function countEvery(counts: MessageCounts, length: number): Promise<number> {
  await counts.countAll();
  let total = 0;
  for (let index = 0; index < length; index += 1) total += counts.of(index);
  return total;
}
