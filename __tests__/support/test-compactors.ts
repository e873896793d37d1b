/**
 * Small compactors of the tests' own, written against the `Compactor`
 * contract only, so the integrations are tested with every kind of change a
 * compactor can make: rewriting messages in place (same id), adding messages
 * where removed ones stood, and removing.
 */
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter } from "../../src";
import type { CompactionReport, CompactOptions, Compactor, TokenCounterLike } from "../../src";

type Count = (messages: BaseMessage[]) => Promise<number>;

function countWith(counter: TokenCounterLike | undefined): Count {
  const chosen = counter ?? approximateTokenCounter;
  if (typeof chosen === "function") return async (messages) => (messages.length === 0 ? 0 : await chosen(messages));
  return async (messages) => {
    let total = 0;
    for (const message of messages) total += await chosen.getNumTokens(message.content);
    return total;
  };
}

function report(strategy: string, partial: Omit<CompactionReport, "strategy" | "stages" | "keptCount" | "note" | "stepsTrimmed">, inputLength: number): CompactionReport {
  const { messages, removed, rewritten, added, tokensBefore, tokensAfter } = partial;
  return {
    strategy,
    ...partial,
    keptCount: inputLength - removed.length,
    note: null,
    stepsTrimmed: false,
    stages: [{ strategy, messages, removed, rewritten, added, tokensBefore, tokensAfter }],
  };
}

function unchanged(strategy: string, messages: BaseMessage[], tokens: number): CompactionReport {
  return report(strategy, { messages: null, removed: [], rewritten: [], added: [], tokensBefore: tokens, tokensAfter: tokens }, messages.length);
}

/** The placeholder the shrinking compactor writes. */
export const SHRUNK = "[result shrunk]";

/**
 * Replaces the content of older tool results (all but the newest `keep`) by
 * {@link SHRUNK}, oldest first, until the list fits: a new `ToolMessage` with
 * the same id and `tool_call_id`. Counts every call it gets in `calls`.
 */
export class ShrinkToolResults implements Compactor {
  calls = 0;
  readonly seenSignals: (AbortSignal | undefined)[] = [];
  constructor(private readonly keep = 1) {}

  async compact(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    return (await this.compactWithReport(messages, target, counter, options)).messages;
  }

  async compactWithReport(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    this.calls += 1;
    this.seenSignals.push(options?.signal);
    const count = countWith(counter);
    const before = await count(messages);
    let total = before;
    const toolIndices = messages.flatMap((message, index) => (ToolMessage.isInstance(message) ? [index] : []));
    const candidates = toolIndices.slice(0, Math.max(toolIndices.length - this.keep, 0));
    const result = [...messages];
    const rewritten: CompactionReport["rewritten"] = [];
    for (const index of candidates) {
      if (total <= target) break;
      const original = messages[index] as ToolMessage;
      if (original.content === SHRUNK) continue;
      const replacement = new ToolMessage({
        id: original.id,
        tool_call_id: original.tool_call_id,
        name: original.name,
        content: SHRUNK,
        response_metadata: { compaction: { strategy: "tool_result_pruning", original_tokens: await count([original]) } },
      });
      total += (await count([replacement])) - (await count([original]));
      result[index] = replacement;
      rewritten.push({ original, replacement });
    }
    if (rewritten.length === 0) return unchanged("test_shrink", messages, before);
    return report("test_shrink", { messages: result, removed: [], rewritten, added: [], tokensBefore: before, tokensAfter: total }, messages.length);
  }
}

/** Whether `message` is a summary of {@link SummarizeOldTurns}. */
export function isTestSummary(message: BaseMessage): boolean {
  return message.type === "human" && (message.response_metadata as { compaction?: { strategy?: string } })?.compaction?.strategy === "summarization";
}

/**
 * Replaces every history turn before the newest `keepTurns` (a turn starts at
 * a human message; earlier summaries are turns too) by one summary
 * `HumanMessage` standing where they stood.
 */
export class SummarizeOldTurns implements Compactor {
  calls = 0;
  constructor(private readonly keepTurns = 1) {}

  async compact(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    return (await this.compactWithReport(messages, target, counter, options)).messages;
  }

  async compactWithReport(messages: BaseMessage[], target: number, counter?: TokenCounterLike, _options?: CompactOptions) {
    this.calls += 1;
    const count = countWith(counter);
    const before = await count(messages);
    if (before <= target) return unchanged("test_summary", messages, before);
    let start = 0;
    while (start < messages.length && messages[start]!.type === "system") start += 1;
    const humans = messages.flatMap((message, index) => (index >= start && message.type === "human" ? [index] : []));
    // The newest human message is the task; the turns before it are history.
    const turnStarts = humans.slice(0, -1);
    if (turnStarts.length <= this.keepTurns) return unchanged("test_summary", messages, before);
    const end = turnStarts[turnStarts.length - this.keepTurns]!;
    const first = turnStarts[0]!;
    const removed = messages.slice(first, end);
    const summary = new HumanMessage({
      content: `<conversation_summary>${removed.length} earlier messages, summarized.</conversation_summary>`,
      response_metadata: { compaction: { strategy: "summarization", summarized_messages: removed.length, source: "historical_turns" } },
    });
    const result = [...messages.slice(0, first), summary, ...messages.slice(end)];
    return report("test_summary", { messages: result, removed, rewritten: [], added: [summary], tokensBefore: before, tokensAfter: await count(result) }, messages.length);
  }
}

/**
 * A compactor whose work never ends unless its signal aborts (it ignores the
 * signal on purpose when `deaf`). It remembers the signal of every call, so a
 * test can tell whether an integration handed its own signal on.
 */
export class NeverSettles implements Compactor {
  readonly signals: (AbortSignal | undefined)[] = [];
  constructor(private readonly deaf = true) {}
  compact(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    return this.compactWithReport(messages, target, counter, options).then((report) => report.messages);
  }
  compactWithReport(_messages: BaseMessage[], _target: number, _counter?: TokenCounterLike, options?: CompactOptions) {
    this.signals.push(options?.signal);
    return new Promise<CompactionReport>((_resolve, reject) => {
      if (!this.deaf) options?.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true });
    });
  }
}

/** A token counter that counts like the approximate one until `hangAfter` calls, then never settles. */
export function hangingCounter(hangAfter = 0): { counter: (messages: BaseMessage[]) => Promise<number> | number; calls: () => number } {
  let calls = 0;
  const counter = (messages: BaseMessage[]) => {
    calls += 1;
    if (calls > hangAfter) return new Promise<number>(() => undefined);
    return approximateTokenCounter(messages);
  };
  return { counter, calls: () => calls };
}
