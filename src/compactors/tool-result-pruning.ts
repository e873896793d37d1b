import { ToolMessage } from "@langchain/core/messages";
import type { BaseMessage, ToolMessageFields } from "@langchain/core/messages";
import { assertCacheOption, sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { AsyncCountNeeded, MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertWholeNumber, describeValue } from "../errors";
import { compactionMetadataOf, withCompactionMetadata } from "../messages/compaction-metadata";
import type { PrunedResultMetadata } from "../messages/compaction-metadata";
import { asksForTools, collectAssistantCallIds, exchangesOf, toolCallIdsOf, toolCallsIn } from "../messages/exchanges";
import { isAI, isTool, toolCallIdOf } from "../messages/roles";
import { nextSlice, sliceUsedUp } from "../time-slices";
import { assertCompactOptions, signalOf, throwIfAborted } from "./abort";
import { assistantCandidates, assistantClearer } from "./assistant-clearing";
import type { CompactOptions, Compactor, InPlaceRewrites } from "./compactor";
import { countOne } from "./count-one";
import { assertProtect, hasProtection, protectedMessagesInSlices } from "./protection";
import type { ProtectPredicate } from "./protection";
import type { CompactionReport, RewrittenMessage } from "./report";
import { assertConversationInSlices } from "../messages/conversation-check";
import { stageReport, unchangedReport } from "./stage-report";

/** The `strategy` of pruned results and of this stage's reports. */
const STRATEGY = "tool_result_pruning";

/** The default text left in place of a pruned result; `{tool_name}` is filled with the tool's name. */
export const DEFAULT_PRUNING_PLACEHOLDER =
  "[Tool result removed to free up context. Call `{tool_name}` again if you need it.]";

/** Options of {@link ToolResultPruningCompactor}. */
export interface ToolResultPruningCompactorOptions {
  /** The newest tool results never pruned, whatever their size. At least 1. Default `3`. */
  minKeepResults?: number;
  /** Only results of more than this many tokens are pruned: small ones cost little and are often worth keeping. Default `200`. */
  minTokens?: number;
  /**
   * The text left in place of a pruned result. `{tool_name}` is replaced by
   * the tool's name (the result's `name`, else the name of the call it
   * answers, else "the tool"); other braces are kept as written (a JSON
   * example is safe). Default {@link DEFAULT_PRUNING_PLACEHOLDER}.
   */
  placeholder?: string;
  /** Results never to prune, e.g. `(m) => m.name === "read_plan"`. Default: none. */
  skip?: (message: ToolMessage) => boolean;
  /** Messages never to rewrite, nor the results of a protected call (see `SlidingWindowCompactorOptions.protect`). */
  protect?: ProtectPredicate;
  /** Where token counts are remembered. Default: the shared cache; `null` counts afresh. */
  cache?: TokenCountCache | null;
  /**
   * Also clear the reasoning of older assistant messages (Anthropic
   * `thinking` and `redacted_thinking` blocks, OpenAI reasoning items), as
   * Anthropic's `clear_thinking` does, oldest first with the results. The
   * tool-use turn in progress keeps its reasoning: the newest assistant
   * message that calls tools and everything after it (providers require its
   * signed thinking). Default `false`.
   */
  clearThinking?: boolean;
  /**
   * Also clear large tool-call inputs of older assistant messages (a file
   * written, a long query), as Anthropic's `clear_tool_inputs` does: each
   * input of more than `minTokens` tokens (`true`: this stage's `minTokens`)
   * becomes a short JSON object saying it was removed, in every shape the
   * call stands in, so the call keeps its id, name and result. The turn in
   * progress keeps its inputs. Default `false`.
   */
  clearToolInputs?:
    | boolean
    | {
        /** Inputs of at most this many tokens are kept. Default: the stage's `minTokens`. */
        minTokens?: number;
      };
}

/** A result pruned (or an assistant message cleared): its stand-in and the tokens that frees. */
export interface PruneDecision {
  replacement: BaseMessage;
  saved: number;
}

/** Fills `{tool_name}`; every other brace stays as written. */
function renderPlaceholder(template: string, toolName: string): string {
  return template.split("{tool_name}").join(toolName);
}

/**
 * The results the model has not acted on yet, which pruning never touches:
 * the tool results at the end of the list, and every result in an exchange
 * with one of them (a parallel result that landed earlier, between other
 * messages).
 */
export function trailingBatchByRule(messages: readonly BaseMessage[]): Set<number> {
  const batch = new Set<number>();
  let index = messages.length - 1;
  while (index >= 0 && isTool(messages[index]!)) batch.add(index--);
  if (batch.size === 0) return batch;
  const exchanges = exchangesOf(messages);
  for (const result of [...batch]) {
    const exchange = exchanges.of[result]!;
    if (exchange < 0) continue;
    for (const member of exchanges.members[exchange]!) if (isTool(messages[member]!)) batch.add(member);
  }
  return batch;
}

/**
 * {@link trailingBatchByRule} without the exchanges of the whole history
 * (this runs at every pruning, over every message): the exchange of the
 * trailing results is grown from their ids alone, asking message by asking
 * message and result by result, until it stops growing. The tests check it
 * equals the rule on messy conversations.
 */
export function trailingBatch(messages: readonly BaseMessage[]): Set<number> {
  const batch = new Set<number>();
  let index = messages.length - 1;
  while (index >= 0 && isTool(messages[index]!)) batch.add(index--);
  if (batch.size === 0) return batch;
  // An exchange is held together by its results: a result joins every message asking for its id (and an id-less one
  // the asking message it follows), so the ids answered within it say which asking messages belong, and the ids
  // those ask say which results do.
  const answered = new Set<string>();
  const asked = new Set<string>();
  const askers = new Set<number>();
  const join = (asker: number, callIds: readonly string[]) => {
    askers.add(asker);
    for (const id of callIds) asked.add(id);
  };
  let idless = false;
  for (const result of batch) {
    const id = toolCallIdOf(messages[result]!);
    if (id === undefined) idless = true;
    else answered.add(id);
  }
  if (idless && index >= 0 && asksForTools(messages[index]!)) join(index, toolCallIdsOf(messages[index]!));
  const callIds: string[] = [];
  for (let grown = true; grown; ) {
    grown = false;
    messages.forEach((message, position) => {
      if (isAI(message)) {
        if (askers.has(position)) return;
        callIds.length = 0;
        collectAssistantCallIds(message, callIds);
        if (!callIds.some((id) => answered.has(id))) return;
        join(position, callIds);
        grown = true;
      } else if (isTool(message) && !batch.has(position)) {
        const id = toolCallIdOf(message);
        const joins = id === undefined ? askers.has(precedingAsker(messages, position)) : asked.has(id);
        if (!joins) return;
        batch.add(position);
        if (id !== undefined) answered.add(id);
        grown = true;
      }
    });
  }
  return batch;
}

/** The asking message an id-less result at `position` directly follows (through a run of results), or -1. */
function precedingAsker(messages: readonly BaseMessage[], position: number): number {
  let index = position - 1;
  while (index >= 0 && isTool(messages[index]!)) index -= 1;
  return index >= 0 && asksForTools(messages[index]!) ? index : -1;
}

/** Tool names by call id, read from every call of every assistant message (for results that lost their own `name`). */
function callNames(messages: readonly BaseMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const call of toolCallsIn(message)) if (call.id !== undefined && call.name !== undefined) names.set(call.id, call.name);
  }
  return names;
}

/**
 * Replaces the content of older tool results with a short placeholder, in
 * place: every call keeps a result (so the conversation keeps its shape and
 * stays valid), and the model sees which tool it ran and can run it again.
 * Tool output is usually most of a long agent run, and little of it matters
 * once the model has acted on it.
 *
 * Results are pruned oldest first, stopping as soon as the conversation fits.
 * Never pruned: the newest `minKeepResults` results, the whole trailing batch
 * of results (the model has not seen them yet), error results
 * (`status: "error"`: short and informative), results of `minTokens` or
 * fewer, results a compaction already rewrote (pruned or offloaded), results
 * `skip` names, and protected ones (with everything up to a provider's native
 * compaction marker: `messages/native-compaction.ts`). A placeholder that
 * would not be smaller than the result is not used. With `clearThinking` or
 * `clearToolInputs`, older assistant messages are cleared in the same pass.
 *
 * Each message is counted once (through the cache) and each replacement once:
 * linear in the length of the conversation.
 *
 * @example
 * ```ts
 * const compactor = new ToolResultPruningCompactor({ minKeepResults: 3 });
 * const compacted = (await compactor.compact(messages, 8_000)) ?? messages;
 * ```
 */
export class ToolResultPruningCompactor implements Compactor {
  /** The newest tool results never pruned (see {@link ToolResultPruningCompactorOptions.minKeepResults}; default `3`). */
  readonly minKeepResults: number;
  /** Only results larger than this many tokens are pruned (default `200`). */
  readonly minTokens: number;
  /** The text left in place of a pruned result, `{tool_name}` still unfilled (default {@link DEFAULT_PRUNING_PLACEHOLDER}). */
  readonly placeholder: string;
  /** Results never pruned (see {@link ToolResultPruningCompactorOptions.skip}); `undefined` when none are skipped. */
  readonly skip: ((message: ToolMessage) => boolean) | undefined;
  /** Messages never rewritten (see {@link ToolResultPruningCompactorOptions.protect}); `undefined` when none are. */
  readonly protect: ProtectPredicate | undefined;
  /** Where this compactor remembers token counts (`null`: nowhere). */
  readonly cache: TokenCountCache | null;
  /**
   * What is cleared from older assistant messages besides results: their
   * reasoning (`clearThinking`), and call inputs of more than
   * `inputMinTokens` tokens (`clearToolInputs`; `null`: none).
   */
  readonly clearing: Readonly<{
    /** Whether reasoning is cleared (`clearThinking`). */
    thinking: boolean;
    /** Inputs of more than this many tokens are cleared (`clearToolInputs`); `null`: none. */
    inputMinTokens: number | null;
  }>;

  constructor(options: ToolResultPruningCompactorOptions = {}) {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new TypeError(`ToolResultPruningCompactor options must be an object, got ${describeValue(options)}`);
    }
    const {
      minKeepResults = 3,
      minTokens = 200,
      placeholder = DEFAULT_PRUNING_PLACEHOLDER,
      skip,
      protect,
      cache = sharedTokenCountCache,
      clearThinking = false,
      clearToolInputs = false,
    } = options;
    assertWholeNumber("minKeepResults", minKeepResults, 1);
    if (typeof clearThinking !== "boolean") throw new TypeError(`\`clearThinking\` must be a boolean, got ${describeValue(clearThinking)}`);
    let inputMinTokens: number | null = null;
    if (clearToolInputs === true) inputMinTokens = minTokens;
    else if (typeof clearToolInputs === "object" && clearToolInputs !== null && !Array.isArray(clearToolInputs)) {
      inputMinTokens = clearToolInputs.minTokens ?? minTokens;
      assertTokenBudget("clearToolInputs.minTokens", inputMinTokens);
    } else if (clearToolInputs !== false) {
      throw new TypeError(`\`clearToolInputs\` must be a boolean or { minTokens }, got ${describeValue(clearToolInputs)}`);
    }
    assertTokenBudget("minTokens", minTokens);
    if (typeof placeholder !== "string") throw new TypeError(`\`placeholder\` must be a string, got ${describeValue(placeholder)}`);
    if (skip !== undefined && typeof skip !== "function") {
      throw new TypeError(`\`skip\` must be a function (message) => boolean, got ${describeValue(skip)}`);
    }
    assertProtect(protect);
    assertCacheOption(cache);
    this.minKeepResults = minKeepResults;
    this.minTokens = minTokens;
    this.placeholder = placeholder;
    this.skip = skip;
    this.protect = protect;
    this.cache = cache;
    this.clearing = Object.freeze({ thinking: clearThinking, inputMinTokens });
  }

  /** The conversation with older results pruned, or `null` when it fits or nothing is prunable. The input is not modified. */
  async compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null> {
    return (await this.compactWithReport(messages, targetTokens, tokenCounter, options)).messages;
  }

  /** Like {@link compact}, with the rewritten results (original and replacement) and tokens before and after. */
  async compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport> {
    await assertConversationInSlices(messages, signalOf(options));
    assertTokenBudget("targetTokens", targetTokens);
    assertCompactOptions(options);
    const signal = options?.signal;
    throwIfAborted(signal);
    const counter = resolveTokenCounter(tokenCounter);
    const counts = new MessageCounts(messages, counter, this.cache, signal);
    const tokensBefore = await counts.total();
    throwIfAborted(signal);
    if (tokensBefore <= targetTokens) return unchangedReport(STRATEGY, messages, tokensBefore);

    const candidates = this.candidatesOf(messages);
    if (candidates.length === 0) return unchangedReport(STRATEGY, messages, tokensBefore);

    const protectedAt = await protectedMessagesInSlices(messages, this.protect, signal);
    const prune = this.pruner(messages, counts, counter);
    const output = [...messages];
    const rewritten: RewrittenMessage[] = [];
    let tokens = tokensBefore;
    for (const index of candidates) {
      throwIfAborted(signal);
      if (sliceUsedUp()) await nextSlice(signal);
      if (protectedAt?.[index]) continue;
      const decided = prune(index);
      const pruned = decided === null || "replacement" in decided ? decided : await decided;
      if (pruned === null) continue;
      output[index] = pruned.replacement;
      rewritten.push({ original: messages[index]!, replacement: pruned.replacement });
      tokens -= pruned.saved;
      if (tokens <= targetTokens) break;
    }
    throwIfAborted(signal);
    if (rewritten.length === 0) return unchangedReport(STRATEGY, messages, tokensBefore);
    return stageReport({ strategy: STRATEGY, input: messages, messages: output, removed: [], rewritten, added: [], tokensBefore, tokensAfter: tokens });
  }

  /**
   * This stage's pruning decided one result at a time, for a pipeline whose
   * next stage reads only some of the list (see `Compactor.rewritesInPlace`):
   * a candidate is decided as {@link compactWithReport} decides it when the
   * list does not fit after pruning, which prunes every eligible candidate.
   * `undefined` with `protect` or a native compaction marker (protection is decided over the whole list).
   */
  rewritesInPlace(messages: BaseMessage[], tokenCounter?: TokenCounterLike, options?: CompactOptions): InPlaceRewrites | undefined {
    if (hasProtection(messages, this.protect)) return undefined;
    const candidates = this.candidatesOf(messages);
    if (candidates.length === 0) return undefined;
    const signal = signalOf(options);
    const counter = resolveTokenCounter(tokenCounter);
    const counts = new MessageCounts(messages, counter, this.cache, signal);
    const prune = this.pruner(messages, counts, counter);
    const isCandidate = new Uint8Array(messages.length);
    for (const index of candidates) isCandidate[index] = 1;
    const output = messages.slice();
    // Each candidate's size once decided (NaN: not decided yet).
    const after = new Float64Array(messages.length).fill(Number.NaN);
    let saved = 0;
    /** The count of message `index`, waiting for the next time slice (or a long text counted in slices) when asked to. */
    const countOf = async (index: number): Promise<number | undefined> => {
      for (;;) {
        try {
          return counts.of(index);
        } catch (error) {
          if (!(error instanceof AsyncCountNeeded)) throw error;
          if (error.everything) return undefined; // an asynchronous counter: no lazy decisions
          await counts.settle();
        }
      }
    };
    return {
      strategy: STRATEGY,
      sizeOf: async (index) => {
        if (isCandidate[index] === 0) return countOf(index);
        if (Number.isNaN(after[index]!)) {
          throwIfAborted(signal);
          // Counted first, so that the pruner's own count of it is a lookup.
          const original = await countOf(index);
          if (original === undefined) return undefined;
          const pending = prune(index);
          const decided = pending === null || "replacement" in pending ? pending : await pending;
          if (decided !== null) {
            output[index] = decided.replacement;
            saved += decided.saved;
          }
          after[index] = original - (decided === null ? 0 : decided.saved);
        }
        return after[index]!;
      },
      decided: () => {
        const rewritten: RewrittenMessage[] = [];
        for (const index of candidates) if (output[index] !== messages[index]) rewritten.push({ original: messages[index]!, replacement: output[index]! });
        return { messages: output, rewritten, saved };
      },
    };
  }

  /**
   * The results this stage may prune, oldest first: every tool result but
   * the newest `minKeepResults` and the trailing batch; with `clearThinking`
   * or `clearToolInputs`, the older assistant messages in among them
   * (`assistant-clearing.ts`). Read from roles and shapes alone (nothing is
   * counted).
   */
  private candidatesOf(messages: readonly BaseMessage[]): number[] {
    const resultIndices: number[] = [];
    for (let index = 0; index < messages.length; index += 1) if (isTool(messages[index]!)) resultIndices.push(index);
    const batch = trailingBatch(messages);
    // The newest `minKeepResults` results stay, and so does the whole trailing batch, wherever its results stand.
    const results = resultIndices.slice(0, Math.max(0, resultIndices.length - this.minKeepResults)).filter((index) => !batch.has(index));
    const assistants = assistantCandidates(messages, this.clearing);
    return assistants.length === 0 ? results : [...results, ...assistants].sort((a, b) => a - b);
  }

  /**
   * Decides one candidate (by index into `messages`): its replacement and the
   * tokens that saves, or `null` when it stays (an error, small, already
   * rewritten, skipped, or a placeholder no smaller). Protection is the
   * caller's. Synchronous for a result when the counter is; an assistant
   * message is decided by `assistant-clearing.ts`.
   */
  private pruner(
    messages: readonly BaseMessage[],
    counts: MessageCounts,
    counter: MessageCounter,
  ): (index: number) => PruneDecision | null | Promise<PruneDecision | null> {
    let names: Map<string, string> | undefined;
    // One placeholder per tool name, rendered once.
    const placeholders = new Map<string, string>();
    let clearAssistant: ((index: number) => Promise<PruneDecision | null>) | undefined;
    return (index) => {
      if (!isTool(messages[index]!)) return (clearAssistant ??= assistantClearer(messages, this.clearing, counts, counter, this.cache))(index);
      const message = messages[index] as ToolMessage;
      if (!this.prunable(message)) return null;
      const originalTokens = counts.of(index);
      if (originalTokens <= this.minTokens) return null;
      let toolName = typeof message.name === "string" && message.name !== "" ? message.name : undefined;
      if (toolName === undefined) toolName = (names ??= callNames(messages)).get(message.tool_call_id) ?? "the tool";
      let text = placeholders.get(toolName);
      if (text === undefined) {
        text = renderPlaceholder(this.placeholder, toolName);
        placeholders.set(toolName, text);
      }
      const replacement = prunedResult(message, text, originalTokens);
      // Remembered: the window after this stage reads the kept placeholders again.
      const counted = countOne(replacement, counter, this.cache);
      if (typeof counted === "number") return decision(replacement, originalTokens, counted);
      return counted.then((replacementTokens) => decision(replacement, originalTokens, replacementTokens));
    };
  }

  private prunable(message: ToolMessage): boolean {
    if (message.status === "error") return false;
    if (compactionMetadataOf(message) !== undefined) return false;
    return !(this.skip?.(message) ?? false);
  }
}

/** A placeholder no smaller than the result would only cost the model its output. */
function decision(replacement: ToolMessage, originalTokens: number, replacementTokens: number): PruneDecision | null {
  return replacementTokens >= originalTokens ? null : { replacement, saved: originalTokens - replacementTokens };
}

/** The stand-in: the same `id`, `tool_call_id`, `name` and `status`, the placeholder as content, and the pruning metadata. */
function prunedResult(message: ToolMessage, content: string, originalTokens: number): ToolMessage {
  const compaction: PrunedResultMetadata = { strategy: STRATEGY, original_tokens: originalTokens };
  // Fields set one by one rather than spread in: this runs once per pruned result, tens of thousands on a long run.
  const fields: ToolMessageFields = {
    content,
    tool_call_id: message.tool_call_id,
    additional_kwargs: { ...message.additional_kwargs },
    response_metadata: withCompactionMetadata(message, compaction),
  };
  if (message.id !== undefined) fields.id = message.id;
  if (message.name !== undefined) fields.name = message.name;
  if (message.status !== undefined) fields.status = message.status;
  return new ToolMessage(fields);
}
