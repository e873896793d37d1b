/**
 * What each approach keeps, on the same over-budget agent histories: the
 * current task, provider validity (every tool call answered, every result
 * asked for), and anything beyond the system prompt.
 */
import { AIMessage, BaseMessage, ToolMessage, trimMessages } from "@langchain/core/messages";
import { approximateTokenCounter, isOmissionNote, SlidingWindowCompactor, TokenCountCache } from "../src";
import { agentConversation, seededRandom } from "./conversations";

export interface QualityTally {
  results: number;
  keepsTask: number;
  valid: number;
  beyondSystem: number;
  /** Not an array of messages, such as `[undefined]`. */
  broken: number;
  /** Returned just the system prompt (or nothing but it and our note). */
  onlySystem: number;
}

export interface QualityReport {
  histories: number;
  /** Histories whose current task (the task message and its steps) alone exceeds the budget. */
  taskAloneOver: number;
  ours: QualityTally;
  trim: QualityTally;
  /** The same tallies restricted to the histories whose task alone exceeds the budget. */
  oursTaskOver: QualityTally;
  trimTaskOver: QualityTally;
  counter: string;
  seed: number;
}

function emptyTally(): QualityTally {
  return { results: 0, keepsTask: 0, valid: 0, beyondSystem: 0, broken: 0, onlySystem: 0 };
}

/** Index of the latest human message (our generator writes no notes into the input). */
function taskIndex(messages: readonly BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i -= 1) if (messages[i]!.type === "human") return i;
  return -1;
}

/** Every tool call has a result after it and every result answers an earlier call. */
export function providerValid(messages: readonly BaseMessage[]): boolean {
  const asked = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) if (call.id) asked.add(call.id);
    if (ToolMessage.isInstance(message)) {
      if (!asked.has(message.tool_call_id)) return false;
      answered.add(message.tool_call_id);
    }
  }
  for (const id of asked) if (!answered.has(id)) return false;
  return true;
}

function tally(into: QualityTally, result: unknown, task: BaseMessage): void {
  into.results += 1;
  if (!Array.isArray(result) || result.some((m) => !BaseMessage.isInstance(m))) {
    into.broken += 1;
    return;
  }
  const messages = result as BaseMessage[];
  // trimMessages returns copies, so the task is recognised by type and content.
  if (messages.some((m) => m.type === "human" && !isOmissionNote(m) && m.content === task.content)) into.keepsTask += 1;
  if (providerValid(messages)) into.valid += 1;
  const others = messages.filter((m) => m.type !== "system" && !isOmissionNote(m)).length;
  if (others > 0) into.beyondSystem += 1;
  else into.onlySystem += 1;
}

/** Runs the comparison on `histories` random over-budget agent histories of 6 to 120 messages. */
export async function compareQuality(histories: number, seed: number, onProgress?: (done: number) => void): Promise<QualityReport> {
  const random = seededRandom(seed);
  const counter = approximateTokenCounter;
  const report: QualityReport = {
    histories: 0,
    taskAloneOver: 0,
    ours: emptyTally(),
    trim: emptyTally(),
    oursTaskOver: emptyTally(),
    trimTaskOver: emptyTally(),
    counter: "approximateTokenCounter",
    seed,
  };
  const compactor = new SlidingWindowCompactor({ cache: new TokenCountCache() });
  let attempt = 0;
  while (report.histories < histories) {
    attempt += 1;
    const size = 6 + Math.floor(random() * 115);
    const messages = agentConversation(size, seed * 7919 + attempt);
    const total = counter(messages) as number;
    // Budgets from a few percent of the history (below the system prompt) to nearly all of it.
    const budget = Math.max(1, Math.floor(total * (0.03 + random() * 0.9)));
    if (total <= budget) continue;
    const anchor = taskIndex(messages);
    const task = messages[anchor]!;
    const taskTokens = (counter(messages.slice(anchor)) as number) + (counter(messages.slice(0, 1)) as number);
    const taskOver = taskTokens > budget;
    report.histories += 1;
    if (taskOver) report.taskAloneOver += 1;

    const ours = (await compactor.compact(messages, budget, counter)) ?? messages;
    tally(report.ours, ours, task);
    if (taskOver) tally(report.oursTaskOver, ours, task);

    const trimmed: unknown = await trimMessages(messages, {
      maxTokens: budget,
      strategy: "last",
      includeSystem: true,
      startOn: "human",
      tokenCounter: counter,
    });
    tally(report.trim, trimmed, task);
    if (taskOver) tally(report.trimTaskOver, trimmed, task);
    if (onProgress && report.histories % 100 === 0) onProgress(report.histories);
  }
  return report;
}
