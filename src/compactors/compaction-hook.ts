import { BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { countTotal, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertTools, describeValue } from "../errors";
import { isAI } from "../messages/roles";
import type { CompactionReport } from "./report";
import { assertConversation, SlidingWindowCompactor } from "./sliding-window";

/** A tool as a model is bound to it: a LangChain tool, or an already converted definition. */
export type ToolLike = StructuredToolInterface | Record<string, unknown>;

/** Options of {@link CompactionHook}. */
export interface CompactionHookOptions {
  /** The compactor that chooses what to keep. Default `new SlidingWindowCompactor()`. */
  compactor?: SlidingWindowCompactor;
  /** The model's context window, in tokens. Required: a positive whole number. */
  contextWindow: number;
  /** Compact when the estimated context reaches `contextWindow × compactAt`. Default `0.7`. */
  compactAt?: number;
  /** Compact down to `contextWindow × compactTo` (minus the overhead). Default `0.4`. */
  compactTo?: number;
  /** Counts what the provider has not reported. Default `approximateTokenCounter`. */
  tokenCounter?: TokenCounterLike;
}

/** What a request carries besides its message list. */
export interface RequestOverhead {
  /** Tools bound to the model: their schemas are sent with every request. */
  tools?: readonly ToolLike[];
  /** A system prompt held outside the message list (as `createAgent` does). */
  systemMessage?: BaseMessage | string | null;
  /** Any further fixed cost (provider template, reply priming), in tokens. Default `0`. */
  extraTokens?: number;
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
  readonly compactor: SlidingWindowCompactor;
  readonly contextWindow: number;
  readonly compactAt: number;
  readonly compactTo: number;
  readonly tokenCounter: TokenCounterLike | undefined;
  private readonly counter: MessageCounter;

  constructor(options: CompactionHookOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`CompactionHook options must be an object, got ${describeValue(options)}`);
    }
    const { compactor = new SlidingWindowCompactor(), contextWindow, compactAt = 0.7, compactTo = 0.4, tokenCounter } = options;
    if (!(compactor instanceof SlidingWindowCompactor)) {
      throw new TypeError(`\`compactor\` must be a SlidingWindowCompactor, got ${describeValue(compactor)}`);
    }
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
    this.compactor = compactor;
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
    if (typeof overhead !== "object" || overhead === null || Array.isArray(overhead)) {
      throw new TypeError(`\`overhead\` must be an object ({ tools, systemMessage, extraTokens }), got ${describeValue(overhead)}`);
    }
    const { tools = [], systemMessage = null, extraTokens = 0 } = overhead;
    assertTokenBudget("extraTokens", extraTokens);
    assertTools(tools);
    const carried: BaseMessage[] = [];
    if (tools.length > 0) {
      const schemas = tools.map((tool) => convertToOpenAITool(tool as StructuredToolInterface));
      carried.push(new SystemMessage(JSON.stringify(schemas)));
    }
    if (typeof systemMessage === "string") carried.push(new SystemMessage(systemMessage));
    else if (systemMessage !== null) {
      if (!BaseMessage.isInstance(systemMessage)) {
        throw new TypeError(`\`systemMessage\` must be a message or a string, got ${describeValue(systemMessage)}`);
      }
      carried.push(systemMessage);
    }
    return extraTokens + (await this.countMessages(carried));
  }

  /**
   * The estimated size of the next request: the provider's last reported
   * usage plus a local count of the messages after it, or, with no usage
   * anywhere, a local count of every message plus `overheadTokens`.
   */
  async estimateTokens(messages: BaseMessage[], overheadTokens = 0): Promise<number> {
    assertConversation(messages);
    assertTokenBudget("overheadTokens", overheadTokens);
    for (let index = messages.length - 1; index >= 0; index -= 1) {
      const message = messages[index]!;
      if (!isAI(message) || !message.usage_metadata) continue;
      const { input_tokens = 0, output_tokens = 0 } = message.usage_metadata;
      if (Number.isFinite(input_tokens) && Number.isFinite(output_tokens) && input_tokens + output_tokens > 0) {
        return input_tokens + output_tokens + (await this.countMessages(messages.slice(index + 1)));
      }
    }
    return overheadTokens + (await this.countMessages(messages));
  }

  /** Whether the estimate has reached the trigger. */
  async shouldCompact(messages: BaseMessage[], overheadTokens = 0): Promise<boolean> {
    return (await this.estimateTokens(messages, overheadTokens)) >= this.triggerTokens;
  }

  /**
   * Compacts when the trigger is reached. Returns `null` when it is not;
   * otherwise the compactor's report (whose `messages` is itself `null` when
   * nothing could be removed).
   */
  async run(messages: BaseMessage[], overhead: RequestOverhead = {}): Promise<CompactionReport | null> {
    const overheadTokens = await this.overheadTokens(overhead);
    if (!(await this.shouldCompact(messages, overheadTokens))) return null;
    return this.compactor.compactWithReport(messages, this.targetTokens(overheadTokens), this.tokenCounter);
  }

  private countMessages(messages: BaseMessage[]): Promise<number> {
    return countTotal(messages, this.counter, this.compactor.cache);
  }
}
