import { BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { countTotal, MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertTools, describeValue, reasonOf } from "../errors";
import { assertConversationInSlices } from "../messages/conversation-check";
import { isSummaryMessage } from "../messages/compaction-metadata";
import { omissionNoteMetadata } from "../messages/omission-note";
import { latestNativeCompaction } from "../messages/native-compaction";
import { isAI, isHuman, isSystem } from "../messages/roles";
import { assertCompactOptions, raceAbort, throwIfAborted } from "./abort";
import { breakdownOf } from "./breakdown";
import type { TokenBreakdown } from "./breakdown";
import { assertRequestOptions } from "./compactor";
import type { CompactOptions, Compactor, RequestOverhead } from "./compactor";
import type { CompactionReport } from "./report";
import { resolveCompactor } from "./resolve-compactor";
import { assertTarget, assertTrigger, triggerFires, triggerTokens } from "./triggers";
import type { CompactionTarget, CompactionTrigger } from "./triggers";

/** Options of {@link CompactionHook}. */
export interface CompactionHookOptions {
  /**
   * What compacts: any {@link Compactor} (a `SlidingWindowCompactor`, another
   * strategy, a `CompactionPipeline`, your own object with `compact` and
   * `compactWithReport`), or an array of them, meaning
   * `new CompactionPipeline(array)`: the stages run in order until the
   * conversation fits. Default `new SlidingWindowCompactor()`.
   */
  compactor?: Compactor | readonly Compactor[];
  /** The model's context window, in tokens. Required: a positive whole number. */
  contextWindow: number;
  /** Compact when the estimated context reaches `contextWindow × compactAt`. Default `0.7`. Not with `trigger`. */
  compactAt?: number;
  /** Compact down to `contextWindow × compactTo` (minus the overhead). Default `0.4`. Not with `target`. */
  compactTo?: number;
  /**
   * When to compact, as a condition on tokens, messages or user turns, or
   * a combination (`{ any: [...] }`, `{ all: [...] }`): see
   * `CompactionTrigger`. Default `{ fraction: compactAt }`.
   */
  trigger?: CompactionTrigger;
  /**
   * What to compact down to: a fraction of the window, tokens, or the
   * newest messages or user turns to keep (see `CompactionTarget`). Default
   * `{ fraction: compactTo }`.
   */
  target?: CompactionTarget;
  /** Counts what the provider has not reported. Default `approximateTokenCounter`. */
  tokenCounter?: TokenCounterLike;
  /**
   * A compaction that frees fewer tokens than this is not applied: it would
   * change the prefix the model sees, and so break the provider's prompt
   * cache, for too little room. Default `0` (every compaction that changes
   * something is applied).
   */
  minGainTokens?: number;
}

/** Why {@link CompactionHook.run} did not apply a compaction it computed. */
export interface DeclinedCompaction {
  /** `"min_gain"`: it would have freed fewer than `minGainTokens`. */
  reason: "min_gain";
  /** Tokens it would have freed (by the hook's counter). */
  gainTokens: number;
  /** The hook's `minGainTokens`. */
  minGainTokens: number;
  /** The compactor's report of the compaction that was not applied. */
  proposed: CompactionReport;
}

/** What {@link CompactionHook.run} returns when the trigger was reached (or the run was forced). */
export interface CompactionHookReport extends CompactionReport {
  /** Set when the compaction was computed but not applied; then `messages` is `null` and nothing was removed, rewritten or added. */
  declined?: DeclinedCompaction;
  /** How long the compaction took, counting and any summary calls included, in milliseconds. */
  durationMs: number;
  /**
   * Where the request's tokens went before and after, by category (see
   * `TokenBreakdown`), counted locally with the hook's counter, the
   * request's tools and outside system prompt included. `after` equals
   * `before` when nothing was applied.
   */
  breakdown: {
    /** The request as it came. */
    before: TokenBreakdown;
    /** The request as compacted (equal to `before` when nothing was applied). */
    after: TokenBreakdown;
  };
  /** Whether the run was asked for (`force`) rather than set off by the trigger. */
  forced: boolean;
}

/** Options of {@link CompactionHook.run}: a compaction's own options, and whether to compact whatever the trigger says. */
export interface CompactionRunOptions extends CompactOptions {
  /** Compact now, whether or not the trigger is reached (the compaction tool, an overflow retry). Default `false`. */
  force?: boolean;
}

/** What an overflow taught the hook (see {@link CompactionHook.learnFromOverflow}). */
export interface OverflowLesson {
  /** The request's size as the provider counted it, when its error says. */
  requestTokens?: number;
  /** The provider's limit, when its error says. */
  limitTokens?: number;
  /** The request's size as the hook estimated it when it was sent. */
  estimatedTokens: number;
  /**
   * The request's size by the hook's own counter alone (see
   * {@link CompactionHook.localTokens}): what the provider's count is
   * compared with to scale local counts. The estimate is not, as it may
   * be mostly the provider's reported usage, already in its counts.
   * Default `estimatedTokens`.
   */
  localTokens?: number;
}

/**
 * Where a compactor keeps its counts, for the hook to count through too: its
 * own `cache` when it has one (`null`: it counts afresh, and so does the
 * hook), else the shared cache. Read by its methods, as the cache class may
 * come from another copy of this package.
 */
export function cacheOf(compactor: Compactor): TokenCountCache | null {
  const cache = (compactor as { cache?: unknown }).cache;
  if (cache === null) return null;
  if (typeof cache === "object" && typeof (cache as TokenCountCache).get === "function" && typeof (cache as TokenCountCache).set === "function") {
    return cache as TokenCountCache;
  }
  return sharedTokenCountCache;
}

/** What a request carries besides its messages, as the hook counts it: the messages it amounts to, and the extra tokens. */
export interface CarriedOverhead {
  /** The tool schemas (as one system message) and the outside system prompt. */
  carried: BaseMessage[];
  /** The tool schemas as one system message, or `null` without tools. */
  tools: BaseMessage | null;
  /** The outside system prompt, or `null`. */
  system: BaseMessage | null;
  extraTokens: number;
}

/**
 * Checks a {@link RequestOverhead} and turns it into what is counted, with
 * no `await`: an integration that is given its overhead once (the LangGraph
 * node) calls it when it is created, so a bad `tools`, `systemMessage` or
 * `extraTokens` throws there, not at the first run.
 */
export function carriedOverhead(overhead: unknown): CarriedOverhead {
  if (typeof overhead !== "object" || overhead === null || Array.isArray(overhead)) {
    throw new TypeError(`\`overhead\` must be an object ({ tools, systemMessage, extraTokens }), got ${describeValue(overhead)}`);
  }
  const { tools = [], systemMessage = null, extraTokens = 0 } = overhead as RequestOverhead;
  assertTokenBudget("extraTokens", extraTokens);
  assertTools(tools);
  let toolMessage: BaseMessage | null = null;
  if (tools.length > 0) {
    let schemas: string;
    try {
      schemas = JSON.stringify(tools.map((tool) => convertToOpenAITool(tool as StructuredToolInterface)));
    } catch (error) {
      // A schema that cannot be serialized (a BigInt default, a cycle) or a tool whose converter throws.
      throw new TypeError(`\`tools\` cannot be turned into the JSON schemas a request carries: ${reasonOf(error)}`, { cause: error });
    }
    toolMessage = new SystemMessage(schemas);
  }
  let system: BaseMessage | null = null;
  if (typeof systemMessage === "string") system = new SystemMessage(systemMessage);
  else if (systemMessage !== null) {
    if (!BaseMessage.isInstance(systemMessage)) {
      throw new TypeError(`\`systemMessage\` must be a message or a string, got ${describeValue(systemMessage)}`);
    }
    system = systemMessage;
  }
  const carried = [toolMessage, system].filter((message): message is BaseMessage => message !== null);
  return { carried, tools: toolMessage, system, extraTokens };
}

function assertFraction(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new RangeError(`\`${name}\` must be a fraction of the context window in (0, 1], got ${describeValue(value)}`);
  }
}

/**
 * Decides when to compact and to what size, with hysteresis: it fires when
 * the estimated context reaches `contextWindow × compactAt` (or its
 * `trigger`) and compacts down to `contextWindow × compactTo` (or its
 * `target`) minus what the request carries besides its messages. Between two
 * compactions the conversation only grows at its end, so the prefix the model
 * sees stays the same and provider prompt caches keep hitting; compacting to
 * just under the limit would instead cut a new prefix on every call.
 *
 * The estimate trusts the provider where it can: the newest AI message's
 * `usage_metadata` (input plus output tokens, which already include tools and
 * system prompt) plus a local count of the messages after it. Without usage,
 * everything is counted locally, overhead included.
 *
 * When a provider refuses a request as too long anyway (its tokenizer counts
 * differently, or its real window is smaller), an integration tells the hook
 * ({@link learnFromOverflow}): from then on local counts are scaled by what
 * the provider counted, and the window is held to the limit it reported, and
 * the integration retries once with a forced run.
 */
export class CompactionHook {
  /** What compacts: the compactor given, or the pipeline of the array given (default a `SlidingWindowCompactor`). */
  readonly compactor: Compactor;
  /** The model's context window, in tokens, as given (what an overflow teaches the hook does not change it). */
  readonly contextWindow: number;
  /** The trigger's fraction of the window when it is one (`{ fraction }`), else `NaN`. */
  readonly compactAt: number;
  /** The target's fraction of the window when it is one (`{ fraction }`), else `NaN`. */
  readonly compactTo: number;
  /** When the hook compacts. */
  readonly trigger: CompactionTrigger;
  /** What it compacts down to. */
  readonly target: CompactionTarget;
  /** The counter given, or `undefined` for the default `approximateTokenCounter`. */
  readonly tokenCounter: TokenCounterLike | undefined;
  /** A compaction that frees fewer tokens than this is not applied (default `0`). */
  readonly minGainTokens: number;
  private readonly counter: MessageCounter;
  private readonly cache: TokenCountCache | null;
  /** Local counts times this is what the provider counts (1 until an overflow says otherwise). */
  private scale = 1;
  /** The provider's window as an overflow reported or revealed it, when smaller than `contextWindow`. */
  private learnedWindow: number | undefined;
  /** The overhead counted last, by the references it was counted from. */
  private lastOverhead: { tools: RequestOverhead["tools"]; systemMessage: RequestOverhead["systemMessage"]; system: number; toolTokens: number } | null = null;

  constructor(options: CompactionHookOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`CompactionHook options must be an object, got ${describeValue(options)}`);
    }
    const { contextWindow, compactAt, compactTo, trigger, target, tokenCounter, minGainTokens = 0 } = options;
    const compactor = resolveCompactor(options.compactor);
    if (typeof contextWindow !== "number" || !Number.isInteger(contextWindow) || contextWindow <= 0) {
      throw new RangeError(`\`contextWindow\` must be a positive whole number of tokens, got ${describeValue(contextWindow)}`);
    }
    if (trigger !== undefined && compactAt !== undefined) throw new TypeError("give `trigger` or `compactAt`, not both: `compactAt: f` is `trigger: { fraction: f }`");
    if (target !== undefined && compactTo !== undefined) throw new TypeError("give `target` or `compactTo`, not both: `compactTo: f` is `target: { fraction: f }`");
    if (compactAt !== undefined) assertFraction("compactAt", compactAt);
    if (compactTo !== undefined) assertFraction("compactTo", compactTo);
    const chosenTrigger: CompactionTrigger = trigger ?? { fraction: compactAt ?? 0.7 };
    const chosenTarget: CompactionTarget = target ?? { fraction: compactTo ?? 0.4 };
    assertTrigger(chosenTrigger);
    assertTarget(chosenTarget);
    const triggerFraction = "fraction" in chosenTrigger ? chosenTrigger.fraction : Number.NaN;
    const targetFraction = "fraction" in chosenTarget ? chosenTarget.fraction : Number.NaN;
    if (targetFraction >= triggerFraction) {
      throw new RangeError(
        `\`compactTo\` (${targetFraction}) must be below \`compactAt\` (${triggerFraction}): a target at or above the trigger would compact on every step`,
      );
    }
    assertTokenBudget("minGainTokens", minGainTokens);
    this.compactor = compactor;
    this.cache = cacheOf(compactor);
    this.minGainTokens = minGainTokens;
    this.contextWindow = contextWindow;
    this.trigger = chosenTrigger;
    this.target = chosenTarget;
    this.compactAt = triggerFraction;
    this.compactTo = targetFraction;
    this.tokenCounter = tokenCounter;
    this.counter = resolveTokenCounter(tokenCounter);
  }

  /** The window the hook works to: `contextWindow`, or the smaller one an overflow revealed. */
  get effectiveWindow(): number {
    return Math.min(this.contextWindow, this.learnedWindow ?? Number.POSITIVE_INFINITY);
  }

  /** The estimated context size at which the trigger fires on tokens (`Infinity` when it has no token condition). */
  get triggerTokens(): number {
    return triggerTokens(this.trigger, this.effectiveWindow) ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The message budget after compaction for a `{ fraction }` or `{ tokens }`
   * target: that many tokens, in the hook's own counts (scaled down after an
   * overflow showed them short), minus the overhead, at least 0. For a
   * `{ messages }` or `{ turns }` target, see {@link run}.
   */
  targetTokens(overheadTokens = 0): number {
    assertTokenBudget("overheadTokens", overheadTokens);
    const target = this.target;
    const total = "tokens" in target ? target.tokens : "fraction" in target ? this.effectiveWindow * target.fraction : this.effectiveWindow;
    return Math.max(Math.floor(total / this.scale) - overheadTokens, 0);
  }

  /** Tokens a request spends besides its messages: tool schemas, an outside system prompt, extras. */
  async overheadTokens(overhead: RequestOverhead = {}): Promise<number> {
    const parts = await this.overheadParts(overhead);
    return parts.system + parts.tools + parts.extra;
  }

  /**
   * What a request carries besides its messages, by part. The schemas and
   * prompt counted last are remembered: an agent sends the same tools array
   * and system message with every call, and converting schemas costs far
   * more than comparing two references.
   */
  private async overheadParts(overhead: RequestOverhead): Promise<{ system: number; tools: number; extra: number }> {
    const last = this.lastOverhead;
    if (typeof overhead === "object" && overhead !== null && last !== null && last.tools === overhead.tools && last.systemMessage === overhead.systemMessage) {
      const extra = overhead.extraTokens ?? 0;
      assertTokenBudget("extraTokens", extra);
      return { system: last.system, tools: last.toolTokens, extra };
    }
    const carried = carriedOverhead(overhead);
    const system = carried.system === null ? 0 : await this.countMessages([carried.system]);
    const tools = carried.tools === null ? 0 : await this.countMessages([carried.tools]);
    // An overhead of extra tokens alone (commit mode before the model call) leaves the remembered schemas as they are.
    if (carried.system !== null || carried.tools !== null) this.lastOverhead = { tools: overhead.tools, systemMessage: overhead.systemMessage, system, toolTokens: tools };
    return { system, tools, extra: carried.extraTokens };
  }

  /**
   * The estimated size of the next request: the provider's last reported
   * usage plus a local count of the messages after it, or, with no usage
   * anywhere, a local count of every message plus `overheadTokens` (local
   * counts scaled once an overflow showed them short).
   */
  async estimateTokens(messages: BaseMessage[], overheadTokens = 0): Promise<number> {
    return this.estimate(messages, overheadTokens, undefined);
  }

  /**
   * The size of a request by the hook's own counter alone: `messages` plus
   * `overheadTokens`, no reported usage, no scaling. What an overflow's count
   * is set against (see {@link learnFromOverflow}).
   */
  async localTokens(messages: BaseMessage[], overheadTokens = 0): Promise<number> {
    await assertConversationInSlices(messages);
    assertTokenBudget("overheadTokens", overheadTokens);
    return overheadTokens + (await this.countMessages(messages));
  }

  /** Whether the trigger holds for `messages`. */
  async shouldCompact(messages: BaseMessage[], overheadTokens = 0): Promise<boolean> {
    await assertConversationInSlices(messages);
    assertTokenBudget("overheadTokens", overheadTokens);
    return this.triggered(messages, overheadTokens, undefined);
  }

  /**
   * Takes in what a provider's "request too long" error said about a
   * request the hook estimated at `estimatedTokens`: local counts are scaled
   * by the provider's count where it gave one, and the window is held to the
   * provider's limit where it gave one, or, where it gave neither, to
   * nine tenths of what was refused. Later estimates and targets use both.
   */
  learnFromOverflow(lesson: OverflowLesson): void {
    const { requestTokens, limitTokens, estimatedTokens, localTokens = estimatedTokens } = lesson;
    if (requestTokens !== undefined && localTokens > 0 && requestTokens > localTokens) {
      this.scale = Math.max(this.scale, requestTokens / localTokens);
    }
    const window = limitTokens ?? (requestTokens === undefined ? Math.floor(estimatedTokens * 0.9) : undefined);
    if (window !== undefined && window > 0) this.learnedWindow = Math.min(this.learnedWindow ?? Number.POSITIVE_INFINITY, window);
  }

  /**
   * Compacts when the trigger holds, or whenever `options.force` says to.
   * Returns `null` when it does not; otherwise the compactor's report, with
   * how long it took and where the tokens went before and after, whose
   * `messages` is itself `null` when nothing could be changed, or when the
   * compaction would free fewer than `minGainTokens` (then `declined` says
   * so, with the report not applied).
   *
   * `options.signal` aborts the run: counting, the compactor (which is given
   * the signal) and the hook's own wait for them; the promise then rejects
   * with the signal's reason, even when a counter or compactor never settles.
   * `options.instructions` and `options.request` reach the compactor.
   */
  async run(messages: BaseMessage[], overhead: RequestOverhead = {}, options: CompactionRunOptions = {}): Promise<CompactionHookReport | null> {
    assertCompactOptions(options);
    assertRequestOptions(options);
    const { signal, force = false } = options;
    if (typeof force !== "boolean") throw new TypeError(`\`force\` must be a boolean, got ${describeValue(force)}`);
    throwIfAborted(signal);
    const started = performance.now();
    const parts = await raceAbort(this.overheadParts(overhead), signal);
    const overheadTokens = parts.system + parts.tools + parts.extra;
    await assertConversationInSlices(messages, signal);
    if (!force && !(await raceAbort(this.triggered(messages, overheadTokens, signal), signal))) return null;
    const targetTokens = await raceAbort(this.budgetFor(messages, overheadTokens, signal), signal);
    const compactOptions: CompactOptions = {
      ...(signal === undefined ? {} : { signal }),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
      request: options.request ?? { tools: overhead.tools ?? [], systemMessage: overhead.systemMessage ?? null },
    };
    const report = await raceAbort(this.compactor.compactWithReport(messages, targetTokens, this.tokenCounter, compactOptions), signal);
    throwIfAborted(signal);
    const finish = async (applied: CompactionReport, declined?: DeclinedCompaction): Promise<CompactionHookReport> => {
      const side = { system: parts.system, tools: parts.tools + parts.extra };
      const beforeCounts = await this.countsOf(messages, signal);
      const before = breakdownOf(messages, beforeCounts, side);
      let after = before;
      if (applied.messages !== null) {
        // Most of the result is the input's own messages: their counts are reused, only the rest is counted.
        const known = new Map<BaseMessage, number>();
        messages.forEach((message, index) => known.set(message, beforeCounts[index]!));
        const added = applied.messages.filter((message) => !known.has(message));
        const addedCounts = await this.countsOf(added, signal);
        added.forEach((message, index) => known.set(message, addedCounts[index]!));
        after = breakdownOf(applied.messages, applied.messages.map((message) => known.get(message)!), side);
      }
      return { ...applied, ...(declined === undefined ? {} : { declined }), durationMs: performance.now() - started, breakdown: { before, after }, forced: force };
    };
    if (report.messages === null || this.minGainTokens === 0) return finish(report);
    const gainTokens = await raceAbort(this.gainOf(messages, report, signal), signal);
    if (gainTokens >= this.minGainTokens) return finish(report);
    const tokens = report.tokensBefore;
    return finish(
      {
        ...report,
        messages: null,
        removed: [],
        rewritten: [],
        added: [],
        standsFor: [],
        note: null,
        keptCount: messages.length,
        stepsTrimmed: false,
        tokensAfter: tokens,
      },
      { reason: "min_gain", gainTokens, minGainTokens: this.minGainTokens, proposed: report },
    );
  }

  /** {@link estimateTokens}, its checking and counting (in time slices) stopped by `signal`. */
  private async estimate(messages: BaseMessage[], overheadTokens: number, signal: AbortSignal | undefined): Promise<number> {
    await assertConversationInSlices(messages, signal);
    assertTokenBudget("overheadTokens", overheadTokens);
    for (let index = messages.length - 1; index >= 0; index -= 1) {
      const message = messages[index]!;
      if (!isAI(message) || !message.usage_metadata) continue;
      const { input_tokens = 0, output_tokens = 0 } = message.usage_metadata;
      if (Number.isFinite(input_tokens) && Number.isFinite(output_tokens) && input_tokens + output_tokens > 0) {
        return input_tokens + output_tokens + this.scale * (await this.countMessages(messages.slice(index + 1), signal));
      }
    }
    const read = (await this.countMessages(messages, signal)) - (await this.behindNativeCompaction(messages, messages.length, signal));
    return this.scale * (overheadTokens + read);
  }

  /**
   * Local tokens of the messages before `until` that the provider no longer
   * reads: those before the latest native compaction marker
   * (`native-compaction.ts`), the leading system messages aside. The stages
   * leave them as they are, so the compactor's budget is raised by as much,
   * and the estimate does not count them.
   */
  private async behindNativeCompaction(messages: BaseMessage[], until: number, signal: AbortSignal | undefined): Promise<number> {
    const end = Math.min(latestNativeCompaction(messages), until);
    if (end <= 0) return 0;
    let start = 0;
    while (start < end && isSystem(messages[start]!)) start += 1;
    return this.countMessages(messages.slice(start, end), signal);
  }

  /** Whether the trigger holds: the estimate (made once, only if a condition reads it), the messages, the user turns. */
  private triggered(messages: BaseMessage[], overheadTokens: number, signal: AbortSignal | undefined): Promise<boolean> {
    return triggerFires(this.trigger, {
      contextWindow: this.effectiveWindow,
      tokens: () => this.estimate(messages, overheadTokens, signal),
      messages: () => messages.length,
      turns: () => userTurns(messages).length,
    });
  }

  /**
   * The compactor's budget: {@link targetTokens} for a token target; for a
   * `{ messages }` or `{ turns }` target, the tokens of the instructions plus
   * those of the newest that many messages or turns (all of them when there
   * are fewer). Either way plus what stands before a native compaction
   * marker, which the stages keep and the provider does not read.
   */
  private async budgetFor(messages: BaseMessage[], overheadTokens: number, signal: AbortSignal | undefined): Promise<number> {
    const target = this.target;
    if (!("messages" in target) && !("turns" in target)) return this.targetTokens(overheadTokens) + (await this.behindNativeCompaction(messages, messages.length, signal));
    let from: number;
    if ("messages" in target) from = Math.max(0, messages.length - target.messages);
    else {
      const turns = userTurns(messages);
      from = turns.length <= target.turns ? 0 : turns[turns.length - target.turns]!;
    }
    let instructionsEnd = 0;
    while (instructionsEnd < from && messages[instructionsEnd]!.type === "system") instructionsEnd += 1;
    return (
      (await this.countMessages(messages.slice(0, instructionsEnd), signal)) +
      (await this.countMessages(messages.slice(from), signal)) +
      (await this.behindNativeCompaction(messages, from, signal))
    );
  }

  /** Tokens a compaction frees: from its report when it counted, else counted here. */
  private async gainOf(messages: BaseMessage[], report: CompactionReport, signal: AbortSignal | undefined): Promise<number> {
    const { tokensBefore, tokensAfter } = report;
    if (Number.isFinite(tokensBefore) && Number.isFinite(tokensAfter)) return tokensBefore - tokensAfter;
    return (await this.countMessages(messages, signal)) - (await this.countMessages(report.messages ?? messages, signal));
  }

  private countMessages(messages: BaseMessage[], signal?: AbortSignal): Promise<number> {
    return countTotal(messages, this.counter, this.cache, signal);
  }

  /** Each message's count, in list order. */
  private async countsOf(messages: readonly BaseMessage[], signal: AbortSignal | undefined): Promise<number[]> {
    const counts = new MessageCounts(messages, this.counter, this.cache, signal);
    await counts.countAll();
    return messages.map((_, index) => counts.of(index));
  }
}

/** Indices of the real user messages (not omission notes, not summaries): the user turns. */
function userTurns(messages: readonly BaseMessage[]): number[] {
  const turns: number[] = [];
  messages.forEach((message, index) => {
    if (isHuman(message) && omissionNoteMetadata(message) === undefined && !isSummaryMessage(message)) turns.push(index);
  });
  return turns;
}
