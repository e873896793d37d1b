/**
 * Issue 31 §5: stopping means stopping. A commit-mode `CompactingChatMessageHistory` whose compaction is abandoned
 * (its `compactionTimeoutMs` passes, or its `signal` aborts) writes nothing, whenever that happens: while counting,
 * after the compaction was computed but before `onEvict`, while `onEvict` runs, and inside the store's rewrite
 * before the write is sent. On the in-memory store and on the real Redis and PostgreSQL servers (see
 * `__tests__/support/servers.ts`).
 *
 * Counting is synchronous: before time slices, a timer could not fire during it, so a compaction that took longer
 * than its timeout finished anyway and its commit went ahead.
 */
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, CompactingChatMessageHistory } from "../../src";
import { comparableForm } from "../../src/integrations/store-rewrite";
import { recognisedRewrite } from "../../src/integrations/recognised-rewrite";
import { storeKinds } from "../support/store-kinds";
import type { StoreKind } from "../support/store-kinds";

const TARGET = 300;
const keys = (messages: readonly BaseMessage[]) => comparableForm(messages);

/** A chat of `turns` question/answer pairs after a system prompt, each message unique. */
function chat(turns: number, tag: string): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You answer questions about the weather.")];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage(`${tag}${turn} question: ${"how warm will it be tomorrow? ".repeat(3)}`));
    messages.push(new AIMessage(`${tag}${turn} answer: ${"mild, around twenty degrees. ".repeat(4)}`));
  }
  return messages;
}

/** Holds the event loop for `ms` milliseconds (synchronous work, as a tokenizer's). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { kinds } = storeKinds("abandonment_history");

let sessions = 0;
const sessionId = (name: string) => `abandonment:${process.pid}:${(sessions += 1)}:${name}`;

/** A store of `kind` holding `messages`, and what it holds now. */
async function storeWith(kind: StoreKind, messages: BaseMessage[], name: string) {
  const store = await kind.open(sessionId(name));
  await store.addMessages(messages);
  return { store, stored: async () => keys(await store.getMessages()) };
}

describe.each(kinds)("commit mode over $name: an abandoned compaction writes nothing", (kind) => {
  test("compactionTimeoutMs passes while a synchronous counter counts: the read rejects, onEvict is not called, counting stops", async () => {
    if (!kind.available()) return;
    const original = chat(100, "t");
    const { store, stored } = await storeWith(kind, original, "timeout-counting");
    let calls = 0;
    // About 2 ms a message: 201 messages take 400 ms, ten times the timeout.
    const slowCounter = (messages: BaseMessage[]) => {
      calls += 1;
      busy(2);
      return approximateTokenCounter(messages);
    };
    const evicted: BaseMessage[][] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      tokenCounter: slowCounter,
      compactionTimeoutMs: 40,
      onEvict: (removed) => void evicted.push(removed.map((entry) => entry.message)),
    });
    await expect(history.getMessages()).rejects.toThrow(/compactionTimeoutMs \(40 ms\)/);
    expect(evicted).toEqual([]);
    expect(await stored()).toEqual(keys(original));
    // Stopped: it did not count every message, and counts nothing more once abandoned.
    const counted = calls;
    expect(counted).toBeLessThan(original.length);
    await tick(100);
    expect(calls).toBe(counted);
  });

  test.each([1, 40, 180])("a signal aborted by the counter at its call %i: the read rejects with its reason, onEvict is not called", async (at) => {
    if (!kind.available()) return;
    const original = chat(100, "s");
    const { store, stored } = await storeWith(kind, original, `signal-${at}`);
    const controller = new AbortController();
    const reason = new Error("shutting down");
    let calls = 0;
    const counter = (messages: BaseMessage[]) => {
      calls += 1;
      if (calls === at) controller.abort(reason);
      return approximateTokenCounter(messages);
    };
    const evicted: BaseMessage[][] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      tokenCounter: counter,
      signal: controller.signal,
      onEvict: (removed) => void evicted.push(removed.map((entry) => entry.message)),
    });
    await expect(history.getMessages()).rejects.toBe(reason);
    expect(evicted).toEqual([]);
    expect(await stored()).toEqual(keys(original));
  });

  test("the signal aborted while onEvict runs: nothing is written", async () => {
    if (!kind.available()) return;
    const original = chat(12, "e");
    const { store, stored } = await storeWith(kind, original, "evict-signal");
    const controller = new AbortController();
    const reason = new Error("shutting down during the archive");
    let evictions = 0;
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      signal: controller.signal,
      onEvict: async () => {
        evictions += 1;
        await tick(5);
        controller.abort(reason);
      },
    });
    await expect(history.getMessages()).rejects.toBe(reason);
    expect(evictions).toBe(1);
    expect(await stored()).toEqual(keys(original));
  });

  test("the deadline passes while onEvict holds the event loop (no timer can fire): nothing is written", async () => {
    if (!kind.available()) return;
    const original = chat(12, "d");
    const { store, stored } = await storeWith(kind, original, "evict-deadline");
    let evictions = 0;
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      // Long enough for the compaction of 25 messages, even on a loaded machine; onEvict alone takes longer.
      compactionTimeoutMs: 400,
      onEvict: () => {
        evictions += 1;
        busy(600);
      },
    });
    await expect(history.getMessages()).rejects.toThrow(/compactionTimeoutMs \(400 ms\)/);
    expect(evictions).toBe(1);
    expect(await stored()).toEqual(keys(original));
  });

  test("the store's rewrite, given a signal that aborted, writes nothing and rejects with its reason", async () => {
    if (!kind.available()) return;
    const original = chat(12, "r");
    const { store, stored } = await storeWith(kind, original, "rewrite-signal");
    const rewrite = recognisedRewrite(store)!;
    const current = await store.getMessages();
    const reason = new Error("abandoned");
    await expect(rewrite(current, current.slice(-3), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(await stored()).toEqual(keys(original));
    // The same call without the abort does write: the refusal above was the signal's.
    await expect(rewrite(current, current.slice(-3))).resolves.toBe(true);
    expect(await stored()).toEqual(keys(original.slice(-3)));
  });
});

/** A store this library does not recognise (single-writer mode). */
class PlainListHistory extends BaseListChatMessageHistory {
  lc_namespace = ["tests", "plain"];
  list: BaseMessage[] = [];
  async getMessages() {
    return [...this.list];
  }
  async addMessage(message: BaseMessage) {
    this.list.push(message);
  }
  override async clear() {
    this.list = [];
  }
}

test("single-writer mode: the signal aborted while onEvict runs, nothing is cleared or written", async () => {
  const store = new PlainListHistory();
  const original = chat(12, "w");
  await store.addMessages(original);
  const controller = new AbortController();
  const reason = new Error("stop");
  const history = new CompactingChatMessageHistory({
    history: store,
    targetTokens: TARGET,
    mode: "commit",
    rewrite: "single-writer-clear-and-add",
    signal: controller.signal,
    onEvict: () => controller.abort(reason),
  });
  await expect(history.getMessages()).rejects.toBe(reason);
  expect(keys(store.list)).toEqual(keys(original));
  expect(history.hasPendingRewrite).toBe(false);
});
