import type { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { assertCacheOption, sharedTokenCountCache } from "../counting/cache";
import type { TokenCountCache } from "../counting/cache";
import { countTotal, resolveTokenCounter } from "../counting/message-counts";
import type { MessageCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, describeValue } from "../errors";
import { assertCompactOptions, signalOf, throwIfAborted } from "./abort";
import { isCompactor } from "./compactor";
import type { CompactOptions, Compactor } from "./compactor";
import type { CompactionReport, RewrittenMessage, StageReport } from "./report";
import { stageReport } from "./stage-report";
import { assertConversationInSlices } from "../messages/conversation-check";

/** The `strategy` of a pipeline's own report. */
const STRATEGY = "pipeline";

/** Options of {@link CompactionPipeline}. */
export interface CompactionPipelineOptions {
  /** Where the pipeline remembers the counts it checks the target with. Default: the shared cache. */
  cache?: TokenCountCache | null;
}

/** Marks messages a stage added (the pipeline's input holds none of them). */
const ADDED = Symbol("added");
type Origin = BaseMessage | typeof ADDED;

/**
 * Compaction in tiers: each stage works on the previous stage's output, and
 * the pipeline stops at the first stage after which the conversation fits the
 * target, so the cheaper, gentler stages run first and the later ones only
 * when they are not enough. A pipeline is a {@link Compactor} itself.
 *
 * For agents: `new CompactionPipeline([new ToolResultPruningCompactor(), new
 * SlidingWindowCompactor()])` clears old tool output first and drops whole
 * turns only when that is not enough.
 *
 * Its report is relative to its own input: a message rewritten by one stage
 * and removed by a later one counts as removed, a message added by one stage
 * and removed by a later one is not in `added`; `stages` holds each stage's
 * own report, in order.
 *
 * One shortcut, for speed: a pipeline of two stages whose first offers
 * `rewritesInPlace` (pruning) and whose second offers `compactAfterRewrites`
 * (the sliding window) runs them together, deciding only the rewrites the
 * second stage reads, when that gives the same list (see
 * `rewrites-then-window.ts`). Its first stage's entry in `stages` then lists
 * only those rewrites (its `messages` and `tokensAfter` are of that list,
 * which the second entry starts from); the pipeline's own fields are the same
 * as when the stages run one after the other.
 */
export class CompactionPipeline implements Compactor {
  /** The stages, in the order they run. */
  readonly stages: readonly Compactor[];
  /** Where the pipeline remembers the counts it checks the target with (`null`: nowhere; default the shared cache). */
  readonly cache: TokenCountCache | null;

  constructor(stages: readonly Compactor[], options: CompactionPipelineOptions = {}) {
    if (!Array.isArray(stages)) throw new TypeError(`CompactionPipeline stages must be an array of compactors, got ${describeValue(stages)}`);
    if (stages.length === 0) throw new RangeError("CompactionPipeline needs at least one stage, got an empty array");
    stages.forEach((stage, index) => {
      if (!isCompactor(stage)) {
        throw new TypeError(`CompactionPipeline stage ${index} must be a compactor (compact and compactWithReport), got ${describeValue(stage)}`);
      }
    });
    if (typeof options !== "object" || options === null) throw new TypeError(`CompactionPipeline options must be an object, got ${describeValue(options)}`);
    const { cache = sharedTokenCountCache } = options;
    assertCacheOption(cache);
    this.stages = [...stages];
    this.cache = cache;
  }

  /** The output of the last stage that ran, or `null` when no stage changed anything (or the input fits). */
  async compact(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<BaseMessage[] | null> {
    const counter = await this.prepare(messages, targetTokens, tokenCounter, options);
    const signal = options?.signal;
    const fused = await this.together(messages, targetTokens, tokenCounter, options, Number.NaN, false);
    if (fused !== undefined) return fused[1].messages;
    if ((await countTotal(messages, counter, this.cache, signal)) <= targetTokens) return null;
    let current = messages;
    let changed = false;
    for (const stage of this.stages) {
      throwIfAborted(signal);
      const stageOptions = current !== messages && current.length === messages.length && options?.asSent === undefined ? { ...options, asSent: messages } : options;
      const result = await stage.compact(current, targetTokens, tokenCounter, stageOptions);
      throwIfAborted(signal);
      if (result === null) continue;
      current = result;
      changed = true;
      if ((await countTotal(current, counter, this.cache, signal)) <= targetTokens) break;
    }
    return changed ? current : null;
  }

  /** Like {@link compact}, with a report relative to the input and every stage's own report. */
  async compactWithReport(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter?: TokenCounterLike,
    options?: CompactOptions,
  ): Promise<CompactionReport> {
    const counter = await this.prepare(messages, targetTokens, tokenCounter, options);
    const signal = options?.signal;
    const tokensBefore = await countTotal(messages, counter, this.cache, signal);
    const stages: StageReport[] = [];
    let current = messages;
    let tokensAfter = tokensBefore;
    let note: HumanMessage | null = null;
    let stepsTrimmed = false;
    // Where every message of the current list came from: an input message (itself, or the one it rewrites) or a stage.
    const origin = new Map<BaseMessage, Origin>();
    // What took the place of each message a stage rewrote or removed: its stand-in, the added message standing for
    // it, or `null` for nothing. Followed from an input message, it leads to what stands for it in the result.
    const next = new Map<BaseMessage, BaseMessage | null>();
    /** Takes in one stage's report; whether the list now fits. */
    const accept = async (report: CompactionReport, tokens: (messages: BaseMessage[]) => Promise<number> | number): Promise<boolean> => {
      stages.push(...stageEntries(report));
      if (report.messages === null) return false;
      for (const { original, replacement } of report.rewritten) {
        origin.set(replacement, origin.get(original) ?? original);
        next.set(original, replacement);
      }
      for (const message of report.added) origin.set(message, ADDED);
      for (const message of report.removed) if (!next.has(message)) next.set(message, null);
      for (const { added, originals } of report.standsFor ?? []) for (const message of originals) next.set(message, added);
      if (report.note !== null) note = report.note;
      stepsTrimmed ||= report.stepsTrimmed;
      current = report.messages;
      tokensAfter = await tokens(current);
      return tokensAfter <= targetTokens;
    };
    const fused = tokensBefore > targetTokens ? await this.together(messages, targetTokens, tokenCounter, options, tokensBefore, true) : undefined;
    if (fused !== undefined) {
      // Both stages counted what they left with this counter: the window's full report counts its result.
      const [pruningReport, windowReport] = fused;
      await accept(pruningReport, () => pruningReport.tokensAfter);
      await accept(windowReport, () => windowReport.tokensAfter);
    } else if (tokensBefore > targetTokens) {
      for (const stage of this.stages) {
        throwIfAborted(signal);
        // A later stage learns what the model saw, when earlier stages only rewrote messages one for one.
        const stageOptions = current !== messages && current.length === messages.length && options?.asSent === undefined ? { ...options, asSent: messages } : options;
        const report = await stage.compactWithReport(current, targetTokens, tokenCounter, stageOptions);
        throwIfAborted(signal);
        if (await accept(report, (result) => countTotal(result, counter, this.cache, signal))) break;
      }
    }
    if (current === messages) {
      return { strategy: STRATEGY, messages: null, removed: [], rewritten: [], added: [], standsFor: [], tokensBefore, tokensAfter: tokensBefore, keptCount: messages.length, note: null, stepsTrimmed: false, stages };
    }
    const merged = mergeOutcome(messages, current, origin, next);
    return {
      strategy: STRATEGY,
      messages: current,
      ...merged,
      tokensBefore,
      tokensAfter,
      keptCount: messages.length - merged.removed.length,
      note: note !== null && merged.added.includes(note) ? note : null,
      stepsTrimmed,
      stages,
    };
  }

  /**
   * The two stages' reports when they run together (see the class comment):
   * the first stage's rewrites decided only where the second reads, and the
   * second stage's report on what they leave; `undefined` when the pipeline
   * is not two such stages or they cannot tell the result that way.
   */
  private async together(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter: TokenCounterLike | undefined,
    options: CompactOptions | undefined,
    tokensBefore: number,
    withReport: boolean,
  ): Promise<[CompactionReport, CompactionReport] | undefined> {
    if (this.stages.length !== 2) return undefined;
    const [first, second] = this.stages as [Compactor, Compactor];
    if (typeof first.rewritesInPlace !== "function" || typeof second.compactAfterRewrites !== "function") return undefined;
    const rewrites = first.rewritesInPlace(messages, tokenCounter, options);
    if (rewrites === undefined) return undefined;
    const secondReport = await second.compactAfterRewrites(rewrites, messages, targetTokens, tokenCounter, options, withReport);
    if (secondReport === undefined) return undefined;
    const { messages: rewrittenList, rewritten, saved } = rewrites.decided();
    const firstReport = stageReport({
      strategy: rewrites.strategy,
      input: messages,
      messages: rewritten.length === 0 ? null : rewrittenList,
      removed: [],
      rewritten,
      added: [],
      tokensBefore,
      tokensAfter: tokensBefore - saved,
    });
    return [firstReport, secondReport];
  }

  private async prepare(
    messages: BaseMessage[],
    targetTokens: number,
    tokenCounter: TokenCounterLike | undefined,
    options: CompactOptions | undefined,
  ): Promise<MessageCounter> {
    await assertConversationInSlices(messages, signalOf(options));
    assertTokenBudget("targetTokens", targetTokens);
    assertCompactOptions(options);
    throwIfAborted(options?.signal);
    return resolveTokenCounter(tokenCounter);
  }
}

/** A stage's entries in the pipeline's `stages`: a nested pipeline contributes its own stages. */
function stageEntries(report: CompactionReport): StageReport[] {
  if (report.strategy === STRATEGY) return report.stages;
  const { strategy, messages, removed, rewritten, added, standsFor = [], failures, tokensBefore, tokensAfter } = report;
  return [{ strategy, messages, removed, rewritten, added, standsFor, ...(failures === undefined || failures.length === 0 ? {} : { failures }), tokensBefore, tokensAfter }];
}

/**
 * `removed`, `rewritten`, `added` and `standsFor` of the whole run, from
 * where each message of the final list came from and what took the place of
 * each message a stage rewrote or removed. The same object may stand in a
 * list more than once (stores hand such lists back), so input messages are
 * accounted for by occurrence.
 */
function mergeOutcome(
  input: readonly BaseMessage[],
  output: readonly BaseMessage[],
  origin: ReadonlyMap<BaseMessage, Origin>,
  next: ReadonlyMap<BaseMessage, BaseMessage | null>,
): Required<Pick<StageReport, "removed" | "rewritten" | "added" | "standsFor">> {
  const accounted = new Map<BaseMessage, number>();
  const replacements = new Map<BaseMessage, BaseMessage[]>();
  const added: BaseMessage[] = [];
  for (const message of output) {
    const from = origin.get(message) ?? message;
    if (from === ADDED) {
      added.push(message);
      continue;
    }
    accounted.set(from, (accounted.get(from) ?? 0) + 1);
    if (from !== message) {
      const list = replacements.get(from);
      if (list === undefined) replacements.set(from, [message]);
      else list.push(message);
    }
  }
  const removed: BaseMessage[] = [];
  const rewritten: RewrittenMessage[] = [];
  for (const message of input) {
    const left = accounted.get(message) ?? 0;
    if (left === 0) {
      removed.push(message);
      continue;
    }
    accounted.set(message, left - 1);
    const replacement = replacements.get(message)?.shift();
    if (replacement !== undefined) rewritten.push({ original: message, replacement });
  }
  // A removed input message is stood for by what its chain of replacements ends at in the result, if anything.
  const inOutput = new Set(output);
  const originalsOf = new Map<BaseMessage, BaseMessage[]>();
  for (const message of removed) {
    let current: BaseMessage | null | undefined = message;
    const seen = new Set<BaseMessage>();
    while (current != null && !inOutput.has(current) && !seen.has(current)) {
      seen.add(current);
      current = next.get(current);
    }
    if (current == null || !inOutput.has(current) || origin.get(current) !== ADDED) continue;
    const list = originalsOf.get(current);
    if (list === undefined) originalsOf.set(current, [message]);
    else list.push(message);
  }
  const standsFor = added.filter((message) => originalsOf.has(message)).map((message) => ({ added: message, originals: originalsOf.get(message)! }));
  return { removed, rewritten, added, standsFor };
}
