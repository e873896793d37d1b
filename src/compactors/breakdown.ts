import type { BaseMessage } from "@langchain/core/messages";
import { isCompactionMessage, isSummaryMessage } from "../messages/compaction-metadata";
import { omissionNoteMetadata } from "../messages/omission-note";
import { isHuman, isSystem, isTool } from "../messages/roles";

/**
 * Where a request's tokens go, by category: what fills a context window,
 * so a user can see whether instructions, tool schemas, old history,
 * summaries, tool output or the task in progress is the weight.
 *
 * Each token is in exactly one category:
 * - `system`: the leading system messages, and a system prompt held outside
 *   the message list (as `createAgent` holds it);
 * - `tools`: the tool schemas sent with every request;
 * - `summaries`: what compactions wrote in place of history (summaries,
 *   omission notes);
 * - `toolResults`: tool results, wherever they stand (pruned and offloaded
 *   stand-ins included, since that is where they stand);
 * - `task`: the current task (the latest real user message) and everything
 *   after it that is not a tool result: the task's own steps;
 * - `history`: everything else before the task.
 */
export interface TokenBreakdown {
  /** The leading system messages and a system prompt held outside the list. */
  system: number;
  /** The tool schemas sent with the request. */
  tools: number;
  /** Everything before the task that is in no other category. */
  history: number;
  /** What compactions wrote in place of history: summaries and omission notes. */
  summaries: number;
  /** Tool results wherever they stand, pruned and offloaded stand-ins included. */
  toolResults: number;
  /** The current task (the latest real user message) and its steps after it, tool results aside. */
  task: number;
}

/** The tokens a request spends besides its message list, by category. */
export interface OverheadBreakdown {
  /** A system prompt held outside the list. */
  system?: number;
  /** Tool schemas. */
  tools?: number;
}

/** An empty breakdown. */
export function emptyBreakdown(): TokenBreakdown {
  return { system: 0, tools: 0, history: 0, summaries: 0, toolResults: 0, task: 0 };
}

/** The sum over every category. */
export function breakdownTotal(breakdown: TokenBreakdown): number {
  return breakdown.system + breakdown.tools + breakdown.history + breakdown.summaries + breakdown.toolResults + breakdown.task;
}

/** The category of each message of `messages`, by the rules of {@link TokenBreakdown}. */
export function categoriesOf(messages: readonly BaseMessage[]): (keyof TokenBreakdown)[] {
  let systemEnd = 0;
  while (systemEnd < messages.length && isSystem(messages[systemEnd]!)) systemEnd += 1;
  let task = -1;
  for (let index = messages.length - 1; index >= systemEnd; index -= 1) {
    const message = messages[index]!;
    if (isHuman(message) && !isSummaryMessage(message) && omissionNoteMetadata(message) === undefined) {
      task = index;
      break;
    }
  }
  return messages.map((message, index): keyof TokenBreakdown => {
    if (index < systemEnd) return "system";
    if (isTool(message)) return "toolResults";
    if (isCompactionMessage(message)) return "summaries";
    if (task >= 0 && index >= task) return "task";
    return "history";
  });
}

/**
 * The breakdown of a request: `messages` counted one by one with `count`
 * (each message's tokens, in list order), plus what it carries besides them.
 */
export function breakdownOf(messages: readonly BaseMessage[], counts: readonly number[], overhead: OverheadBreakdown = {}): TokenBreakdown {
  const breakdown = emptyBreakdown();
  breakdown.system += overhead.system ?? 0;
  breakdown.tools += overhead.tools ?? 0;
  categoriesOf(messages).forEach((category, index) => {
    breakdown[category] += counts[index]!;
  });
  return breakdown;
}
