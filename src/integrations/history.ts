import { BaseChatMessageHistory, BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { CompactionHook, resolveCompactor } from "../compactors/compaction-hook";
import type { Compactor } from "../compactors/compactor";
import type { CompactionReport } from "../compactors/report";
import { resolveTokenCounter } from "../counting/message-counts";
import type { TokenCounterLike } from "../counting/types";
import { assertTokenBudget, describeValue } from "../errors";

/** A chat history the wrapper can wrap: the two store shapes of `@langchain/core`. */
export type WrappableChatMessageHistory = BaseChatMessageHistory | BaseListChatMessageHistory;

/**
 * In one atomic step, replaces the store's oldest messages by `next` if they
 * are still `expected`, keeping every message appended after them; resolves
 * `false` (and changes nothing) when they are not. A store that offers this
 * (see `redisListRewrite`) makes a commit safe against crashes and
 * concurrent appends.
 */
export type MessageRewrite = (expected: readonly BaseMessage[], next: readonly BaseMessage[]) => Promise<boolean>;

/** Receives messages a commit is about to delete from the store. */
export type EvictionCallback = (removed: BaseMessage[]) => void | Promise<void>;

/** Options of {@link CompactingChatMessageHistory}: a fixed `targetTokens`, or the hook's trigger options. */
export interface CompactingChatMessageHistoryOptions {
  /** The store to wrap. */
  history: WrappableChatMessageHistory;
  /** Compact whenever the conversation exceeds this many tokens. Give this or `contextWindow`, not both. */
  targetTokens?: number;
  /** With `compactAt` / `compactTo`: compact with the {@link CompactionHook}'s hysteresis. */
  contextWindow?: number;
  compactAt?: number;
  compactTo?: number;
  /** `"view"` (default): reads are compacted, the store never changes. `"commit"`: the store is rewritten. */
  mode?: "view" | "commit";
  /** Commit mode: called with the removed messages, and awaited, before the store is touched. */
  onEvict?: EvictionCallback;
  /** Default `approximateTokenCounter`. */
  tokenCounter?: TokenCounterLike;
  /** Any compactor, or an array of them (a `CompactionPipeline`). Default `new SlidingWindowCompactor()`. */
  compactor?: Compactor | readonly Compactor[];
  /** Commit mode: an atomic compare-and-replace for the wrapped store, used instead of `clear` + `addMessages`. */
  rewrite?: MessageRewrite;
}

/** Messages in a comparable form: what a store keeps of them, as JSON. */
export function storedForm(messages: readonly BaseMessage[]): string[] {
  return mapChatMessagesToStoredMessages([...messages]).map((stored) => JSON.stringify(stored));
}

function startsWith(list: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= list.length && prefix.every((item, index) => list[index] === item);
}

/**
 * A chat history that keeps a conversation inside a token budget by wrapping
 * any `BaseChatMessageHistory` / `BaseListChatMessageHistory`. `getMessages()`
 * returns the compacted conversation: whole turns go oldest first, a tool call
 * stays with its result, and one omission note (a `HumanMessage` whose
 * metadata survives store serialization) stands where they were.
 *
 * - `"view"` never writes to the wrapped store: every read compacts the full
 *   stored list afresh, so any process reading the same session sees the same
 *   view. (Without a place to remember a cut, the hook's hysteresis only
 *   decides *whether* to compact; use `"commit"` for a prefix that stays put.)
 * - `"commit"` rewrites the store to the compacted list. The wrapped store
 *   only has `getMessages`/`addMessage(s)`/`clear`, so a rewrite is a
 *   sequence: (1) read; (2) `onEvict(removed)` is awaited, and if it throws
 *   the store is untouched; (3) re-read: messages another writer appended
 *   since (1) are carried over, and if the stored list changed otherwise
 *   (another compactor) nothing is written; (4) `clear()`; (5) `addMessages`
 *   of the compacted list plus the carried-over messages. What a crash
 *   leaves: before (4), the full store (the removed messages may also be in
 *   the archive, so archives should tolerate a repeat); during (5), a prefix
 *   of the new list, and the rest only in this instance's memory, which the
 *   next call on this instance writes first (a process death there loses
 *   it); a message appended by another writer between (3) and (4) is lost.
 *   With `rewrite` (an atomic replace of the oldest messages, e.g.
 *   `redisListRewrite`), steps (3)-(5) are one atomic step: appends made
 *   meanwhile stay behind the new list, a competing rewrite makes it refuse
 *   (nothing written), and a crash leaves either the old list or the new one.
 *
 * Appends and reads through one instance are serialized, so they never race
 * its own commits. Works with `RunnableWithMessageHistory`.
 */
export class CompactingChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["langchain_compaction", "chat_history"];

  readonly history: WrappableChatMessageHistory;
  readonly mode: "view" | "commit";
  private readonly onEvict: EvictionCallback | undefined;
  private readonly rewrite: MessageRewrite | undefined;
  private readonly compactWith: (messages: BaseMessage[]) => Promise<CompactionReport | null>;
  /** A rewrite that failed part way: the list it replaced (stored form) and the list the store must end up holding. */
  private pending: { from: string[]; next: BaseMessage[] } | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: CompactingChatMessageHistoryOptions) {
    super();
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`CompactingChatMessageHistory options must be an object, got ${describeValue(options)}`);
    }
    const { history, targetTokens, contextWindow, compactAt, compactTo, mode = "view", onEvict, tokenCounter, compactor, rewrite } = options;
    if (!(history instanceof BaseChatMessageHistory) && !(history instanceof BaseListChatMessageHistory)) {
      throw new TypeError(`\`history\` must be a BaseChatMessageHistory or BaseListChatMessageHistory, got ${describeValue(history)}`);
    }
    if (mode !== "view" && mode !== "commit") throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
    if (onEvict !== undefined && typeof onEvict !== "function") throw new TypeError(`\`onEvict\` must be a function, got ${describeValue(onEvict)}`);
    if (rewrite !== undefined && typeof rewrite !== "function") throw new TypeError(`\`rewrite\` must be a function, got ${describeValue(rewrite)}`);
    if ((targetTokens === undefined) === (contextWindow === undefined)) {
      throw new TypeError("give exactly one of `targetTokens` (a fixed budget) and `contextWindow` (the hook's trigger)");
    }
    if (targetTokens !== undefined) {
      assertTokenBudget("targetTokens", targetTokens);
      // Fail here, as the hook does for `contextWindow`, rather than at the first read.
      resolveTokenCounter(tokenCounter);
      if (compactAt !== undefined || compactTo !== undefined) {
        throw new TypeError("`compactAt` and `compactTo` go with `contextWindow`, not with `targetTokens`");
      }
      const chosen = resolveCompactor(compactor);
      this.compactWith = (messages) => chosen.compactWithReport(messages, targetTokens, tokenCounter);
    } else {
      const hook = new CompactionHook({ contextWindow: contextWindow!, compactAt, compactTo, tokenCounter, compactor });
      this.compactWith = (messages) => hook.run(messages);
    }
    this.history = history;
    this.mode = mode;
    this.onEvict = onEvict;
    this.rewrite = rewrite;
  }

  /** The compacted conversation; in `"commit"` mode the store is rewritten to it first. */
  async getMessages(): Promise<BaseMessage[]> {
    return this.serialized(async () => {
      await this.finishPending();
      const stored = await this.history.getMessages();
      const report = await this.compactWith(stored);
      if (report === null || report.messages === null) return stored;
      if (this.mode === "view") return report.messages;
      return this.commit(stored, report);
    });
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.serialized(async () => {
      await this.finishPending();
      await this.history.addMessage(message);
    });
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    await this.serialized(async () => {
      await this.finishPending();
      await this.history.addMessages(messages);
    });
  }

  override async clear(): Promise<void> {
    await this.serialized(async () => {
      this.pending = null;
      await this.history.clear();
    });
  }

  /** Whether a commit failed part way and still has to write (the next call on this instance does it first). */
  get hasPendingRewrite(): boolean {
    return this.pending !== null;
  }

  /** The list a failed commit still has to write, or `null`. */
  get pendingRewrite(): readonly BaseMessage[] | null {
    return this.pending?.next ?? null;
  }

  private async commit(stored: BaseMessage[], report: CompactionReport): Promise<BaseMessage[]> {
    const compacted = report.messages!;
    if (this.onEvict) await this.onEvict([...report.removed]);
    if (this.rewrite) {
      if (await this.rewrite(stored, compacted)) return this.history.getMessages();
      // The oldest messages changed under us (another compactor): its result stands; show ours of it.
      const current = await this.history.getMessages();
      return (await this.compactWith(current))?.messages ?? current;
    }
    const storedKeys = storedForm(stored);
    const current = await this.history.getMessages();
    const currentKeys = storedForm(current);
    if (!startsWith(currentKeys, storedKeys)) return (await this.compactWith(current))?.messages ?? current;
    // Messages another writer appended since the first read are carried over behind the compacted list.
    const next = [...compacted, ...current.slice(stored.length)];
    await this.replaceAll(currentKeys, next);
    return next;
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
   * of the new one, in both cases perhaps followed by messages others
   * appended; the result is the new list followed by those.
   */
  private async finishPending(): Promise<void> {
    if (this.pending === null) return;
    const { from, next } = this.pending;
    const current = await this.history.getMessages();
    const currentKeys = storedForm(current);
    let foreign: BaseMessage[];
    if (startsWith(currentKeys, from)) {
      foreign = current.slice(from.length);
    } else {
      const nextKeys = storedForm(next);
      let written = 0;
      while (written < next.length && written < current.length && currentKeys[written] === nextKeys[written]) written += 1;
      foreign = current.slice(written);
      if (written === next.length && foreign.length === 0) {
        this.pending = null;
        return;
      }
    }
    const target = [...next, ...foreign];
    // Remember what this attempt owes before clearing, so a second failure loses nothing either.
    this.pending = { from: currentKeys, next: target };
    await this.history.clear();
    await this.history.addMessages(target);
    this.pending = null;
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
