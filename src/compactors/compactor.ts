import { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { TokenCounterLike } from "../counting/types";
import { assertTools, describeValue } from "../errors";
import type { CompactionReport, RewrittenMessage } from "./report";

/** A tool as a model is bound to it: a LangChain tool, or an already converted definition. */
export type ToolLike = StructuredToolInterface | Record<string, unknown>;

/** What a request carries besides its message list. */
export interface RequestOverhead {
  /** Tools bound to the model: their schemas are sent with every request. */
  tools?: readonly ToolLike[];
  /** A system prompt held outside the message list (as `createAgent` holds it). */
  systemMessage?: BaseMessage | string | null;
  /** Any further fixed cost (provider template, reply priming), in tokens. Default `0`. */
  extraTokens?: number;
}

/** Per-call options every compactor accepts. */
export interface CompactOptions {
  /**
   * Aborts the compaction: a counter or a summary model still running is
   * abandoned and the call rejects with the signal's reason. Nothing is
   * half-applied: a compactor only returns a new list, it never edits its input.
   */
  signal?: AbortSignal;
  /**
   * What the model's request carries besides the messages being compacted,
   * when the caller knows it (the integrations pass it). A summary stage that
   * sends the conversation as the model last saw it (`summaryPrompt:
   * "conversation"`) sends these too, so the provider's prompt cache serves
   * that prefix.
   */
  request?: RequestOverhead;
  /**
   * What the agent or the user asked this compaction to keep (the compaction
   * tool's argument): a summary stage hands it to its model; other stages
   * ignore it.
   */
  instructions?: string;
  /**
   * The messages as the model last saw them, when an earlier stage of a
   * pipeline rewrote some of them in place (one for one) before this stage:
   * a summary stage in `"conversation"` mode sends these rather than the
   * rewritten ones, so the provider's cache still serves them. Set by
   * `CompactionPipeline`; ignored when its length differs from the list
   * being compacted.
   */
  asSent?: readonly BaseMessage[];
}

/** Throws a `TypeError` naming the bad field unless `request` and `instructions` of compaction options are well formed. */
export function assertRequestOptions(options: CompactOptions | undefined): void {
  if (options === undefined) return;
  const { request, instructions } = options;
  if (instructions !== undefined && typeof instructions !== "string") {
    throw new TypeError(`\`instructions\` must be a string, got ${describeValue(instructions)}`);
  }
  if (request === undefined) return;
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new TypeError(`\`request\` must be an object ({ tools, systemMessage, extraTokens }), got ${describeValue(request)}`);
  }
  const { systemMessage, tools } = request;
  if (systemMessage !== undefined && systemMessage !== null && typeof systemMessage !== "string" && !BaseMessage.isInstance(systemMessage)) {
    throw new TypeError(`\`request.systemMessage\` must be a message, a string or null, got ${describeValue(systemMessage)}`);
  }
  if (tools !== undefined) assertTools(tools, "request.tools");
}

/**
 * What every compaction strategy offers, and what every integration accepts
 * (`CompactionHook`, `compactMessages`, `createCompactionNode`,
 * `compactionMiddleware`, `CompactingChatMessageHistory`). An array of
 * compactors given to an integration means a `CompactionPipeline` of them.
 *
 * Recognised by its methods ({@link isCompactor}), never by `instanceof`: a
 * compactor may come from another copy of this package (ESM and CommonJS
 * loaded side by side), or be the user's own object.
 */
export interface Compactor {
  /**
   * Compacts `messages` toward `targetTokens`: the compacted list, or `null`
   * when it fits or nothing can usefully be changed. Neither the array nor its
   * messages are modified.
   */
  compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null>;
  /** Like `compact`, with a report of what was done. */
  compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport>;
  /**
   * Optional, for a stage that only rewrites messages in place (each
   * stand-in keeps its message's id, position and call ids, so the list
   * divides into the same groups): its rewrites decided one message at a
   * time, or `undefined` when this call cannot offer that. A pipeline whose
   * next stage offers {@link compactAfterRewrites} then asks only about the
   * messages that stage reads. Offering it promises that, whenever the list
   * still exceeds the target after this stage, each message is left as
   * `sizeOf` decides it (a subclass that changes `compact` must change this
   * too, or return `undefined`).
   */
  rewritesInPlace?(messages: BaseMessage[], tokenCounter?: TokenCounterLike, options?: CompactOptions): InPlaceRewrites | undefined;
  /**
   * Optional, for a stage that reads a list's groups newest first: its
   * compaction (`withReport`: its full report) of the list a previous stage's
   * {@link rewritesInPlace} leaves, asking those rewrites only about the
   * messages it reads; `undefined` when it cannot tell the result that way.
   */
  compactAfterRewrites?(
    rewrites: InPlaceRewrites,
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter: TokenCounterLike | undefined,
    options: CompactOptions | undefined,
    withReport: boolean,
  ): Promise<CompactionReport | undefined>;
}

/** A stage's rewrites in place, decided one message at a time (see {@link Compactor.rewritesInPlace}). */
export interface InPlaceRewrites {
  /** The stage's strategy, for its report. */
  readonly strategy: string;
  /**
   * The tokens of message `index` as the stage leaves it, deciding it first
   * when it may be rewritten; `undefined` when that cannot be told one
   * message at a time (an asynchronous counter).
   */
  sizeOf(index: number): Promise<number | undefined>;
  /** What the decisions made so far did: the list with them applied, the messages rewritten (in list order), and the tokens freed. */
  decided(): {
    /** The list with the decisions so far applied. */
    messages: BaseMessage[];
    /** The messages rewritten, in list order. */
    rewritten: RewrittenMessage[];
    /** The tokens the rewrites freed. */
    saved: number;
  };
}

/** Whether `value` offers the {@link Compactor} methods (a duck check: no `instanceof`). */
export function isCompactor(value: unknown): value is Compactor {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<Compactor>).compact === "function" &&
    typeof (value as Partial<Compactor>).compactWithReport === "function"
  );
}
