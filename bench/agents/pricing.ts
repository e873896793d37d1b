/**
 * What a run's model calls cost under two providers' prompt-caching price
 * models, all in: the agent's requests, the summary calls, and every output.
 *
 * A request is serialized in provider order — the tool schemas, then the
 * messages (the system prompt first) — and compared, a whole message (or the
 * whole tool-schema block) at a time, with every EARLIER request of the same
 * run, agent and summary calls alike (they share the provider's cache). The
 * longest prefix it shares with any of them is its cacheable prefix. Cache
 * lifetime (TTL) is ignored: a run's calls are taken to follow each other
 * within the provider's cache lifetime.
 *
 * Constants, each relative to the price of one uncached input token:
 *
 * - Anthropic-style ({@link ANTHROPIC}): a prefix of at least 1,024 tokens
 *   is read from the cache at 0.1; the rest of a request of at least 1,024
 *   tokens is written to the cache at 1.25 (a cache breakpoint on the last
 *   message, as agents on Anthropic set it); a request under 1,024 tokens
 *   cannot be cached and is billed at 1.0. Output at 5.
 * - OpenAI-style, current models ({@link OPENAI}): the cached prefix counts
 *   from 1,024 tokens in steps of 128 (a 1,300-token prefix caches 1,280)
 *   and is billed at 0.1; everything else at 1.0, no write premium. Output
 *   at 4.
 * - OpenAI-style, older models ({@link OPENAI_OLDER}): the same with the
 *   cached prefix at 0.5.
 *
 * Anthropic's cache is stricter than "any earlier prefix": a hit needs a
 * breakpoint written at that exact point, within 20 blocks of the new
 * breakpoint. This model gives every strategy the looser rule; a strategy
 * that edits mid-conversation (context editing, compaction) gains most
 * from it.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { messageFingerprint } from "./message-tokens";

/** One price model, in multiples of the uncached input price. */
export interface PriceModel {
  key: "anthropic" | "openai" | "openai-older";
  label: string;
  /** Price of a cached prefix token. */
  cacheRead: number;
  /** Price of an uncached token of a request that is written to the cache (1.0: no write premium). */
  cacheWrite: number;
  /** Price of an output token. */
  output: number;
  /** The shortest prefix a provider caches. */
  minCachedTokens: number;
  /** The cached prefix counts in steps of this many tokens past the minimum (1: any length). */
  cacheStep: number;
}

export const ANTHROPIC: PriceModel = { key: "anthropic", label: "Anthropic-style", cacheRead: 0.1, cacheWrite: 1.25, output: 5, minCachedTokens: 1_024, cacheStep: 1 };
export const OPENAI: PriceModel = { key: "openai", label: "OpenAI-style (cached 0.1)", cacheRead: 0.1, cacheWrite: 1, output: 4, minCachedTokens: 1_024, cacheStep: 128 };
export const OPENAI_OLDER: PriceModel = { key: "openai-older", label: "OpenAI-style, older models (cached 0.5)", cacheRead: 0.5, cacheWrite: 1, output: 4, minCachedTokens: 1_024, cacheStep: 128 };
export const PRICE_MODELS: readonly PriceModel[] = [ANTHROPIC, OPENAI, OPENAI_OLDER];

/** The tokens of a shared prefix that the provider bills as cached. */
export function cachedTokens(price: PriceModel, sharedPrefixTokens: number): number {
  if (sharedPrefixTokens < price.minCachedTokens) return 0;
  return price.minCachedTokens + Math.floor((sharedPrefixTokens - price.minCachedTokens) / price.cacheStep) * price.cacheStep;
}

/** One model call as billed: its input size, the prefix it shares with an earlier call, its output. */
export interface BilledCall {
  inputTokens: number;
  sharedPrefixTokens: number;
  outputTokens: number;
}

/** The input price of one call. */
export function inputCost(price: PriceModel, call: BilledCall): number {
  const cached = cachedTokens(price, call.sharedPrefixTokens);
  const rest = call.inputTokens - cached;
  // A request too short to be cached is plain input; otherwise what is not read from the cache is written to it.
  const restPrice = call.inputTokens < price.minCachedTokens ? 1 : price.cacheWrite;
  return cached * price.cacheRead + rest * restPrice;
}

/** The output price of one call. */
export function outputCost(price: PriceModel, call: BilledCall): number {
  return call.outputTokens * price.output;
}

/** One block of a serialized request: the tool schemas, or one message. */
export interface RequestBlock {
  key: string;
  tokens: number;
}

/** The blocks of a request in provider order: the tool schemas (when any), then each message. */
export function requestBlocks(toolSchemaText: string, schemaTokens: number, messages: readonly BaseMessage[], tokensOf: (message: BaseMessage) => number, fingerprint: (message: BaseMessage) => string = messageFingerprint): RequestBlock[] {
  const blocks: RequestBlock[] = [{ key: `tools\u0000${toolSchemaText}`, tokens: schemaTokens }];
  for (const message of messages) blocks.push({ key: fingerprint(message), tokens: tokensOf(message) });
  return blocks;
}

interface TrieNode {
  children: Map<number, TrieNode>;
}

/**
 * Every request of a run so far, as a trie of blocks: {@link add} returns
 * the tokens of the longest prefix a new request shares with any earlier
 * one, then remembers it.
 */
export class PrefixCache {
  private readonly root: TrieNode = { children: new Map() };
  private readonly ids = new Map<string, number>();

  private idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }

  /** Tokens of the longest whole-block prefix `blocks` shares with an earlier request; `blocks` is remembered. */
  add(blocks: readonly RequestBlock[]): number {
    let node = this.root;
    let shared = 0;
    let index = 0;
    for (; index < blocks.length; index += 1) {
      const next = node.children.get(this.idOf(blocks[index]!.key));
      if (next === undefined) break;
      shared += blocks[index]!.tokens;
      node = next;
    }
    for (; index < blocks.length; index += 1) {
      const child: TrieNode = { children: new Map() };
      node.children.set(this.idOf(blocks[index]!.key), child);
      node = child;
    }
    return shared;
  }
}

/** A run's bill under one price model. */
export interface Bill {
  agentInput: number;
  summaryInput: number;
  output: number;
  /** Agent input + summary input + all outputs. */
  allIn: number;
}

/** Sums the bill of `calls` (agent and summary calls, each tagged). */
export function billOf(price: PriceModel, calls: readonly (BilledCall & { kind: "agent" | "summary" })[]): Bill {
  let agentInput = 0;
  let summaryInput = 0;
  let output = 0;
  for (const call of calls) {
    if (call.kind === "agent") agentInput += inputCost(price, call);
    else summaryInput += inputCost(price, call);
    output += outputCost(price, call);
  }
  return { agentInput, summaryInput, output, allIn: agentInput + summaryInput + output };
}
