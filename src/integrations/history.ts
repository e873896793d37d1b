import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { assertCompactOptions, raceAbort, throwIfAborted } from "../compactors/abort";
import { cacheOf, CompactionHook } from "../compactors/compaction-hook";
import { repairDanglingCalls } from "../messages/dangling-calls";
import { emitCompactionEvents } from "./events";
import { assertRuntimeFlag } from "./runtime-options";
import { resolveCompactor } from "../compactors/resolve-compactor";
import type { Compactor } from "../compactors/compactor";
import { assertEvictionCallback, evictionsOf } from "../compactors/evictions";
import type { EvictedMessage, EvictionCallback } from "../compactors/evictions";
import type { CompactionReport } from "../compactors/report";
import { countTotal, resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertMessage, assertTimerDelay, assertTokenBudget, describeValue } from "../errors";
import { comparableFormInSlices, startsWith } from "./store-rewrite";
import type { StoreRewrite } from "./store-rewrite";
import { RECOGNISED_STORES, recognisedRewrite } from "./recognised-rewrite";
import { SerialLane } from "./serial-lane";

export type { StoreRewrite } from "./store-rewrite";
export { storedForm } from "./store-rewrite";

/**
 * The limits of one compaction (`compactionTimeoutMs` and the wrapper's
 * `signal`): `signal` aborts when either is reached, `race` stops waiting
 * for work then, and `check` rejects once the compaction is abandoned,
 * reading the deadline from the clock as well as from the timer.
 */
interface CompactionLimit {
  signal: AbortSignal | undefined;
  race<T>(running: Promise<T>): Promise<T>;
  check(): void;
}

/** No limit: the work is waited for, and nothing abandons it. */
const UNLIMITED: CompactionLimit = { signal: undefined, race: (running) => running, check: () => undefined };

/** A chat history the wrapper can wrap: the two store shapes of `@langchain/core`. */
export type WrappableChatMessageHistory = BaseChatMessageHistory | BaseListChatMessageHistory;

/** The store methods the wrapper calls. */
const HISTORY_METHODS = ["getMessages", "addMessage", "addMessages", "clear"] as const;

/**
 * Whether `value` has every store method the wrapper calls. A check of the
 * methods, not `instanceof`: the store may come from another copy of
 * `@langchain/core` (an ES-module app's, while this is the CommonJS build).
 */
function isWrappableHistory(value: unknown): value is WrappableChatMessageHistory {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return HISTORY_METHODS.every((method) => typeof record[method] === "function");
}

/** Throws a `TypeError` naming the value unless `messages` is an array of `BaseMessage`s (every element checked). */
function assertAppendable(messages: unknown): asserts messages is BaseMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(`\`messages\` must be an array of BaseMessage, got ${describeValue(messages)}`);
  for (let index = 0; index < messages.length; index += 1) assertMessage(messages[index], `messages[${index}]`);
}

/** Throws a `TypeError` naming the value unless it is a string (the text of a message). */
function assertMessageText(name: string, text: unknown): asserts text is string {
  if (typeof text !== "string") throw new TypeError(`\`${name}\` must be a string, got ${describeValue(text)}`);
}

/**
 * The `rewrite` value that opts in, by name, to committing with `clear()` +
 * `addMessages()`: correct only while this one instance is the only writer
 * of the session (another writer's append can be lost, or land ahead of the
 * system prompt; two such compactors duplicate the list).
 */
export const SINGLE_WRITER_CLEAR_AND_ADD = "single-writer-clear-and-add";

/** Options of {@link CompactingChatMessageHistory}: a fixed `targetTokens`, or the hook's trigger options. */
export interface CompactingChatMessageHistoryOptions {
  /** The store to wrap. */
  history: WrappableChatMessageHistory;
  /** Compact whenever the conversation exceeds this many tokens. Give this or `contextWindow`, not both. */
  targetTokens?: number;
  /** With `compactAt` / `compactTo`: compact with the {@link CompactionHook}'s hysteresis. */
  contextWindow?: number;
  /** With `contextWindow`: compact when the conversation reaches `contextWindow × compactAt` tokens. Default `0.7`. */
  compactAt?: number;
  /** With `contextWindow`: compact down to `contextWindow × compactTo` tokens. Default `0.4`. */
  compactTo?: number;
  /**
   * With `contextWindow`: a compaction that would free fewer tokens is not
   * applied (the read returns the stored list; commit mode writes nothing),
   * as on {@link CompactionHook}. Default `0`.
   */
  minGainTokens?: number;
  /** `"view"` (default): reads are compacted, the store never changes. `"commit"`: the store is rewritten. */
  mode?: "view" | "commit";
  /**
   * Commit mode: called, and awaited, before the store is touched, with
   * every message the commit takes out of the store (removed, summarized,
   * pruned or offloaded), each with what stands for it afterwards (see
   * {@link EvictedMessage}). If it throws or rejects, nothing is written. Not
   * with view mode, which never takes anything out.
   */
  onEvict?: EvictionCallback;
  /** Default `approximateTokenCounter`. */
  tokenCounter?: TokenCounterLike;
  /** Any compactor, or an array of them (a `CompactionPipeline`). Default `new SlidingWindowCompactor()`. */
  compactor?: Compactor | readonly Compactor[];
  /**
   * Commit mode: how the store is rewritten. Default: the atomic rewrite of a
   * recognised store (`InMemoryChatMessageHistory`, `RedisChatMessageHistory`
   * from `@langchain/redis`, `PostgresChatMessageHistory` from
   * `@langchain/community`), picked by itself. For any other store give a
   * {@link StoreRewrite}, or `"single-writer-clear-and-add"` if this
   * instance is the session's only writer; without either, commit mode is a
   * `TypeError`.
   */
  rewrite?: StoreRewrite | typeof SINGLE_WRITER_CLEAR_AND_ADD;
  /**
   * A compaction that takes longer is abandoned: `getMessages()` rejects,
   * nothing is written, and the compactor's own `signal` aborts, so its work
   * (counting, a summary call, store writes) stops too. In commit mode the
   * time runs until the store write is sent: an abandoned compaction calls no
   * `onEvict`, and one abandoned while `onEvict` runs writes nothing. The
   * work runs in time slices that let the event loop turn (so the timer
   * fires), and the deadline is also checked against the clock right before
   * `onEvict` and before the write. The write itself, once sent, is one
   * atomic step and completes. Default: no limit.
   */
  compactionTimeoutMs?: number;
  /** Aborts the running and every later compaction the same way, the compactor's work included (e.g. at shutdown). */
  signal?: AbortSignal;
  /**
   * Calls that never got a result (an interrupted run) are answered, in what
   * a read returns only, by a synthetic result saying the call was
   * interrupted; the store is not changed. Default `true`.
   */
  repairDanglingToolCalls?: boolean;
  /** With `contextWindow`: each compaction, refusal and failed summary is dispatched as a LangChain custom event. Default `true`. */
  events?: boolean;
}

/**
 * With `targetTokens` in commit mode, how far below the target a rewrite
 * compacts the store: a store compacted just under its target would be
 * rewritten at almost every exchange; at 60% of it, every few exchanges.
 */
export const COMMIT_REFILL = 0.6;

/**
 * A chat history that keeps a conversation inside a token budget by wrapping
 * any `BaseChatMessageHistory` / `BaseListChatMessageHistory`. `getMessages()`
 * returns the compacted conversation: whole turns go oldest first, a tool call
 * stays with its result, and one omission note (a `HumanMessage` whose
 * metadata survives store serialization) stands where they were.
 *
 * - `"view"` never writes to the wrapped store: every read compacts the full
 *   stored list afresh, so any process reading the same session sees the same
 *   view.
 * - `"commit"` rewrites the store to the compacted list: (1) read; (2)
 *   compact; (3) `onEvict(evicted)` is awaited, and if it throws or rejects
 *   the store is untouched; (4) one atomic {@link StoreRewrite} replaces the
 *   messages read in (1) by the compacted list if they are still the oldest
 *   ones. Messages appended meanwhile (by anyone) stay behind it; if another
 *   compactor or a `clear()` changed them, it refuses and nothing is written;
 *   a crash leaves the old list or the new one.
 * - `rewrite: "single-writer-clear-and-add"` replaces (4) by: re-read (messages
 *   appended since (1) are carried over; any other change writes nothing),
 *   `clear()`, `addMessages()`. If that fails part way, the list still owed
 *   is kept ({@link pendingRewrite}) and written first by the next call on
 *   this instance. Only for a session this instance alone writes.
 *
 * Ordering of calls on one instance: appends (`addMessage(s)`) and `clear()`
 * run one at a time, in call order. Reads (`getMessages()`) run one at a
 * time, in call order, each after the appends and clears called before it.
 * An append never waits for a read or a compaction (a token counter that
 * never settles cannot hold back a reply), except, in single-writer mode,
 * for the few store calls of a rewrite's write phase. Works with
 * `RunnableWithMessageHistory`.
 */
export class CompactingChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["langchain_compaction", "chat_history"];

  /** The wrapped store (see {@link CompactingChatMessageHistoryOptions.history}). */
  readonly history: WrappableChatMessageHistory;
  /** Whether compaction only shapes what is read (`"view"`) or is written back to the store (`"commit"`); see {@link CompactingChatMessageHistoryOptions.mode}. */
  readonly mode: "view" | "commit";
  private readonly onEvict: EvictionCallback | undefined;
  /** The atomic rewrite, or `null` in single-writer mode (and in view mode, where nothing is written). */
  private readonly rewrite: StoreRewrite | null;
  private readonly compactWith: (messages: BaseMessage[], signal: AbortSignal | undefined) => Promise<CompactionReport | null>;
  private readonly compactionTimeoutMs: number | undefined;
  /** Whether reads answer dangling calls (see `repairDanglingToolCalls`). */
  private readonly repair: boolean;
  private readonly signal: AbortSignal | undefined;
  /** Single-writer mode: a rewrite that failed part way, the list it replaced (comparable form) and the list the store must end up holding. */
  private pending: { from: string[]; next: BaseMessage[] } | null = null;
  private readonly writes = new SerialLane();
  private readonly reads = new SerialLane();

  constructor(options: CompactingChatMessageHistoryOptions) {
    super();
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`CompactingChatMessageHistory options must be an object, got ${describeValue(options)}`);
    }
    const {
      history,
      targetTokens,
      contextWindow,
      compactAt,
      compactTo,
      minGainTokens,
      mode = "view",
      onEvict,
      tokenCounter,
      compactor,
      rewrite,
      compactionTimeoutMs,
      signal,
      repairDanglingToolCalls = true,
      events = true,
    } = options;
    assertRuntimeFlag("repairDanglingToolCalls", repairDanglingToolCalls);
    assertRuntimeFlag("events", events);
    this.repair = repairDanglingToolCalls;
    if (!isWrappableHistory(history)) {
      throw new TypeError(`\`history\` must be a BaseChatMessageHistory or BaseListChatMessageHistory, got ${describeValue(history)}`);
    }
    if (mode !== "view" && mode !== "commit") throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
    assertEvictionCallback(onEvict, mode);
    if (rewrite !== undefined && typeof rewrite !== "function" && rewrite !== SINGLE_WRITER_CLEAR_AND_ADD) {
      throw new TypeError(`\`rewrite\` must be a StoreRewrite function or "${SINGLE_WRITER_CLEAR_AND_ADD}", got ${describeValue(rewrite)}`);
    }
    // Above 2^31 - 1 ms Node fires the timer after 1 ms, and every read would be abandoned at once.
    if (compactionTimeoutMs !== undefined) assertTimerDelay("compactionTimeoutMs", compactionTimeoutMs);
    // The compactors' own check of a signal, so one that they would refuse is refused here, not at the first read.
    assertCompactOptions({ signal });
    if ((targetTokens === undefined) === (contextWindow === undefined)) {
      throw new TypeError("give exactly one of `targetTokens` (a fixed budget) and `contextWindow` (the hook's trigger)");
    }
    if (targetTokens !== undefined) {
      assertTokenBudget("targetTokens", targetTokens);
      // Fail here, as the hook does for `contextWindow`, rather than at the first read.
      resolveTokenCounter(tokenCounter);
      if (compactAt !== undefined || compactTo !== undefined || minGainTokens !== undefined) {
        throw new TypeError("`compactAt`, `compactTo` and `minGainTokens` go with `contextWindow`, not with `targetTokens`");
      }
      const chosen = resolveCompactor(compactor);
      const counter = resolveTokenCounter(tokenCounter);
      const cache = cacheOf(chosen);
      // The signal reaches the compactor itself, so an abandoned compaction stops its work (a summary call, store writes).
      this.compactWith =
        mode === "view"
          ? (messages, signal) => chosen.compactWithReport(messages, targetTokens, tokenCounter, signal === undefined ? undefined : { signal })
          : async (messages, signal) => {
              // Commit mode: a store over its target is compacted well under it (see COMMIT_REFILL).
              if ((await countTotal(messages, counter, cache, signal)) <= targetTokens) return null;
              return chosen.compactWithReport(messages, Math.floor(targetTokens * COMMIT_REFILL), tokenCounter, signal === undefined ? undefined : { signal });
            };
    } else {
      const hook = new CompactionHook({ contextWindow: contextWindow!, compactAt, compactTo, minGainTokens, tokenCounter, compactor });
      this.compactWith = async (messages, signal) => {
        const report = await hook.run(messages, {}, signal === undefined ? {} : { signal });
        if (events) await emitCompactionEvents(report, "history");
        return report;
      };
    }
    let atomic: StoreRewrite | null = null;
    if (mode === "commit" && rewrite !== SINGLE_WRITER_CLEAR_AND_ADD) {
      atomic = rewrite ?? recognisedRewrite(history);
      if (atomic === null) {
        throw new TypeError(
          `commit mode needs an atomic rewrite, and \`history\` (${describeValue(history)}) is none of the recognised stores ` +
            `(${RECOGNISED_STORES.join(", ")}): pass \`rewrite\` (a StoreRewrite for this store), or, only if this instance is ` +
            `the session's single writer, \`rewrite: "${SINGLE_WRITER_CLEAR_AND_ADD}"\``,
        );
      }
    }
    this.history = history;
    this.mode = mode;
    this.onEvict = onEvict;
    this.rewrite = atomic;
    this.compactionTimeoutMs = compactionTimeoutMs;
    this.signal = signal;
  }

  /** The compacted conversation; in `"commit"` mode the store is rewritten to it first. */
  async getMessages(): Promise<BaseMessage[]> {
    const writesBefore = this.writes.drained();
    return this.reads.run(async () => {
      await writesBefore;
      if (this.pending !== null) await this.writes.run(() => this.finishPending());
      // A copy: some stores (InMemoryChatMessageHistory) hand out their live list.
      const stored = [...(await this.history.getMessages())];
      // In commit mode the limits hold until the write is sent (see `compactionTimeoutMs`).
      const read = await this.bounded(async (limit) => {
        const report = await this.compactWithin(stored, limit);
        if (report === null || report.messages === null) return stored;
        if (this.mode === "view") return report.messages;
        return this.commit(stored, report, limit);
      });
      return this.repair ? repairDanglingCalls(read).messages : read;
    });
  }

  /**
   * Appends `message`. Anything but a `BaseMessage` (a `{ role, content }`
   * object, a string) is refused with a `TypeError` naming it, and nothing is
   * stored: once in the store, it would make every later read of the session
   * reject.
   */
  async addMessage(message: BaseMessage): Promise<void> {
    assertMessage(message, "message");
    await this.writes.run(async () => {
      await this.finishPending();
      await this.history.addMessage(message);
    });
  }

  /** Appends `messages`, each checked as {@link addMessage} checks one, all before any is stored. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    assertAppendable(messages);
    // The list as checked: the append may wait its turn, and the caller's array can change meanwhile.
    const checked = [...messages];
    await this.writes.run(async () => {
      await this.finishPending();
      await this.history.addMessages(checked);
    });
  }

  /** Appends a `HumanMessage` with `message` as its text; anything but a string is refused with a `TypeError` naming it. */
  override async addUserMessage(message: string): Promise<void> {
    assertMessageText("message", message);
    await this.addMessage(new HumanMessage(message));
  }

  /** Appends an `AIMessage` with `message` as its text; anything but a string is refused with a `TypeError` naming it. */
  override async addAIMessage(message: string): Promise<void> {
    assertMessageText("message", message);
    await this.addMessage(new AIMessage(message));
  }

  /** Empties the store. A rewrite still owed (single-writer mode) is dropped with it; a compaction under way then refuses. */
  override async clear(): Promise<void> {
    await this.writes.run(async () => {
      this.pending = null;
      await this.history.clear();
    });
  }

  /** Whether a commit failed part way and still has to write (the next call on this instance does it first). Single-writer mode only. */
  get hasPendingRewrite(): boolean {
    return this.pending !== null;
  }

  /** The list a failed commit still has to write, or `null`. */
  get pendingRewrite(): readonly BaseMessage[] | null {
    return this.pending?.next ?? null;
  }

  /** The compaction alone (a view of the list), abandoned (rejecting with the reason) when the timeout passes or `signal` aborts. */
  private compactBounded(messages: BaseMessage[]): Promise<CompactionReport | null> {
    return this.bounded((limit) => this.compactWithin(messages, limit));
  }

  /** The compaction, abandoned when `limit` is reached: also when it finished late without letting the timer fire. */
  private async compactWithin(messages: BaseMessage[], limit: CompactionLimit): Promise<CompactionReport | null> {
    const report = await limit.race(this.compactWith(messages, limit.signal));
    limit.check();
    return report;
  }

  /** Runs `work` within this wrapper's limits (`compactionTimeoutMs`, `signal`); see {@link CompactionLimit}. */
  private async bounded<T>(work: (limit: CompactionLimit) => Promise<T>): Promise<T> {
    if (this.compactionTimeoutMs === undefined && this.signal === undefined) return work(UNLIMITED);
    const controller = new AbortController();
    const forward = () => controller.abort(this.signal!.reason);
    if (this.signal?.aborted) forward();
    this.signal?.addEventListener("abort", forward, { once: true });
    const timeoutMs = this.compactionTimeoutMs;
    const timedOut = () => controller.abort(new Error(`compaction did not finish within compactionTimeoutMs (${timeoutMs} ms)`));
    const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + timeoutMs;
    const timer = timeoutMs === undefined ? undefined : setTimeout(timedOut, timeoutMs);
    const signal = controller.signal;
    const limit: CompactionLimit = {
      signal,
      // The caller stops waiting even for work that ignores the signal, and a rejection of the abandoned work is handled.
      race: (running) => raceAbort(running, signal),
      check: () => {
        // Read from the clock too: synchronous work (a compactor that never yields) keeps the timer from firing.
        if (!signal.aborted && performance.now() >= deadline) timedOut();
        throwIfAborted(signal);
      },
    };
    try {
      return await work(limit);
    } finally {
      clearTimeout(timer);
      this.signal?.removeEventListener("abort", forward);
    }
  }

  private async commit(stored: BaseMessage[], report: CompactionReport, limit: CompactionLimit): Promise<BaseMessage[]> {
    const compacted = report.messages!;
    // Abandoned (timeout or signal) before or while `onEvict` ran: nothing is handed over, nothing written.
    limit.check();
    if (this.onEvict) {
      const evicted = evictionsOf(stored, report);
      if (evicted.length > 0) await this.onEvict(evicted);
    }
    limit.check();
    if (this.rewrite) {
      if (await this.rewrite(stored, compacted, { signal: limit.signal })) return [...(await this.history.getMessages())];
      // The oldest messages changed under us (another compactor, or a clear): its result stands; show ours of it.
      const current = [...(await this.history.getMessages())];
      return (await this.compactBounded(current))?.messages ?? current;
    }
    return this.writes.run(async () => {
      await this.finishPending();
      const storedKeys = await comparableFormInSlices(stored, limit.signal);
      const current = [...(await this.history.getMessages())];
      const currentKeys = await comparableFormInSlices(current, limit.signal);
      if (!startsWith(currentKeys, storedKeys)) return current;
      // Messages appended since the first read are carried over behind the compacted list.
      const next = [...compacted, ...current.slice(stored.length)];
      limit.check();
      await this.replaceAll(currentKeys, next);
      return next;
    });
  }

  /** clear + addMessages, remembering the target so a failure in between is finished later. */
  private async replaceAll(from: string[], next: BaseMessage[]): Promise<void> {
    this.pending = { from, next };
    await this.history.clear();
    await this.history.addMessages(next);
    this.pending = null;
  }

  /**
   * Completes a rewrite that failed part way. The store then holds either
   * the old list (the failure came before `clear()` took effect) or a prefix
   * of the new one, in both cases perhaps followed by messages appended
   * since; the result is the new list followed by those.
   */
  private async finishPending(): Promise<void> {
    if (this.pending === null) return;
    const { from, next } = this.pending;
    const current = [...(await this.history.getMessages())];
    const currentKeys = await comparableFormInSlices(current);
    let appended: BaseMessage[];
    if (startsWith(currentKeys, from)) {
      appended = current.slice(from.length);
    } else {
      const nextKeys = await comparableFormInSlices(next);
      let written = 0;
      while (written < next.length && written < current.length && currentKeys[written] === nextKeys[written]) written += 1;
      // All of the new list landed (the failure came after), so the store already holds it and whatever followed.
      if (written === next.length) {
        this.pending = null;
        return;
      }
      appended = current.slice(written);
    }
    const target = [...next, ...appended];
    // Remember what this attempt owes before clearing, so a second failure loses nothing either.
    this.pending = { from: currentKeys, next: target };
    await this.history.clear();
    await this.history.addMessages(target);
    this.pending = null;
  }
}
