import { ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { assertCacheOption, sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { MessageCounts, resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, assertWholeNumber, describeValue } from "../errors";
import { compactionMetadataOf, withCompactionMetadata } from "../messages/compaction-metadata";
import type { OffloadedResultMetadata } from "../messages/compaction-metadata";
import { exchangesOf } from "../messages/exchanges";
import { isTool, toolCallIdOf } from "../messages/roles";
import { nextSlice, sliceUsedUp } from "../time-slices";
import { assertCompactOptions, raceAbort, signalOf, throwIfAborted } from "./abort";
import type { CompactOptions, Compactor } from "./compactor";
import { countOne } from "./count-one";
import {
  assertOffloadStore,
  checkedNamespace,
  DEFAULT_OFFLOAD_NAMESPACE,
  OFFLOAD_READER_TOOL_NAME,
  offloadKey,
} from "./offload-store";
import type { OffloadedResult, OffloadStore } from "./offload-store";
import { assertProtect, protectedMessagesInSlices } from "./protection";
import type { ProtectPredicate } from "./protection";
import type { CompactionReport, RewrittenMessage } from "./report";
import { assertConversationInSlices } from "../messages/conversation-check";
import { stageReport, unchangedReport } from "./stage-report";

/** The `strategy` of offloaded results and of this stage's reports. */
const STRATEGY = "tool_result_offloading";

/** Options of {@link ToolResultOffloadCompactor}. */
export interface ToolResultOffloadCompactorOptions {
  /** Where originals go: a LangGraph `BaseStore` (`InMemoryStore`, `PostgresStore`, ...). */
  store: OffloadStore;
  /** The store namespace. Default `["compaction", "tool-results"]` ({@link DEFAULT_OFFLOAD_NAMESPACE}). */
  namespace?: readonly string[];
  /** The newest tool-calling steps whose results stay in context (all parallel results of each). At least 1. Default `1`. */
  minKeepSteps?: number;
  /** Only results of more than this many tokens are offloaded. Default `200`. */
  minTokens?: number;
  /** Leading characters of the original shown in the reference. Default `200`. */
  previewChars?: number;
  /** Messages never offloaded, nor the results of a protected call (see `SlidingWindowCompactorOptions.protect`). */
  protect?: ProtectPredicate;
  /** Where token counts are remembered. Default: the shared cache; `null` counts afresh. */
  cache?: TokenCountCache | null;
}

/** The text of a result made only of text (a string, or text blocks), or `undefined` for anything else. */
function offloadableText(content: BaseMessage["content"]): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const block of content as unknown[]) {
    if (typeof block === "string") texts.push(block);
    else if (typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text" && typeof (block as { text?: unknown }).text === "string") {
      texts.push((block as { text: string }).text);
    } else return undefined;
  }
  return texts.join("\n");
}

/**
 * Indices of the results of the newest `steps` tool-calling steps. A step is
 * an exchange (`exchangesOf`: an assistant message's calls, in any shape,
 * with every result answering them), placed by its newest asking message; a
 * result in no exchange (nobody asks for its id) is a step of its own.
 */
function newestStepResults(messages: readonly BaseMessage[], steps: number): Set<number> {
  const exchanges = exchangesOf(messages);
  // Where each step stands: its newest message that is not a result, or a lone result's own index.
  const placeOf = (index: number): number => {
    const exchange = exchanges.of[index]!;
    if (exchange < 0) return index;
    let place = -1;
    for (const member of exchanges.members[exchange]!) if (!isTool(messages[member]!)) place = Math.max(place, member);
    return place < 0 ? index : place;
  };
  const results: { index: number; step: number }[] = [];
  messages.forEach((message, index) => {
    if (isTool(message)) results.push({ index, step: placeOf(index) });
  });
  const newest = new Set([...new Set(results.map((r) => r.step))].sort((a, b) => b - a).slice(0, steps));
  return new Set(results.filter((r) => newest.has(r.step)).map((r) => r.index));
}

/**
 * Moves older tool results out of the conversation into a store, leaving in
 * each a short reference: the key, the size and a preview. The agent reads an
 * original back with the tool {@link createOffloadReaderTool} makes. Unlike
 * pruning, nothing is lost; it costs one store write per result offloaded.
 *
 * Results are offloaded oldest first, stopping as soon as the conversation
 * fits. Never offloaded: the results of the newest `minKeepSteps` tool-calling
 * steps, error results, results of `minTokens` or fewer, results that are not
 * plain text (images, files), results a compaction already rewrote, and
 * protected ones. A result whose reference would not be smaller, or whose
 * store write fails, stays as it is.
 *
 * Keys are the tool call id plus a digest of the text, so writing the same
 * result again is harmless and runs sharing a store do not collide.
 *
 * @example
 * ```ts
 * const store = new InMemoryStore();
 * const compactor = new ToolResultOffloadCompactor({ store });
 * const reader = createOffloadReaderTool({ store }); // give it to the agent
 * ```
 */
export class ToolResultOffloadCompactor implements Compactor {
  /** Where originals go (see {@link ToolResultOffloadCompactorOptions.store}). */
  readonly store: OffloadStore;
  /** The store namespace of offloaded results (default {@link DEFAULT_OFFLOAD_NAMESPACE}). */
  readonly namespace: readonly string[];
  /** The newest tool-calling steps whose results stay in context (default `1`). */
  readonly minKeepSteps: number;
  /** Only results larger than this many tokens are offloaded (default `200`). */
  readonly minTokens: number;
  /** Leading characters of the original shown in the reference (default `200`). */
  readonly previewChars: number;
  /** Messages never offloaded (see {@link ToolResultOffloadCompactorOptions.protect}); `undefined` when none are. */
  readonly protect: ProtectPredicate | undefined;
  /** Where this compactor remembers token counts (`null`: nowhere). */
  readonly cache: TokenCountCache | null;

  constructor(options: ToolResultOffloadCompactorOptions) {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new TypeError(`ToolResultOffloadCompactor options must be an object with a store, got ${describeValue(options)}`);
    }
    const {
      store,
      namespace = DEFAULT_OFFLOAD_NAMESPACE,
      minKeepSteps = 1,
      minTokens = 200,
      previewChars = 200,
      protect,
      cache = sharedTokenCountCache,
    } = options;
    assertOffloadStore(store);
    this.namespace = Object.freeze(checkedNamespace(namespace));
    assertWholeNumber("minKeepSteps", minKeepSteps, 1);
    assertTokenBudget("minTokens", minTokens);
    assertWholeNumber("previewChars", previewChars);
    assertProtect(protect);
    assertCacheOption(cache);
    this.store = store;
    this.minKeepSteps = minKeepSteps;
    this.minTokens = minTokens;
    this.previewChars = previewChars;
    this.protect = protect;
    this.cache = cache;
  }

  /** The conversation with older results offloaded, or `null` when it fits or nothing could be offloaded. The input is not modified. */
  async compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null> {
    return (await this.compactWithReport(messages, targetTokens, tokenCounter, options)).messages;
  }

  /** Like {@link compact}, with the rewritten results (original and reference) and tokens before and after. */
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

    const recent = newestStepResults(messages, this.minKeepSteps);
    const protectedAt = await protectedMessagesInSlices(messages, this.protect, signal);
    const namespace = [...this.namespace];
    const output = [...messages];
    const rewritten: RewrittenMessage[] = [];
    let tokens = tokensBefore;
    for (let index = 0; index < messages.length && tokens > targetTokens; index += 1) {
      if ((index & 63) === 63 && sliceUsedUp()) await nextSlice(signal);
      if (!isTool(messages[index]!) || recent.has(index) || protectedAt?.[index]) continue;
      const message = messages[index] as ToolMessage;
      if (message.status === "error" || compactionMetadataOf(message) !== undefined) continue;
      const originalTokens = counts.of(index);
      if (originalTokens <= this.minTokens) continue;
      const text = offloadableText(message.content);
      if (text === undefined) continue;
      const key = offloadKey(toolCallIdOf(message), text);
      const replacement = offloadedResult(message, this.reference(message, text, key), originalTokens, key);
      const counted = countOne(replacement, counter, this.cache);
      const replacementTokens = typeof counted === "number" ? counted : await counted;
      if (replacementTokens >= originalTokens) continue;
      throwIfAborted(signal);
      const stored: OffloadedResult = { content: text, tool_call_id: toolCallIdOf(message) ?? null, tool_name: message.name ?? null, chars: text.length };
      try {
        await raceAbort(Promise.resolve().then(() => this.store.put(namespace, key, { ...stored })), signal);
      } catch {
        throwIfAborted(signal);
        continue; // a result that could not be stored stays in context
      }
      output[index] = replacement;
      rewritten.push({ original: message, replacement });
      tokens -= originalTokens - replacementTokens;
    }
    throwIfAborted(signal);
    if (rewritten.length === 0) return unchangedReport(STRATEGY, messages, tokensBefore);
    return stageReport({ strategy: STRATEGY, input: messages, messages: output, removed: [], rewritten, added: [], tokensBefore, tokensAfter: tokens });
  }

  /** The text left in context: what was moved, where to, how to read it back, and the beginning of it. */
  private reference(message: ToolMessage, text: string, key: string): string {
    const preview = text.slice(0, this.previewChars);
    const more = preview.length < text.length ? "…" : "";
    return (
      `[The result of \`${message.name ?? "this tool"}\` (${text.length} characters) was moved out of the conversation to free up context. ` +
      `Read it with the \`${OFFLOAD_READER_TOOL_NAME}\` tool, key ${JSON.stringify(key)} (use offset and length for long results).` +
      (preview === "" ? "]" : ` It begins:\n${preview}${more}]`)
    );
  }
}

/** The stand-in: the same `id`, `tool_call_id`, `name` and `status`, the reference as content, and the offloading metadata. */
function offloadedResult(message: ToolMessage, content: string, originalTokens: number, key: string): ToolMessage {
  const compaction: OffloadedResultMetadata = { strategy: STRATEGY, original_tokens: originalTokens, key };
  return new ToolMessage({
    content,
    tool_call_id: message.tool_call_id,
    ...(message.id === undefined ? {} : { id: message.id }),
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(message.status === undefined ? {} : { status: message.status }),
    additional_kwargs: { ...message.additional_kwargs },
    response_metadata: withCompactionMetadata(message, compaction),
  });
}
