import { BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { assertCacheOption, sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertWholeNumber, describeValue } from "../errors";
import { COMPACTION_METADATA_KEY, isSummaryMessage } from "../messages/compaction-metadata";
import type { SummaryMetadata } from "../messages/compaction-metadata";
import { layoutConversation } from "../messages/layout";
import type { MessageGroup } from "../messages/grouping";
import { replyKinds, replyText } from "../messages/reply-text";
import { assertCompactOptions, raceAbort, throwIfAborted } from "./abort";
import { withOutputLimit } from "./bounded-model";
import { CircuitBreaker } from "./circuit-breaker";
import { withRetries } from "./transient-errors";
import { assertRequestOptions } from "./compactor";
import type { CompactOptions, Compactor, RequestOverhead, ToolLike } from "./compactor";
import { countOne } from "./count-one";
import { assertProtect, protectedMessages } from "./protection";
import type { ProtectPredicate } from "./protection";
import type { CompactionReport, StageFailure } from "./report";
import { assertConversation } from "../messages/conversation-check";
import { stageReport, unchangedReport } from "./stage-report";
import { contentText, renderTranscript } from "./transcript";
import { toolCallsIn } from "../messages/exchanges";
import { isTool } from "../messages/roles";

/** The `strategy` of summaries and of this stage's reports. */
const STRATEGY = "summarization";

/** The run name of the summary call, as traces show it. */
export const SUMMARY_RUN_NAME = "compaction_summary";

/** Tags of the summary call, as traces show them. */
export const SUMMARY_RUN_TAGS: readonly string[] = ["langchain-compaction", "summarization"];

/**
 * What a summary stands for, in the order they are given up: the oldest
 * history turns, then the history's earlier summaries combined, then the
 * oldest steps of the current task, then the task's summaries combined.
 */
export type SummarySource = "historical_turns" | "historical_summaries" | "current_task_steps" | "current_task_summaries";

/** The default instruction of the summary model. */
export const DEFAULT_SUMMARY_INSTRUCTION = `You condense part of a conversation between a user and an AI agent, so the agent can carry on with less context. You see only the part that is being replaced; everything else, including the user's current request, stays and is not shown to you. Write only about what you are shown. Never state or suggest that something did not happen because it is missing here.

Answer with these headings, in this order, each one present; write "(none)" under a heading this part says nothing about:

## Objective
What the user wants to achieve, as far as this part shows.

## Decisions and constraints
What was decided and why, options turned down, and every requirement, preference or instruction the user gave.

## Work completed
What was done, and what the tool results showed.

## Identifiers
File paths, URLs, ids, names, commands and error messages, copied exactly, character for character. Images and files appear only as <...> placeholders: copy those too, their contents are gone once this part is replaced.

## Unresolved
What is still open, and the next step.

Rules:
- Record what this part shows and nothing else: no guesses, no advice.
- Copy identifiers, never paraphrase them: they cannot be recovered later.
- Fold any <conversation_summary> blocks you are given into your summary: keep what still holds, drop what is outdated, add what is new.
- Be terse: short bullets, no greeting, no mention that this is a summary.`;

/** Anything that answers a list of messages with a message: every LangChain chat model. */
export interface SummaryModel {
  /** Answers `input` with a message whose text is the summary; `options` carries the compaction's signal and the run's name and tags, for tracing. */
  invoke(input: BaseMessage[], options?: { signal?: AbortSignal; runName?: string; tags?: string[] }): Promise<BaseMessage>;
}

/** Options of {@link SummarizationCompactor}. */
export interface SummarizationCompactorOptions {
  /** The model that writes summaries: any chat model (`invoke(messages) → AIMessage`). */
  model: SummaryModel;
  /** The newest steps of the current task never summarized. Default `1`; `0` lets every step be summarized. */
  minKeepSteps?: number;
  /**
   * The size a summary may take, in tokens: room is made for it, and the
   * prompt states it. Default `1024`.
   *
   * The model is also held to it where its class takes an output limit
   * (`maxTokens`, `maxOutputTokens`), on a copy (the model given is not
   * changed), in a request the provider accepts. An output limit covers a
   * model's hidden reasoning too, so: a model that does not reason gets
   * `maxSummaryTokens`; one that reasons within a token budget (Anthropic
   * `thinking: { type: "enabled", budget_tokens }`, Gemini
   * `thinkingConfig.thinkingBudget`) gets the budget plus `maxSummaryTokens`,
   * never more than its own limit; one whose reasoning has no budget
   * (Anthropic adaptive thinking, OpenAI reasoning models, Gemini dynamic
   * thinking or a `thinkingLevel`) keeps its own limit, and then only the
   * prompt and the rule that a summary must be smaller than what it replaces
   * bound the summary.
   */
  maxSummaryTokens?: number;
  /** What the model is told to keep. Default {@link DEFAULT_SUMMARY_INSTRUCTION}; the size limit is appended. */
  instruction?: string;
  /**
   * Whether a failed summary (the model threw, answered no text, or answered
   * with more than it replaces) rejects. Default `false`: the compaction
   * returns what earlier summaries achieved, or `null`, and a next pipeline
   * stage can act. An abort always rejects.
   */
  raiseOnFailure?: boolean;
  /**
   * Retries of a summary call that failed with a transient error (a rate
   * limit, a timeout, a server error, a dropped connection), after a pause
   * that doubles each time (1 s, 2 s, 4 s, plus up to a quarter of jitter),
   * and never past the compaction's signal. Any other error is not retried.
   * Default `2`; `0` never retries. (LangChain's models also retry on their
   * own, `maxRetries`; these retries come on top.)
   */
  retries?: number;
  /**
   * After `failures` failed summaries in a row, the stage stops calling the
   * model for `coolDownMs` and leaves the work to the next stage of a
   * pipeline; then one call is let through, and a success closes the breaker
   * again. Shared by every conversation this instance compacts. Default
   * `{ failures: 3, coolDownMs: 60_000 }`; `null` never stops calling.
   */
  circuitBreaker?: {
    /** Failed summaries in a row that open the breaker (default `3`). */
    failures: number;
    /** How long the open breaker stops calling the model, in milliseconds (default `60_000`). */
    coolDownMs: number;
  } | null;
  /**
   * The most one summary call is sent, in tokens (instruction, the summary
   * so far and the messages to summarize). A longer stretch is summarized in
   * rolling chunks, oldest first, each call folding the summary so far into
   * the next, so that no early message goes unread. Default: no limit, one
   * call per summary.
   */
  maxSummaryInputTokens?: number;
  /**
   * What a summary call is sent. `"transcript"` (default): the instruction
   * and a plain transcript of only the messages being replaced.
   * `"conversation"`: the conversation as the model last saw it (with the
   * system prompt and tools the integration passes in `options.request`),
   * followed by a request to summarize its oldest stretch: when the summary
   * model is the agent's own model, a provider's prompt cache serves all of
   * it but the request, so the call costs a fraction of a transcript's. Used
   * when the stretch is one unbroken run of messages and the conversation
   * fits `maxSummaryInputTokens`; otherwise the call is a transcript.
   */
  summaryPrompt?: "transcript" | "conversation";
  /**
   * Messages never summarized, nor the messages they must stay with (see
   * `SlidingWindowCompactorOptions.protect`); asked once per message of the
   * input, with its index there, however many summaries the compaction writes.
   */
  protect?: ProtectPredicate;
  /** Where token counts are remembered. Default: the shared cache; `null` counts afresh. */
  cache?: TokenCountCache | null;
}

/** Why a summary was not used (thrown only with `raiseOnFailure: true`; a model's own error is rethrown as it is). */
export class SummarizationError extends Error {
  /** Always `"SummarizationError"`, so the error can be told apart without `instanceof` (e.g. across copies of the package). */
  override readonly name = "SummarizationError";
  constructor(
    message: string,
    /**
     * `"empty"`: the model answered no text (nothing, whitespace, or only
     * reasoning, images, files, tool calls or a refusal);
     * `"too_large"`: the summary is no smaller than what it replaces;
     * `"not_a_message"`: the model answered something else;
     * `"circuit_open"`: the model was not called, after too many failures in a row.
     */
    readonly reason: "empty" | "too_large" | "not_a_message" | "circuit_open",
  ) {
    super(message);
  }
}

/** One planned summary: the messages it replaces (ascending indices) and what they are. */
interface SummaryPlan {
  indices: number[];
  source: SummarySource;
}

/** The list as it stands during one compaction, with the tokens of each message and which may not be summarized. */
interface Working {
  messages: BaseMessage[];
  counts: number[];
  total: number;
  /** Protected by the caller (decided once, on the input's indices), or `null` when nothing is. */
  protectedAt: boolean[] | null;
}

/**
 * Replaces the oldest part of a conversation with a summary written by a
 * model, in four tiers (as Haystack's compactor of the same name): the fewest
 * oldest history turns that make room for a summary of `maxSummaryTokens`;
 * once history holds only summaries, those combined into one; then the fewest
 * oldest steps of the current task, keeping the newest `minKeepSteps`; then
 * the task's summaries combined. It repeats until the conversation fits or
 * nothing is left to give up.
 *
 * A summary is a `HumanMessage` `<conversation_summary>…</conversation_summary>`
 * standing where the oldest message it replaces stood, marked with
 * `response_metadata.compaction = { strategy: "summarization",
 * summarized_messages, source }`.
 *
 * Transactional: messages go only when their summary came back as text and
 * smaller than they are. Only the text of the model's reply counts (its text
 * blocks, or its string content): reasoning, images, files, tool calls and
 * refusals are no summary, and never part of one. When a summary fails, the
 * compaction stops there and returns what the summaries before it achieved
 * (or `null`): never an error text as a summary, never history deleted
 * without one.
 *
 * @example
 * ```ts
 * const compactor = new SummarizationCompactor({ model: new ChatOpenAI({ model: "gpt-4o-mini" }) });
 * const compacted = (await compactor.compact(messages, 8_000)) ?? messages;
 * ```
 */
export class SummarizationCompactor implements Compactor {
  /** The model that writes summaries (see {@link SummarizationCompactorOptions.model}). */
  readonly model: SummaryModel;
  /** The newest steps of the current task never summarized (default `1`). */
  readonly minKeepSteps: number;
  /** The size a summary may take, in tokens (default `1024`). */
  readonly maxSummaryTokens: number;
  /** What the model is told to keep, before the size limit is appended (default {@link DEFAULT_SUMMARY_INSTRUCTION}). */
  readonly instruction: string;
  /** Whether a failed summary rejects rather than leaving the work to the next stage (default `false`). */
  readonly raiseOnFailure: boolean;
  /** Messages never summarized (see {@link SummarizationCompactorOptions.protect}); `undefined` when none are. */
  readonly protect: ProtectPredicate | undefined;
  /** Where this compactor remembers token counts (`null`: nowhere). */
  readonly cache: TokenCountCache | null;
  /** Retries of a summary call after a transient error. */
  readonly retries: number;
  /** The most one summary call is sent, in tokens (`undefined`: no limit). */
  readonly maxSummaryInputTokens: number | undefined;
  /** What a summary call is sent (see {@link SummarizationCompactorOptions.summaryPrompt}). */
  readonly summaryPrompt: "transcript" | "conversation";
  /** The circuit breaker of this instance's summary calls (`null`: none). */
  private readonly breaker: CircuitBreaker | null;

  constructor(options: SummarizationCompactorOptions) {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new TypeError(`SummarizationCompactor options must be an object with a model, got ${describeValue(options)}`);
    }
    const {
      model,
      minKeepSteps = 1,
      maxSummaryTokens = 1024,
      instruction = DEFAULT_SUMMARY_INSTRUCTION,
      raiseOnFailure = false,
      retries = 2,
      circuitBreaker = { failures: 3, coolDownMs: 60_000 },
      maxSummaryInputTokens,
      summaryPrompt = "transcript",
      protect,
      cache = sharedTokenCountCache,
    } = options;
    // Anything with an invoke() is a model (a class instance, a RunnableLambda, a callable with the method).
    if (typeof (model as Partial<SummaryModel> | null | undefined)?.invoke !== "function") {
      throw new TypeError(`\`model\` must be a chat model (an object with invoke()), got ${describeValue(model)}`);
    }
    assertWholeNumber("minKeepSteps", minKeepSteps);
    assertWholeNumber("maxSummaryTokens", maxSummaryTokens, 1);
    if (typeof instruction !== "string" || instruction.trim() === "") {
      throw new TypeError(`\`instruction\` must be a non-empty string, got ${describeValue(instruction)}`);
    }
    if (typeof raiseOnFailure !== "boolean") throw new TypeError(`\`raiseOnFailure\` must be a boolean, got ${describeValue(raiseOnFailure)}`);
    assertWholeNumber("retries", retries);
    if (circuitBreaker !== null) {
      if (typeof circuitBreaker !== "object" || Array.isArray(circuitBreaker)) {
        throw new TypeError(`\`circuitBreaker\` must be { failures, coolDownMs } or null, got ${describeValue(circuitBreaker)}`);
      }
      assertWholeNumber("circuitBreaker.failures", circuitBreaker.failures, 1);
      assertWholeNumber("circuitBreaker.coolDownMs", circuitBreaker.coolDownMs);
    }
    if (summaryPrompt !== "transcript" && summaryPrompt !== "conversation") {
      throw new RangeError(`\`summaryPrompt\` must be "transcript" or "conversation", got ${describeValue(summaryPrompt)}`);
    }
    if (maxSummaryInputTokens !== undefined) {
      assertWholeNumber("maxSummaryInputTokens", maxSummaryInputTokens, 1);
      // Each call must leave room for the summary so far and some messages beside the instruction.
      if (maxSummaryInputTokens < 2 * maxSummaryTokens) {
        throw new RangeError(
          `\`maxSummaryInputTokens\` (${maxSummaryInputTokens}) must be at least twice \`maxSummaryTokens\` (${maxSummaryTokens}): each call is sent the summary so far beside the messages it adds`,
        );
      }
    }
    assertProtect(protect);
    assertCacheOption(cache);
    this.model = model;
    this.minKeepSteps = minKeepSteps;
    this.maxSummaryTokens = maxSummaryTokens;
    this.instruction = instruction;
    this.raiseOnFailure = raiseOnFailure;
    this.protect = protect;
    this.cache = cache;
    this.retries = retries;
    this.maxSummaryInputTokens = maxSummaryInputTokens;
    this.summaryPrompt = summaryPrompt;
    this.breaker = circuitBreaker === null ? null : new CircuitBreaker(circuitBreaker.failures, circuitBreaker.coolDownMs);
  }

  /** The summarized conversation, or `null` when it fits or no summary could be used. The input is not modified. */
  async compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null> {
    return (await this.compactWithReport(messages, targetTokens, tokenCounter, options)).messages;
  }

  /** Like {@link compact}, with the removed messages, the summaries added and tokens before and after. */
  async compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport> {
    assertConversation(messages);
    assertTokenBudget("targetTokens", targetTokens);
    assertCompactOptions(options);
    assertRequestOptions(options);
    const signal = options?.signal;
    throwIfAborted(signal);
    const counter = resolveTokenCounter(tokenCounter);
    const inputCounts = new MessageCounts(messages, counter, this.cache);
    const tokensBefore = await inputCounts.total();
    throwIfAborted(signal);
    if (tokensBefore <= targetTokens) return unchangedReport(STRATEGY, messages, tokensBefore);

    const protectedInput = protectedMessages(messages, this.protect);
    let working: Working = {
      messages,
      counts: messages.map((_, index) => inputCounts.of(index)),
      total: tokensBefore,
      protectedAt: protectedInput === null ? null : Array.from(protectedInput, (flag) => flag === 1),
    };
    // Each summary written by this compaction, with the input messages it stands for (a summary that folds one
    // written earlier in the same compaction stands for that one's messages).
    const written = new Map<BaseMessage, BaseMessage[]>();
    const failures: StageFailure[] = [];
    // First every summary the tiers would write, each as one call over the input as it came (so a conversation-mode
    // call reads the prefix the model last saw, and no summary is summarized again by the same compaction).
    const batch = this.planFinal(working, targetTokens);
    const done: { plan: SummaryPlan; summary: HumanMessage; tokens: number }[] = [];
    for (const plan of batch) {
      const result = await this.writeSummary(working, plan, counter, options, failures);
      if (result === null) break;
      done.push({ plan, ...result });
    }
    if (done.length > 0) {
      for (const { plan, summary } of done) written.set(summary, plan.indices.map((index) => messages[index]!));
      working = applySummaries(working, done);
    }
    // What the batch did not bring within the target (a summary over its reservation, or a failure): tier by tier as before.
    while (done.length === batch.length && working.total > targetTokens) {
      const plan = this.plan(working, targetTokens);
      if (plan === null) break;
      const next = await this.summarize(working, plan, counter, options, failures);
      if (next === null) break;
      const originals = plan.indices.flatMap((index) => {
        const replaced = working.messages[index]!;
        return written.get(replaced) ?? [replaced];
      });
      for (const index of plan.indices) written.delete(working.messages[index]!);
      written.set(next.messages[plan.indices[0]!]!, originals);
      working = next;
    }
    if (working.messages === messages) {
      return stageReport({ strategy: STRATEGY, input: messages, messages: null, removed: [], rewritten: [], added: [], failures, tokensBefore, tokensAfter: tokensBefore });
    }

    const kept = new Map<BaseMessage, number>();
    for (const message of working.messages) kept.set(message, (kept.get(message) ?? 0) + 1);
    const removed: BaseMessage[] = [];
    for (const message of messages) {
      const left = kept.get(message) ?? 0;
      if (left === 0) removed.push(message);
      else kept.set(message, left - 1);
    }
    return stageReport({
      strategy: STRATEGY,
      input: messages,
      messages: working.messages,
      removed,
      rewritten: [],
      added: working.messages.filter((message) => written.has(message)),
      standsFor: [...written].map(([added, originals]) => ({ added, originals: inInputOrder(messages, originals) })),
      failures,
      tokensBefore,
      tokensAfter: working.total,
    });
  }

  /** The next stretch to summarize, tier by tier, or `null` when nothing may be given up. */
  private plan(working: Working, targetTokens: number): SummaryPlan | null {
    const { messages } = working;
    const layout = layoutConversation(messages);
    const { protectedAt } = working;
    const free = (index: number) => protectedAt === null || !protectedAt[index];
    /** A group's messages that are not summaries, or nothing when any of its messages is protected. */
    const raw = (group: MessageGroup): number[] => (group.members.every(free) ? group.members.filter((index) => !isSummaryMessage(messages[index]!)) : []);
    const summariesIn = (from: number, to: number): number[] => {
      const found: number[] = [];
      for (let index = from; index < to; index += 1) if (isSummaryMessage(messages[index]!) && free(index)) found.push(index);
      return found;
    };

    const turns = layout.turns.map(raw).filter((members) => members.length > 0);
    if (turns.length > 0) return { indices: this.fewestThatMakeRoom(working, turns, targetTokens), source: "historical_turns" };
    // History ends at the task message; with no task (task -1) there is none.
    const historySummaries = summariesIn(layout.systemEnd, layout.task);
    if (historySummaries.length > 1) return { indices: historySummaries, source: "historical_summaries" };

    // Steps of the task that hold more than a summary; the newest `minKeepSteps` of them stay.
    const realSteps = layout.steps.filter((step) => step.members.some((index) => !isSummaryMessage(messages[index]!)));
    const eligible = realSteps.slice(0, Math.max(0, realSteps.length - this.minKeepSteps)).map(raw).filter((members) => members.length > 0);
    if (eligible.length > 0) return { indices: this.fewestThatMakeRoom(working, eligible, targetTokens), source: "current_task_steps" };
    // From after the task message, or from the start when there is none (the leading system messages are no summaries).
    const taskSummaries = summariesIn(layout.task + 1, messages.length);
    if (taskSummaries.length > 1) return { indices: taskSummaries, source: "current_task_summaries" };
    return null;
  }

  /**
   * The summaries the tier-by-tier loop would end with, each reserved at
   * `maxSummaryTokens`, as plans over the input's indices: a summary that
   * a later tier folds stands for its messages within the folding one.
   */
  private planFinal(working: Working, targetTokens: number): SummaryPlan[] {
    let sim = working;
    // For each message of `sim`, the input indices it stands for, and the source of a placeholder summary.
    let origins: number[][] = working.messages.map((_, index) => [index]);
    let sources: (SummarySource | null)[] = working.messages.map(() => null);
    while (sim.total > targetTokens) {
      const plan = this.plan(sim, targetTokens);
      if (plan === null) break;
      const replacedTokens = plan.indices.reduce((sum, index) => sum + sim.counts[index]!, 0);
      const placeholder = summaryMessage("", plan);
      const stands = plan.indices.flatMap((index) => origins[index]!).sort((a, b) => a - b);
      const nextOrigins: number[][] = [];
      const nextSources: (SummarySource | null)[] = [];
      sim.messages.forEach((_, index) => {
        if (index === plan.indices[0]) {
          nextOrigins.push(stands);
          nextSources.push(plan.source);
        }
        if (plan.indices.includes(index)) return;
        nextOrigins.push(origins[index]!);
        nextSources.push(sources[index]!);
      });
      sim = applySummaries(sim, [{ plan, summary: placeholder, tokens: Math.min(this.maxSummaryTokens, replacedTokens) }]);
      origins = nextOrigins;
      sources = nextSources;
    }
    const plans: SummaryPlan[] = [];
    sources.forEach((source, index) => {
      if (source !== null) plans.push({ indices: origins[index]!, source });
    });
    return plans;
  }

  /** The fewest oldest groups whose removal leaves room for a summary of `maxSummaryTokens` (all of them when none is enough). */
  private fewestThatMakeRoom(working: Working, groups: number[][], targetTokens: number): number[] {
    const selected: number[] = [];
    let remaining = working.total;
    for (const group of groups) {
      for (const index of group) {
        selected.push(index);
        remaining -= working.counts[index]!;
      }
      if (remaining + this.maxSummaryTokens <= targetTokens) break;
    }
    return selected.sort((a, b) => a - b);
  }

  /**
   * Asks the model for one summary and swaps it in, or `null` when it
   * failed (unless `raiseOnFailure`). An abort always rejects with its reason.
   */
  private async summarize(
    working: Working,
    plan: SummaryPlan,
    counter: MessageCounter,
    options: CompactOptions | undefined,
    failures: StageFailure[],
  ): Promise<Working | null> {
    const written = await this.writeSummary(working, plan, counter, options, failures);
    return written === null ? null : applySummaries(working, [{ plan, ...written }]);
  }

  /**
   * Asks the model for one summary of `plan` (indices of `working`), or
   * `null` when it failed (unless `raiseOnFailure`). An abort always rejects with its reason.
   */
  private async writeSummary(
    working: Working,
    plan: SummaryPlan,
    counter: MessageCounter,
    options: CompactOptions | undefined,
    failures: StageFailure[],
  ): Promise<{ summary: HumanMessage; tokens: number } | null> {
    const signal = options?.signal;
    let summary: HumanMessage;
    let summaryTokens: number;
    try {
      if (this.breaker !== null && !this.breaker.allows()) {
        throw new SummarizationError(
          `the summary model was not called: ${this.breaker.failures} summaries failed in a row, so the stage waits until ${new Date(this.breaker.reopensAt).toISOString()}`,
          "circuit_open",
        );
      }
      const text = await this.requestSummary(working, plan, counter, options);
      summary = summaryMessage(text, plan);
      const counted = countOne(summary, counter, this.cache);
      summaryTokens = typeof counted === "number" ? counted : await counted;
      const replacedTokens = plan.indices.reduce((sum, index) => sum + working.counts[index]!, 0);
      if (summaryTokens >= replacedTokens) {
        throw new SummarizationError(
          `the summary (${summaryTokens} tokens) is no smaller than the ${plan.indices.length} messages it would replace (${replacedTokens} tokens)`,
          "too_large",
        );
      }
    } catch (error) {
      throwIfAborted(signal);
      const reason = error instanceof SummarizationError ? error.reason : "model_error";
      if (reason !== "circuit_open") this.breaker?.failed();
      if (this.raiseOnFailure) throw error;
      failures.push({ strategy: STRATEGY, reason, error });
      return null;
    }
    throwIfAborted(signal);
    this.breaker?.succeeded();
    return { summary, tokens: summaryTokens };
  }

  /**
   * The model's summary of `replaced`, trimmed; throws when it answered no
   * text. Within `maxSummaryInputTokens`, one call; past it, rolling calls
   * over consecutive chunks, each folding the summary so far.
   */
  private async requestSummary(working: Working, plan: SummaryPlan, counter: MessageCounter, options: CompactOptions | undefined): Promise<string> {
    const signal = options?.signal;
    const asked = options?.instructions?.trim() ? `\n\nThis compaction was asked to keep in particular: ${options.instructions.trim()}` : "";
    const sizeRule = `Keep the whole summary within about ${this.maxSummaryTokens} tokens, and complete: it must not be cut off.`;
    if (this.summaryPrompt === "conversation") {
      const prompt = this.conversationPrompt(working, plan, options?.request, `${sizeRule}${asked}`, options?.asSent);
      if (prompt !== null && (this.maxSummaryInputTokens === undefined || (await totalTokens(prompt, counter)) <= this.maxSummaryInputTokens)) {
        return this.askModel(prompt, signal, options?.request?.tools);
      }
    }
    const instruction = new SystemMessage(`${this.instruction}\n\n${sizeRule}${asked}`);
    const entries = plan.indices.map((index) => renderTranscript([working.messages[index]!]));
    const prompt = (summary: string | null, chunk: string) => {
      const folded = summary === null ? "" : `<conversation_summary>\n${summary}\n</conversation_summary>\n\n`;
      return new HumanMessage(`${folded}<conversation_to_summarize>\n${chunk}\n</conversation_to_summarize>`);
    };
    if (this.maxSummaryInputTokens === undefined) return this.askModel([instruction, prompt(null, entries.join("\n\n"))], signal);

    const tokensOf = async (text: string) => {
      const counted = countOne(new HumanMessage(text), counter, null);
      return typeof counted === "number" ? counted : await counted;
    };
    const instructionTokens = await tokensOf(String(instruction.content));
    const queue = [...entries];
    let summary: string | null = null;
    while (queue.length > 0) {
      throwIfAborted(signal);
      // What this call has left for messages, beside the instruction and the summary so far (in its tags).
      const budget = this.maxSummaryInputTokens - instructionTokens - (await tokensOf(String(prompt(summary, "").content)));
      if (budget < 1) {
        throw new SummarizationError(
          `the summary so far leaves no room for more messages within \`maxSummaryInputTokens\` (${this.maxSummaryInputTokens})`,
          "too_large",
        );
      }
      const chunk: string[] = [];
      let chunkTokens = 0;
      while (queue.length > 0) {
        const entry = queue[0]!;
        // Joined by a blank line: its tokens are counted with the entry, as they are sent.
        const tokens = await tokensOf(chunk.length === 0 ? entry : `\n\n${entry}`);
        if (chunkTokens + tokens <= budget) {
          chunk.push(entry);
          chunkTokens += tokens;
          queue.shift();
          continue;
        }
        if (chunk.length === 0) {
          // One entry longer than a whole call: its head goes now, the rest stays first in line.
          const head = await headThatFits(entry, budget, tokensOf);
          chunk.push(head);
          queue[0] = entry.slice(head.length);
        }
        break;
      }
      summary = await this.askModel([instruction, prompt(summary, chunk.join("\n\n"))], signal);
    }
    return summary!;
  }

  /**
   * The summary request of `"conversation"` mode: the model's last request
   * as it saw it (outside system prompt, then every message before its
   * latest answer, when the stretch ends before that answer), then a user
   * message asking for a summary of the stretch, named by where it begins
   * and ends; `null` when the stretch is not one unbroken run.
   */
  private conversationPrompt(working: Working, plan: SummaryPlan, request: RequestOverhead | undefined, rules: string, asSent: readonly BaseMessage[] | undefined): BaseMessage[] | null {
    const { indices } = plan;
    const first = indices[0]!;
    const last = indices[indices.length - 1]!;
    if (last - first + 1 !== indices.length) return null;
    // The list as the model saw it (before an earlier stage rewrote some messages one for one), when it lines up:
    // that is what the provider's cache holds.
    const asSeen = asSent !== undefined && linesUp(asSent, working.messages) ? asSent : working.messages;
    // The model's last request ended where its latest answer begins: that answer and what follows it (tool results,
    // a new user message) are not in the provider's cache, and the summary does not need them (they stay as they
    // are). Sending them would write them to the cache for this one call.
    const seenEnd = latestAnswerIndex(asSeen);
    const messages = seenEnd > last ? asSeen.slice(0, seenEnd) : asSeen;
    const ask = new HumanMessage(
      `${CONVERSATION_SUMMARY_REQUEST}\n\n` +
        `Summarize only the ${indices.length} messages from ${describeBoundary(messages[first]!)} up to, but not including, ` +
        `${last + 1 < messages.length ? describeBoundary(messages[last + 1]!) : "the end"}: they will be replaced by your summary, ` +
        `and everything after them stays as it is. Do not call any tool; answer with the summary only.\n\n${this.instruction}\n\n${rules}`,
    );
    const systemMessage = request?.systemMessage;
    const instructions = typeof systemMessage === "string" ? (systemMessage === "" ? [] : [new SystemMessage(systemMessage)]) : systemMessage ? [systemMessage] : [];
    return [...instructions, ...messages, ask];
  }

  /** One summary call, retried after transient errors, and its text; throws when it answered no text. */
  private async askModel(prompt: BaseMessage[], signal: AbortSignal | undefined, tools?: readonly ToolLike[]): Promise<string> {
    const { model: limited } = withOutputLimit(this.model, this.maxSummaryTokens);
    const model = withTools(limited, tools);
    const reply = await withRetries(
      () =>
        raceAbort(
          Promise.resolve().then(() => model.invoke(prompt, { runName: SUMMARY_RUN_NAME, tags: [...SUMMARY_RUN_TAGS], ...(signal === undefined ? {} : { signal }) })),
          signal,
        ),
      { retries: this.retries, firstDelayMs: RETRY_FIRST_DELAY_MS },
      signal,
    );
    if (!BaseMessage.isInstance(reply)) {
      throw new SummarizationError(`the summary model answered ${describeValue(reply)}, not a message`, "not_a_message");
    }
    // Only the reply's text is a summary: never its reasoning, nor a placeholder of an image.
    const text = replyText(reply).trim();
    if (text === "") {
      const held = replyKinds(reply);
      throw new SummarizationError(`the summary model answered no text${held.length === 0 ? "" : ` (its reply held: ${held.join(", ")})`}`, "empty");
    }
    return text;
  }
}

/** Opens the user message of a `"conversation"` summary request (a model serving an agent sees it as a task of its own). */
export const CONVERSATION_SUMMARY_REQUEST = "[Context compaction] Before we go on, write a summary of an earlier part of this conversation.";

/** How a summary request names a message: its role and the beginning of its text, or its calls when it has no text. */
function describeBoundary(message: BaseMessage): string {
  // The first line as it stands (up to 80 characters), so the quote is found verbatim in the conversation above.
  const text = contentText(message.content).trimStart().split("\n", 1)[0]!.trimEnd();
  const role = isTool(message) ? "tool result" : message.type === "human" ? "user message" : message.type === "ai" ? "assistant message" : `${message.type} message`;
  if (text !== "") return `the ${role} that begins «${text.slice(0, 80)}»`;
  const calls = toolCallsIn(message).map((call) => call.name ?? "a tool");
  return calls.length > 0 ? `the ${role} that calls ${calls.join(", ")}` : `the empty ${role}`;
}

/** Index of the last assistant message (where the model's last request ended), or the length when there is none. */
function latestAnswerIndex(messages: readonly BaseMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]!.type === "ai") return index;
  }
  return messages.length;
}

/** Whether `asSent` is `current` with at most some tool results rewritten in place (the same call answered at each index). */
function linesUp(asSent: readonly BaseMessage[], current: readonly BaseMessage[]): boolean {
  if (asSent.length !== current.length) return false;
  return asSent.every((message, index) => {
    const now = current[index]!;
    return message === now || (isTool(message) && isTool(now) && message.tool_call_id === now.tool_call_id);
  });
}

/** `model` with `tools` bound (as the agent's model is), or `model` itself when there are none or it cannot bind them. */
function withTools(model: SummaryModel, tools: readonly ToolLike[] | undefined): SummaryModel {
  const bind = (model as { bindTools?: (tools: ToolLike[]) => unknown }).bindTools;
  if (tools === undefined || tools.length === 0 || typeof bind !== "function") return model;
  try {
    const bound = bind.call(model, [...tools]) as Partial<SummaryModel> | null;
    return typeof bound?.invoke === "function" ? (bound as SummaryModel) : model;
  } catch {
    return model;
  }
}

/** The tokens of `messages` under `counter`, awaiting an asynchronous one. */
async function totalTokens(messages: readonly BaseMessage[], counter: MessageCounter): Promise<number> {
  let total = 0;
  for (const message of messages) {
    const counted = countOne(message, counter, null);
    total += typeof counted === "number" ? counted : await counted;
  }
  return total;
}

/** The first pause before retrying a summary call, doubled for each further retry. */
const RETRY_FIRST_DELAY_MS = 1_000;

/**
 * The longest head of `text` within `budget` tokens (at least one
 * character): at a line end where one falls in the second half, found by
 * halving from a first guess in proportion to the tokens.
 */
async function headThatFits(text: string, budget: number, tokensOf: (text: string) => Promise<number>): Promise<string> {
  const tokens = await tokensOf(text);
  let length = Math.max(1, Math.floor((text.length * budget) / Math.max(tokens, 1)));
  const lineEnd = text.lastIndexOf("\n", length);
  if (lineEnd > length / 2) length = lineEnd + 1;
  let head = text.slice(0, length);
  while (head.length > 1 && (await tokensOf(head)) > budget) head = head.slice(0, Math.ceil(head.length / 2));
  return head;
}

/** `working` with each summary standing where the first message it replaces stood, and the messages it replaces gone (plans do not overlap). */
function applySummaries(working: Working, done: readonly { plan: SummaryPlan; summary: HumanMessage; tokens: number }[]): Working {
  const gone = new Set<number>();
  const firsts = new Map<number, { summary: HumanMessage; tokens: number }>();
  for (const { plan, summary, tokens } of done) {
    for (const index of plan.indices) gone.add(index);
    firsts.set(plan.indices[0]!, { summary, tokens });
  }
  const messages: BaseMessage[] = [];
  const counts: number[] = [];
  const protectedAt: boolean[] | null = working.protectedAt === null ? null : [];
  let total = 0;
  working.messages.forEach((message, index) => {
    const first = firsts.get(index);
    if (first !== undefined) {
      messages.push(first.summary);
      counts.push(first.tokens);
      protectedAt?.push(false);
      total += first.tokens;
    }
    if (gone.has(index)) return;
    messages.push(message);
    counts.push(working.counts[index]!);
    protectedAt?.push(working.protectedAt![index]!);
    total += working.counts[index]!;
  });
  return { messages, counts, total, protectedAt };
}

/** The message that stands for what a summary replaced. */
function summaryMessage(text: string, plan: SummaryPlan): HumanMessage {
  const compaction: SummaryMetadata = { strategy: STRATEGY, summarized_messages: plan.indices.length, source: plan.source };
  return new HumanMessage({
    content: `<conversation_summary>\n${text}\n</conversation_summary>`,
    response_metadata: { [COMPACTION_METADATA_KEY]: compaction },
  });
}

/** `subset` in the order its messages stand in `input` (a message standing twice in the input is listed as often as it is in `subset`). */
function inInputOrder(input: readonly BaseMessage[], subset: readonly BaseMessage[]): BaseMessage[] {
  const left = new Map<BaseMessage, number>();
  for (const message of subset) left.set(message, (left.get(message) ?? 0) + 1);
  const ordered: BaseMessage[] = [];
  for (const message of input) {
    const count = left.get(message) ?? 0;
    if (count === 0) continue;
    ordered.push(message);
    left.set(message, count - 1);
  }
  return ordered;
}
