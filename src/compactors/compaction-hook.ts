import { BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { countTotal, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertTools, describeValue, reasonOf } from "../errors";
import { assertConversationInSlices } from "../messages/conversation-check";
import { isAI } from "../messages/roles";
import { assertCompactOptions, raceAbort, throwIfAborted } from "./abort";
import type { CompactOptions, Compactor, RequestOverhead } from "./compactor";
import type { CompactionReport } from "./report";
import { resolveCompactor } from "./resolve-compactor";

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
  /** Compact when the estimated context reaches `contextWindow × compactAt`. Default `0.7`. */
  compactAt?: number;
  /** Compact down to `contextWindow × compactTo` (minus the overhead). Default `0.4`. */
  compactTo?: number;
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

/** What {@link CompactionHook.run} returns when the trigger was reached. */
export interface CompactionHookReport extends CompactionReport {
  /** Set when the compaction was computed but not applied; then `messages` is `null` and nothing was removed, rewritten or added. */
  declined?: DeclinedCompaction;
}

/**
 * Where a compactor keeps its counts, for the hook to count through too: its
 * own `cache` when it has one (`null`: it counts afresh, and so does the
 * hook), else the shared cache. Read by its methods, as the cache class may
 * come from another copy of this package.
 */
function cacheOf(compactor: Compactor): TokenCountCache | null {
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
  const carried: BaseMessage[] = [];
  if (tools.length > 0) {
    let schemas: string;
    try {
      schemas = JSON.stringify(tools.map((tool) => convertToOpenAITool(tool as StructuredToolInterface)));
    } catch (error) {
      // A schema that cannot be serialized (a BigInt default, a cycle) or a tool whose converter throws.
      throw new TypeError(`\`tools\` cannot be turned into the JSON schemas a request carries: ${reasonOf(error)}`, { cause: error });
    }
    carried.push(new SystemMessage(schemas));
  }
  if (typeof systemMessage === "string") carried.push(new SystemMessage(systemMessage));
  else if (systemMessage !== null) {
    if (!BaseMessage.isInstance(systemMessage)) {
      throw new TypeError(`\`systemMessage\` must be a message or a string, got ${describeValue(systemMessage)}`);
    }
    carried.push(systemMessage);
  }
  return { carried, extraTokens };
}

function assertFraction(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new RangeError(`\`${name}\` must be a fraction of the context window in (0, 1], got ${describeValue(value)}`);
  }
}

/**
 * Decides when to compact and to what size, with hysteresis: it fires when
 * the estimated context reaches `contextWindow × compactAt` and compacts down
 * to `contextWindow × compactTo` minus what the request carries besides its
 * messages. Between two compactions the conversation only grows at its end,
 * so the prefix the model sees stays the same and provider prompt caches keep
 * hitting; compacting to just under the limit would instead cut a new prefix
 * on every call.
 *
 * The estimate trusts the provider where it can: the newest AI message's
 * `usage_metadata` (input plus output tokens, which already include tools and
 * system prompt) plus a local count of the messages after it. Without usage,
 * everything is counted locally, overhead included.
 */
export class CompactionHook {
  readonly compactor: Compactor;
  readonly contextWindow: number;
  readonly compactAt: number;
  readonly compactTo: number;
  readonly tokenCounter: TokenCounterLike | undefined;
  readonly minGainTokens: number;
  private readonly counter: MessageCounter;
  private readonly cache: TokenCountCache | null;

  constructor(options: CompactionHookOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`CompactionHook options must be an object, got ${describeValue(options)}`);
    }
    const { contextWindow, compactAt = 0.7, compactTo = 0.4, tokenCounter, minGainTokens = 0 } = options;
    const compactor = resolveCompactor(options.compactor);
    if (typeof contextWindow !== "number" || !Number.isInteger(contextWindow) || contextWindow <= 0) {
      throw new RangeError(`\`contextWindow\` must be a positive whole number of tokens, got ${describeValue(contextWindow)}`);
    }
    assertFraction("compactAt", compactAt);
    assertFraction("compactTo", compactTo);
    if (compactTo >= compactAt) {
      throw new RangeError(
        `\`compactTo\` (${compactTo}) must be below \`compactAt\` (${compactAt}): a target at or above the trigger would compact on every step`,
      );
    }
    assertTokenBudget("minGainTokens", minGainTokens);
    this.compactor = compactor;
    this.cache = cacheOf(compactor);
    this.minGainTokens = minGainTokens;
    this.contextWindow = contextWindow;
    this.compactAt = compactAt;
    this.compactTo = compactTo;
    this.tokenCounter = tokenCounter;
    this.counter = resolveTokenCounter(tokenCounter);
  }

  /** The estimated context size at which the hook fires. */
  get triggerTokens(): number {
    return this.contextWindow * this.compactAt;
  }

  /** The message budget after compaction: `max(floor(contextWindow × compactTo) − overhead, 0)`. */
  targetTokens(overheadTokens = 0): number {
    assertTokenBudget("overheadTokens", overheadTokens);
    return Math.max(Math.floor(this.contextWindow * this.compactTo) - overheadTokens, 0);
  }

  /** Tokens a request spends besides its messages: tool schemas, an outside system prompt, extras. */
  async overheadTokens(overhead: RequestOverhead = {}): Promise<number> {
    const { carried, extraTokens } = carriedOverhead(overhead);
    return extraTokens + (await this.countMessages(carried));
  }

  /**
   * The estimated size of the next request: the provider's last reported
   * usage plus a local count of the messages after it, or, with no usage
   * anywhere, a local count of every message plus `overheadTokens`.
   */
  async estimateTokens(messages: BaseMessage[], overheadTokens = 0): Promise<number> {
    return this.estimate(messages, overheadTokens, undefined);
  }

  /** Whether the estimate has reached the trigger. */
  async shouldCompact(messages: BaseMessage[], overheadTokens = 0): Promise<boolean> {
    return (await this.estimateTokens(messages, overheadTokens)) >= this.triggerTokens;
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
        return input_tokens + output_tokens + (await this.countMessages(messages.slice(index + 1), signal));
      }
    }
    return overheadTokens + (await this.countMessages(messages, signal));
  }

  /**
   * Compacts when the trigger is reached. Returns `null` when it is not;
   * otherwise the compactor's report, whose `messages` is itself `null` when
   * nothing could be changed, or when the compaction would free fewer than
   * `minGainTokens` (then `declined` says so, with the report not applied).
   *
   * `options.signal` aborts the run: counting, the compactor (which is given
   * the signal) and the hook's own wait for them; the promise then rejects
   * with the signal's reason, even when a counter or compactor never settles.
   */
  async run(messages: BaseMessage[], overhead: RequestOverhead = {}, options: CompactOptions = {}): Promise<CompactionHookReport | null> {
    assertCompactOptions(options);
    const { signal } = options;
    throwIfAborted(signal);
    const overheadTokens = await raceAbort(this.overheadTokens(overhead), signal);
    if ((await raceAbort(this.estimate(messages, overheadTokens, signal), signal)) < this.triggerTokens) return null;
    const report = await raceAbort(
      this.compactor.compactWithReport(messages, this.targetTokens(overheadTokens), this.tokenCounter, signal === undefined ? undefined : { signal }),
      signal,
    );
    throwIfAborted(signal);
    if (report.messages === null || this.minGainTokens === 0) return report;
    const gainTokens = await raceAbort(this.gainOf(messages, report, signal), signal);
    if (gainTokens >= this.minGainTokens) return report;
    const tokens = report.tokensBefore;
    return {
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
      declined: { reason: "min_gain", gainTokens, minGainTokens: this.minGainTokens, proposed: report },
    };
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
}
