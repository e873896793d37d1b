import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCountCache } from "../counting/cache";
import type { MessageCounter, MessageCounts } from "../counting/message-counts";
import { clearedAssistant, holdsReasoning, toolInputText } from "../messages/cleared-assistant";
import { toolCallsIn } from "../messages/exchanges";
import { countOne } from "./count-one";

/**
 * Clearing old reasoning and large tool-call inputs from assistant messages,
 * as pruning clears old tool results (the pruning stage's `clearThinking`
 * and `clearToolInputs`). Where the pieces are, and how each provider's shape
 * stays valid, is `messages/cleared-assistant.ts`.
 *
 * Never cleared: the newest assistant message that calls tools and every
 * message after it (the tool-use turn in progress: Anthropic rejects a
 * continuation whose last tool-calling message lost its signed thinking, and
 * the model has not acted on those calls yet); the newest assistant message
 * when none calls tools.
 */

/** What the stage clears from assistant messages; `inputMinTokens` `null`: no inputs. */
export interface AssistantClearingOptions {
  thinking: boolean;
  inputMinTokens: number | null;
}

/** An assistant message cleared: its stand-in and the tokens that frees. */
export interface ClearingDecision {
  replacement: BaseMessage;
  saved: number;
}

/** Index of the first message that is never cleared (see the module comment); the list's length when nothing is held back. */
function turnInProgress(messages: readonly BaseMessage[]): number {
  let newestAI = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (!AIMessage.isInstance(message)) continue;
    if (newestAI < 0) newestAI = index;
    if (toolCallsIn(message).length > 0) return index;
  }
  return newestAI < 0 ? messages.length : newestAI;
}

/** The assistant messages that may be cleared, oldest first: before the turn in progress, holding something to clear. */
export function assistantCandidates(messages: readonly BaseMessage[], options: AssistantClearingOptions): number[] {
  if (!options.thinking && options.inputMinTokens === null) return [];
  const end = turnInProgress(messages);
  const candidates: number[] = [];
  for (let index = 0; index < end; index += 1) {
    const message = messages[index]!;
    if (!AIMessage.isInstance(message)) continue;
    if ((options.thinking && holdsReasoning(message)) || (options.inputMinTokens !== null && toolCallsIn(message).length > 0)) candidates.push(index);
  }
  return candidates;
}

/**
 * Decides one candidate (by index into `messages`): its stand-in and the
 * tokens that frees, or `null` when nothing is cleared (no input over the
 * threshold, no reasoning, or a stand-in no smaller). Protection is the caller's.
 */
export function assistantClearer(
  messages: readonly BaseMessage[],
  options: AssistantClearingOptions,
  counts: MessageCounts,
  counter: MessageCounter,
  cache: TokenCountCache | null,
): (index: number) => Promise<ClearingDecision | null> {
  return async (index) => {
    const message = messages[index] as AIMessage;
    const inputs = new Set<string>();
    if (options.inputMinTokens !== null) {
      for (const call of toolCallsIn(message)) {
        if (call.id === undefined) continue;
        // Counted as a message of its own text alone: the overhead of a message is the same before and after.
        const counted = countOne(new HumanMessage(toolInputText(call.args)), counter, null);
        const tokens = typeof counted === "number" ? counted : await counted;
        if (tokens > options.inputMinTokens) inputs.add(call.id);
      }
    }
    const replacement = clearedAssistant(message, { reasoning: options.thinking, inputs });
    if (replacement === null) return null;
    const originalTokens = counts.of(index);
    const counted = countOne(replacement, counter, cache);
    const replacementTokens = typeof counted === "number" ? counted : await counted;
    return replacementTokens >= originalTokens ? null : { replacement, saved: originalTokens - replacementTokens };
  };
}
