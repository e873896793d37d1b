/**
 * What a run's requests cost: their size, whether each kept the previous
 * request's message prefix, and what a provider with a prompt cache would
 * bill for them, from the longest common prefix (in tokens) of each request
 * with the one before it.
 */
import { SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCounter } from "../../src";

/** A request as the metrics read it: its messages and the tool schemas sent with them. */
export interface RequestShape {
  messages: readonly BaseMessage[];
  /** The tool schemas as JSON (`""` when none); they precede the messages in what a provider caches. */
  toolSchemaText: string;
}

/** A prompt-cache price model, per input token, relative to the uncached price. */
export interface PriceModel {
  name: string;
  /** Price of a token of the common prefix with the previous request (read from the cache). */
  cached: number;
  /** Price of every other token of the request (written to the cache, or plain uncached input). */
  fresh: number;
  description: string;
}

/** A: uncached 1.0, cache write 1.25, cache read 0.1 (a cache breakpoint on the last message, as agents on Anthropic set it). */
export const PRICE_A: PriceModel = {
  name: "A",
  cached: 0.1,
  fresh: 1.25,
  description: "uncached 1.0, cache write 1.25, cache read 0.1: the common prefix with the previous request is read from the cache, the rest is written to it",
};

/** B: uncached 1.0, cached 0.5 (an automatic prefix cache with no write surcharge). */
export const PRICE_B: PriceModel = {
  name: "B",
  cached: 0.5,
  fresh: 1.0,
  description: "uncached 1.0, cached 0.5: the common prefix with the previous request is billed at half price, the rest at full price",
};

/** What a message is, for comparing requests whose message objects differ (a checkpointer copies them). */
export function messageFingerprint(message: BaseMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const calls = "tool_calls" in message && Array.isArray(message.tool_calls) ? JSON.stringify(message.tool_calls.map((c) => [c.id, c.name, c.args])) : "";
  const callId = "tool_call_id" in message ? String(message.tool_call_id) : "";
  return `${message.type}\u0000${message.name ?? ""}\u0000${callId}\u0000${calls}\u0000${content}`;
}

/** Counts messages one at a time, remembering each count by object and by fingerprint. */
export class MessageTokens {
  private readonly byObject = new WeakMap<BaseMessage, number>();
  private readonly byFingerprint = new Map<string, number>();
  private readonly fingerprints = new WeakMap<BaseMessage, string>();

  constructor(private readonly counter: TokenCounter) {}

  fingerprint(message: BaseMessage): string {
    let print = this.fingerprints.get(message);
    if (print === undefined) {
      print = messageFingerprint(message);
      this.fingerprints.set(message, print);
    }
    return print;
  }

  of(message: BaseMessage): number {
    const known = this.byObject.get(message);
    if (known !== undefined) return known;
    const print = this.fingerprint(message);
    let tokens = this.byFingerprint.get(print);
    if (tokens === undefined) {
      tokens = this.counter([message]) as number;
      this.byFingerprint.set(print, tokens);
    }
    this.byObject.set(message, tokens);
    return tokens;
  }

  /** The counter's total for `messages` (it is additive over messages), from the remembered counts. */
  total(messages: readonly BaseMessage[]): number {
    let sum = 0;
    for (const message of messages) sum += this.of(message);
    return sum;
  }

  /** Tokens of the tool schemas, counted as one system message. */
  schemas(text: string): number {
    return text === "" ? 0 : this.of(new SystemMessage(text));
  }

  /** A counter with the same results that reads the remembered counts (for every strategy alike). */
  asCounter(): TokenCounter {
    const counter: TokenCounter = (messages) => this.total(messages);
    return counter;
  }
}

/** One request compared with the one before it. */
export interface RequestStep {
  tokens: number;
  /** Tokens of the longest common prefix with the previous request (tool schemas first, then whole messages). */
  commonPrefixTokens: number;
  /** The previous request's message list is not a prefix of this one's. */
  prefixBreak: boolean;
}

/**
 * Compares `current` with `previous` (or nothing, for a run's first
 * request). The common prefix is counted in whole messages: a provider's
 * cache could also reuse the first tokens of the first message that differs,
 * which this leaves out (it is at most one message's framing and opening).
 */
export function compareRequests(tokens: MessageTokens, previous: RequestShape | null, current: RequestShape): RequestStep {
  const schemaTokens = tokens.schemas(current.toolSchemaText);
  const total = schemaTokens + tokens.total(current.messages);
  if (previous === null) return { tokens: total, commonPrefixTokens: 0, prefixBreak: false };
  let common = 0;
  let same = 0;
  if (previous.toolSchemaText === current.toolSchemaText) {
    common = schemaTokens;
    const length = Math.min(previous.messages.length, current.messages.length);
    while (same < length) {
      const before = previous.messages[same]!;
      const now = current.messages[same]!;
      if (before !== now && tokens.fingerprint(before) !== tokens.fingerprint(now)) break;
      common += tokens.of(now);
      same += 1;
    }
  }
  // A break is about the messages; a change of tools alone also invalidates the cache (common stays 0).
  const prefixBreak = same < previous.messages.length || previous.toolSchemaText !== current.toolSchemaText;
  return { tokens: total, commonPrefixTokens: common, prefixBreak };
}

/** What `steps` cost under `price`: the common prefix at the cached price, the rest at the fresh price. */
export function billedInput(steps: readonly RequestStep[], price: PriceModel): number {
  let sum = 0;
  for (const step of steps) sum += step.commonPrefixTokens * price.cached + (step.tokens - step.commonPrefixTokens) * price.fresh;
  return sum;
}

/** The running total of {@link billedInput}, one value per request (for the chart). */
export function cumulativeBilled(steps: readonly RequestStep[], price: PriceModel): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const step of steps) {
    sum += step.commonPrefixTokens * price.cached + (step.tokens - step.commonPrefixTokens) * price.fresh;
    out.push(sum);
  }
  return out;
}
