import type { BaseMessage } from "@langchain/core/messages";
import { visitMessageText } from "./text";

/** Characters per token assumed by {@link approximateTokenCounter}. */
export const APPROXIMATE_CHARS_PER_TOKEN = 4;
/** Tokens charged per image block, whatever its size (OpenAI's charge for one 512×512 high-detail tile plus base). */
export const IMAGE_BLOCK_TOKENS = 765;
/** Tokens charged per message for its role and framing, as in OpenAI's chat format. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

/** The approximate token count of one message. */
export function approximateMessageTokens(message: BaseMessage): number {
  let chars = 0;
  let images = 0;
  visitMessageText(message, {
    text(value) {
      chars += value.length;
    },
    image() {
      images += 1;
    },
  });
  return MESSAGE_OVERHEAD_TOKENS + Math.ceil(chars / APPROXIMATE_CHARS_PER_TOKEN) + images * IMAGE_BLOCK_TOKENS;
}

/**
 * A fast, offline, dependency-free estimate: about four characters a token
 * over text, content blocks, tool-call names and JSON arguments, tool-call
 * ids and names, plus {@link IMAGE_BLOCK_TOKENS} per image and
 * {@link MESSAGE_OVERHEAD_TOKENS} per message. The compactor's default.
 */
export function approximateTokenCounter(messages: BaseMessage[]): number {
  let total = 0;
  for (const message of messages) total += approximateMessageTokens(message);
  return total;
}
