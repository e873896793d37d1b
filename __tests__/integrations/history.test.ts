/**
 * CompactingChatMessageHistory over real stores: InMemoryChatMessageHistory
 * and RedisChatMessageHistory on the real Redis server, with fault injection
 * during commits and parallel writers appending while compactions run.
 */
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { RedisChatMessageHistory } from "@langchain/redis";
import { createClient } from "redis";
import {
  approximateTokenCounter,
  omissionNoteMetadata,
  CompactingChatMessageHistory,
  isOmissionNote,
  postgresRewrite,
  redisListRewrite,
  SummarizationCompactor,
} from "../../src";
import type { RedisRewriteClient } from "../../src";
import { comparableForm } from "../../src/integrations/store-rewrite";
import { REDIS_URL, requireServer } from "../support/servers";
import { storeKinds } from "../support/store-kinds";
import { ScriptedChatModel } from "../../src/testing";
import { ScriptedSummaryModel } from "../support/summary-model";
import { NeverSettles } from "../support/test-compactors";
import { diagnostic } from "../support/diagnostics";

const TARGET = 300;

// Key order is not part of a message: PostgreSQL's jsonb hands keys back reordered.
const key = (message: BaseMessage) => comparableForm([message])[0]!;
const keys = (messages: readonly BaseMessage[]) => messages.map(key);

/** A chat of `turns` question/answer pairs after a system prompt, each message unique. */
function chat(turns: number, tag = "m"): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You answer questions about the weather.")];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage(`${tag}${turn} question: ${"how warm will it be tomorrow? ".repeat(3)}`));
    messages.push(new AIMessage(`${tag}${turn} answer: ${"mild, around twenty degrees. ".repeat(4)}`));
  }
  return messages;
}

async function memoryStore(messages: BaseMessage[]): Promise<InMemoryChatMessageHistory> {
  const store = new InMemoryChatMessageHistory();
  await store.addMessages(messages);
  return store;
}

describe("CompactingChatMessageHistory over InMemoryChatMessageHistory", () => {
  test("view mode compacts reads and never writes", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET });
    const seen = await history.getMessages();
    expect(approximateTokenCounter(seen.filter((m) => !isOmissionNote(m)))).toBeLessThanOrEqual(TARGET);
    expect(seen.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(SystemMessage);
    expect(key(seen.at(-1)!)).toBe(key(original.at(-1)!));
    await history.addMessage(new HumanMessage("one more"));
    expect(keys(await store.getMessages())).toEqual(keys([...original, new HumanMessage("one more")]));
  });

  test("commit mode hands the removed messages to onEvict first, then rewrites the store", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    let storeDuringEvict: string[] = [];
    const evicted: BaseMessage[] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: async (removed) => {
        storeDuringEvict = keys(await store.getMessages());
        evicted.push(...removed.map((entry) => entry.message));
      },
    });
    const seen = await history.getMessages();
    expect(storeDuringEvict).toEqual(keys(original));
    const stored = await store.getMessages();
    expect(keys(stored)).toEqual(keys(seen));
    // Nothing vanished: every original message is kept or was evicted, exactly once.
    expect([...keys(evicted), ...keys(stored.filter((m) => !isOmissionNote(m)))].sort()).toEqual(keys(original).sort());
    expect(omissionNoteMetadata(stored.find((m) => isOmissionNote(m))!)?.removed_messages).toBe(evicted.length);
  });

  test("an onEvict that throws leaves the store untouched", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: () => {
        throw new Error("archive down");
      },
    });
    await expect(history.getMessages()).rejects.toThrow("archive down");
    expect(keys(await store.getMessages())).toEqual(keys(original));
  });

  test("bad options are typed errors", () => {
    const store = new InMemoryChatMessageHistory();
    expect(() => new CompactingChatMessageHistory({ history: {} as InMemoryChatMessageHistory, targetTokens: 1 })).toThrow(/`history`/);
    expect(() => new CompactingChatMessageHistory({ history: store })).toThrow(TypeError);
    expect(() => new CompactingChatMessageHistory({ history: store, targetTokens: 10, contextWindow: 100 })).toThrow(TypeError);
    expect(() => new CompactingChatMessageHistory({ history: store, targetTokens: -1 })).toThrow(RangeError);
    expect(() => new CompactingChatMessageHistory({ history: store, targetTokens: 10, mode: "x" as "view" })).toThrow(/`mode`/);
    expect(() => new CompactingChatMessageHistory({ history: store, contextWindow: 100, compactAt: 0.2, compactTo: 0.5 })).toThrow(RangeError);
  });

  test("minGainTokens: a compaction freeing fewer tokens is not applied, in view mode nor in commit mode", async () => {
    const original = chat(12);
    const total = approximateTokenCounter(original);
    // The trigger (0.7 of the window) is passed, so a compaction is due and computed every time.
    const contextWindow = Math.ceil(total / 0.8);
    const unrestricted = new CompactingChatMessageHistory({ history: await memoryStore(original), contextWindow });
    const compacted = await unrestricted.getMessages();
    const gain = total - approximateTokenCounter(compacted);
    expect(gain).toBeGreaterThan(0);

    for (const mode of ["view", "commit"] as const) {
      const declinedStore = await memoryStore(original);
      const declining = new CompactingChatMessageHistory({ history: declinedStore, contextWindow, mode, minGainTokens: gain + 1 });
      expect(keys(await declining.getMessages())).toEqual(keys(original));
      expect(keys(await declinedStore.getMessages())).toEqual(keys(original));

      const appliedStore = await memoryStore(original);
      const applying = new CompactingChatMessageHistory({ history: appliedStore, contextWindow, mode, minGainTokens: gain });
      expect(keys(await applying.getMessages())).toEqual(keys(compacted));
      expect(keys(await appliedStore.getMessages())).toEqual(keys(mode === "commit" ? compacted : original));
    }
    const store = new InMemoryChatMessageHistory();
    expect(() => new CompactingChatMessageHistory({ history: store, targetTokens: 10, minGainTokens: 5 })).toThrow(/`minGainTokens`.*`contextWindow`/);
    expect(() => new CompactingChatMessageHistory({ history: store, contextWindow: 100, minGainTokens: -1 })).toThrow(RangeError);
  });

  test("works in RunnableWithMessageHistory: the model gets the compacted history, the store keeps all", async () => {
    const store = new InMemoryChatMessageHistory();
    const model = new ScriptedChatModel({ usage: false, reply: (_messages, call) => `reply ${call}: ${"it will be sunny and mild. ".repeat(4)}` });
    const prompt = ChatPromptTemplate.fromMessages([["system", "You are brief."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: () => new CompactingChatMessageHistory({ history: store, contextWindow: 1_000, compactAt: 0.5, compactTo: 0.3 }),
      inputMessagesKey: "input",
      historyMessagesKey: "history",
    });
    const rounds = 12;
    for (let round = 0; round < rounds; round += 1) {
      await chain.invoke({ input: `question ${round}: ${"what about the weekend? ".repeat(3)}` }, { configurable: { sessionId: "s" } });
    }
    expect(await store.getMessages()).toHaveLength(rounds * 2);
    model.calls.forEach((call, index) => {
      expect(call.messages.at(-1)!.text).toContain(`question ${index}:`);
      expect(approximateTokenCounter(call.messages)).toBeLessThan(1_000 * 0.5 + approximateTokenCounter([call.messages.at(-1)!]));
    });
    expect(model.calls.some((call) => call.messages.some((m) => isOmissionNote(m)))).toBe(true);
    // The stored history outgrew the trigger: compaction was needed.
    expect(approximateTokenCounter(await store.getMessages())).toBeGreaterThan(1_000 * 0.5);
  });
});

/** A store that performs its first `failAt` operations and then fails one, before or after it takes effect. */
class FaultyHistory extends BaseListChatMessageHistory {
  lc_namespace = ["tests", "faulty"];
  operations = 0;
  failAt = Number.POSITIVE_INFINITY;
  applyBeforeFailing = false;
  faults = 0;
  constructor(readonly inner: InMemoryChatMessageHistory) {
    super();
  }
  private async op<T>(run: () => Promise<T>): Promise<T> {
    this.operations += 1;
    if (this.operations - 1 !== this.failAt) return run();
    this.faults += 1;
    if (this.applyBeforeFailing) await run();
    throw new Error(`injected fault at operation ${this.failAt}`);
  }
  getMessages() {
    return this.op(() => this.inner.getMessages());
  }
  addMessage(message: BaseMessage) {
    return this.op(() => this.inner.addMessage(message));
  }
  override clear() {
    return this.op(() => this.inner.clear());
  }
}

describe("fault injection during single-writer clear-and-add commits", () => {
  test("every message stays in the store, in onEvict, or in the pending rewrite; a retry completes", async () => {
    const original = chat(10);
    const reference = await new CompactingChatMessageHistory({ history: await memoryStore(original), targetTokens: TARGET, mode: "commit" }).getMessages();
    let faults = 0;
    let casesRelyingOnPending = 0;
    let cases = 0;
    for (const applyBeforeFailing of [false, true]) {
      for (let failAt = 0; failAt < 40; failAt += 1) {
        const store = new FaultyHistory(await memoryStore(original));
        store.failAt = failAt;
        store.applyBeforeFailing = applyBeforeFailing;
        const evicted: BaseMessage[] = [];
        const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", rewrite: "single-writer-clear-and-add", onEvict: (removed) => void evicted.push(...removed.map((entry) => entry.message)) });
        let failed = false;
        try {
          await history.getMessages();
        } catch {
          failed = true;
        }
        cases += 1;
        if (!failed) {
          expect(store.faults).toBe(0);
          continue;
        }
        faults += store.faults;
        const inStore = new Set(keys(await store.inner.getMessages()));
        const inEvict = new Set(keys(evicted));
        const inPending = new Set(keys(history.pendingRewrite ?? []));
        for (const k of keys(original)) {
          expect(inStore.has(k) || inEvict.has(k) || inPending.has(k)).toBe(true);
        }
        if (keys(original).some((k) => !inStore.has(k) && !inEvict.has(k))) casesRelyingOnPending += 1;
        // Retry on the same instance, faults over.
        store.failAt = Number.POSITIVE_INFINITY;
        const retried = await history.getMessages();
        expect(history.hasPendingRewrite).toBe(false);
        expect(keys(await store.inner.getMessages())).toEqual(keys(reference));
        expect(keys(retried)).toEqual(keys(reference));
      }
    }
    diagnostic(`fault injection: ${cases} cases, ${faults} faults injected, ${casesRelyingOnPending} left kept messages only in the pending rewrite`);
    expect(faults).toBeGreaterThan(10);
  });
});

describe("CompactingChatMessageHistory over RedisChatMessageHistory", () => {
  let available = false;
  const clients: ReturnType<typeof createClient>[] = [];
  const sessions: string[] = [];
  const newClient = async () => {
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    clients.push(client);
    return client;
  };
  const session = (name: string) => {
    const id = `lcc-test:history:${process.pid}:${Date.now()}:${name}`;
    sessions.push(id);
    return id;
  };
  const redisStore = async (sessionId: string) => new RedisChatMessageHistory({ sessionId, client: await newClient() });
  const rewriteFor = (store: RedisChatMessageHistory, sessionId: string) => redisListRewrite({ client: store.client, sessionId });

  beforeAll(async () => {
    available = await requireServer("Redis", REDIS_URL);
  });
  afterAll(async () => {
    if (clients.length > 0 && sessions.length > 0) await clients[0]!.del(sessions);
    await Promise.all(clients.map((client) => client.quit()));
  });

  test("the note and its metadata survive the store; a second process sees the same view", async () => {
    if (!available) return;
    const id = session("note");
    const store = await redisStore(id);
    await store.addMessages(chat(12));
    const writer = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", rewrite: rewriteFor(store, id) });
    const committed = await writer.getMessages();
    const note = committed.find((m) => isOmissionNote(m))!;

    // A fresh client and wrapper: what another process would do.
    const reread = await (await redisStore(id)).getMessages();
    expect(keys(reread)).toEqual(keys(committed));
    const readNote = reread.find((m) => isOmissionNote(m));
    expect(readNote).toBeInstanceOf(HumanMessage);
    expect(omissionNoteMetadata(readNote!)).toEqual(omissionNoteMetadata(note));

    const viewId = session("view");
    const viewStore = await redisStore(viewId);
    await viewStore.addMessages(chat(12, "v"));
    const first = await new CompactingChatMessageHistory({ history: viewStore, targetTokens: TARGET }).getMessages();
    const second = await new CompactingChatMessageHistory({ history: await redisStore(viewId), targetTokens: TARGET }).getMessages();
    expect(keys(second)).toEqual(keys(first));
    expect(first.some((m) => isOmissionNote(m))).toBe(true);
    expect(await viewStore.getMessages()).toHaveLength(25);
  });

  test("the atomic rewrite replaces only the expected oldest messages, and refuses otherwise", async () => {
    if (!available) return;
    const id = session("cas");
    const store = await redisStore(id);
    const original = chat(3);
    await store.addMessages(original);
    const rewrite = rewriteFor(store, id);
    expect(await rewrite(original.slice(1, 3), [new HumanMessage("x")])).toBe(false);
    expect(keys(await store.getMessages())).toEqual(keys(original));
    // Replacing the oldest two keeps the rest behind the new list.
    expect(await rewrite(original.slice(0, 2), [new HumanMessage("x"), new AIMessage("y")])).toBe(true);
    expect(keys(await store.getMessages())).toEqual(keys([new HumanMessage("x"), new AIMessage("y"), ...original.slice(2)]));
    expect(await rewrite(await store.getMessages(), [new HumanMessage("z")])).toBe(true);
    expect((await store.getMessages()).map((m) => m.text)).toEqual(["z"]);
  });

  test("a rewrite that fails before or after it lands loses nothing, and a retry completes", async () => {
    if (!available) return;
    let faults = 0;
    for (const landsFirst of [false, true]) {
      const id = session(`fault-${landsFirst}`);
      const store = await redisStore(id);
      const original = chat(10, "f");
      await store.addMessages(original);
      const real = rewriteFor(store, id);
      let armed = true;
      const evicted: BaseMessage[] = [];
      const history = new CompactingChatMessageHistory({
        history: store,
        targetTokens: TARGET,
        mode: "commit",
        onEvict: (removed) => void evicted.push(...removed.map((entry) => entry.message)),
        rewrite: async (expected, next) => {
          if (!armed) return real(expected, next);
          armed = false;
          faults += 1;
          if (landsFirst) await real(expected, next);
          throw new Error("connection reset");
        },
      });
      await expect(history.getMessages()).rejects.toThrow("connection reset");
      const inStore = new Set(keys(await store.getMessages()));
      const inEvict = new Set(keys(evicted));
      expect(keys(original).filter((k) => !inStore.has(k) && !inEvict.has(k))).toEqual([]);
      const retried = await history.getMessages();
      expect(keys(await (await redisStore(id)).getMessages())).toEqual(keys(retried));
      expect(retried.filter((m) => isOmissionNote(m))).toHaveLength(1);
    }
    diagnostic(`redis fault injection: ${faults} faults injected`);
  });

  test("parallel writers appending during compactions lose nothing", async () => {
    if (!available) return;
    const id = session("parallel");
    const seed = await redisStore(id);
    await seed.addMessages(chat(8));
    const writers = 4;
    const perWriter = 50;
    let refused = 0;
    let landed = 0;
    const written: string[] = [];
    const evicted: BaseMessage[] = [];
    const compactorStore = await redisStore(id);
    const compacting = new CompactingChatMessageHistory({
      history: compactorStore,
      targetTokens: TARGET,
      mode: "commit",
      rewrite: async (expected, next) => {
        const ok = await rewriteFor(compactorStore, id)(expected, next);
        if (ok) landed += 1;
        else refused += 1;
        return ok;
      },
      onEvict: (removed) => void evicted.push(...removed.map((entry) => entry.message)),
    });
    let done = false;
    let compactions = 0;
    const writing = Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        const store = await redisStore(id);
        for (let index = 0; index < perWriter; index += 1) {
          const text = `writer ${writer} message ${index}: ${"the forecast changed again. ".repeat(2)}`;
          await store.addMessage(index % 2 === 0 ? new HumanMessage(text) : new AIMessage(text));
          written.push(text);
          // A short pause now and then lets some rewrites land between appends, and others collide.
          if (index % 3 === writer % 3) await new Promise((resolve) => setTimeout(resolve, 1));
        }
      }),
    ).finally(() => {
      done = true;
    });
    const compactingLoop = (async () => {
      for (let round = 0; round < 400 && !done; round += 1) {
        const before = evicted.length;
        await compacting.getMessages();
        if (evicted.length > before) compactions += 1;
      }
    })();
    await Promise.all([writing, compactingLoop]);
    await compacting.getMessages();
    const finalMessages = await seed.getMessages();
    const finalTexts = new Set(finalMessages.map((m) => m.text));
    // No message was written twice, and each writer's appends kept their order.
    expect(finalTexts.size).toBe(finalMessages.length);
    for (let writer = 0; writer < writers; writer += 1) {
      const order = finalMessages.map((m) => /^writer (\d+) message (\d+):/.exec(m.text)).filter((m) => m !== null && Number(m[1]) === writer).map((m) => Number(m![2]));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    const evictedTexts = new Set(evicted.map((m) => m.text));
    const lost = written.filter((text) => !finalTexts.has(text) && !evictedTexts.has(text));
    diagnostic(
      `parallel writers: ${written.length} concurrent appends, ${compactions} compactions, ${landed} rewrites landed, ${refused} refused (list changed), ${written.length - lost.length} appends survived`,
    );
    expect(lost).toEqual([]);
    expect(written).toHaveLength(writers * perWriter);
    expect(compactions).toBeGreaterThan(1);
    expect(landed).toBeGreaterThan(1);
  });
});

// ---------------------------------------------------------------------------
// Concurrency guarantees per store, the refused commit, ordering of calls, and
// the rules a mutation of the wrapper would break.
// ---------------------------------------------------------------------------

/** A promise with its resolve/reject outside, to hold a step at an exact point. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
const tick = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store this library does not recognise: plain list semantics over an array, every call async. */
class PlainListHistory extends BaseListChatMessageHistory {
  lc_namespace = ["tests", "plain"];
  list: BaseMessage[] = [];
  /** Milliseconds each successive addMessage waits before landing (the first call slowest). */
  addDelays: number[] = [];
  async getMessages() {
    return [...this.list];
  }
  async addMessage(message: BaseMessage) {
    const delay = this.addDelays.shift();
    if (delay) await tick(delay);
    this.list.push(message);
  }
  override async clear() {
    this.list = [];
  }
}

/** Every tool result has its call earlier, and every call its result later: what providers accept. */
function assertProviderValid(messages: readonly BaseMessage[]) {
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) called.add(call.id!);
    if (ToolMessage.isInstance(message)) {
      expect(called.has(message.tool_call_id)).toBe(true);
      answered.add(message.tool_call_id);
    }
  }
  expect([...called].filter((id) => !answered.has(id))).toEqual([]);
}

const stores = storeKinds("stores_branch_history");
const { kinds } = stores;
const PG_TABLE = stores.tableName;

let sessionCounter = 0;
const sessionId = (name: string) => `stores:history:${process.pid}:${(sessionCounter += 1)}:${name}`;

describe.each(kinds)("commit mode over $name (atomic rewrite picked by itself)", (kind) => {
  test("5 writers x 100 appends, each compacting after every append: nothing lost, no duplicates, system first, provider-valid, counts bounded", async () => {
    if (!kind.available()) return;
    const id = sessionId("writers");
    const seed = await kind.open(id);
    await seed.addMessage(new SystemMessage("You answer questions about the weather."));
    const writers = 5;
    const perWriter = 100;
    const written: string[] = [];
    const evicted: BaseMessage[] = [];
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        const history = new CompactingChatMessageHistory({
          history: await kind.open(id),
          targetTokens: TARGET,
          mode: "commit",
          onEvict: (removed) => void evicted.push(...removed.map((entry) => entry.message)),
        });
        for (let index = 0; index < perWriter; index += 1) {
          const text = `writer ${writer} message ${index}: ${"the forecast changed again. ".repeat(2)}`;
          // Writer 0 writes tool steps (a call, then its result, in one append) between its plain messages.
          const messages =
            writer === 0 && index % 4 === 1
              ? [
                  new AIMessage({ content: text, tool_calls: [{ id: `call-${index}`, name: "forecast", args: { day: index } }] }),
                  new ToolMessage({ content: `${text} (result)`, tool_call_id: `call-${index}` }),
                ]
              : [index % 2 === 0 ? new HumanMessage(text) : new AIMessage(text)];
          await history.addMessages(messages);
          written.push(...messages.map((m) => m.text));
          await history.getMessages();
        }
      }),
    );
    const final = await (await kind.open(id)).getMessages();
    const finalTexts = final.map((m) => m.text);
    const inFinal = new Set(finalTexts);
    const inEvict = new Set(evicted.map((m) => m.text));
    const lost = written.filter((text) => !inFinal.has(text) && !inEvict.has(text));
    const notes = final.filter((m) => isOmissionNote(m));
    diagnostic(`${kind.name}: ${written.length} appends by ${writers} compacting writers, ${lost.length} lost, ${evicted.length} evicted, final ${final.length} messages, note count ${omissionNoteMetadata(notes[0]!)?.removed_messages}`);
    expect(lost).toEqual([]);
    expect(finalTexts.length).toBe(inFinal.size);
    expect(final[0]).toBeInstanceOf(SystemMessage);
    expect(notes).toHaveLength(1);
    // Never more removed than ever existed: every appended message plus the system prompt, less what is still stored.
    expect(omissionNoteMetadata(notes[0]!)!.removed_messages).toBeLessThanOrEqual(written.length + 1 - (final.length - 1));
    // Exactly: the distinct messages handed to onEvict that are gone (a refused rewrite's evicted messages stay in the store).
    const gone = new Set(evicted.filter((m) => !isOmissionNote(m) && !inFinal.has(m.text)).map((m) => m.text));
    expect(omissionNoteMetadata(notes[0]!)!.removed_messages).toBe(gone.size);
    assertProviderValid(final);
  });

  test("two instances compacting the same list at once: one rewrite lands, the other refuses", async () => {
    if (!kind.available()) return;
    const id = sessionId("two");
    const original = chat(12);
    await (await kind.open(id)).addMessages(original);
    const bothEvicting = deferred();
    let evicting = 0;
    const evicted: BaseMessage[][] = [];
    const make = async () =>
      new CompactingChatMessageHistory({
        history: await kind.open(id),
        targetTokens: TARGET,
        mode: "commit",
        onEvict: async (removed) => {
          evicted.push(removed.map((entry) => entry.message));
          evicting += 1;
          if (evicting === 2) bothEvicting.resolve();
          // Both compactors have read the same list before either rewrites.
          await bothEvicting.promise;
        },
      });
    const [first, second] = [await make(), await make()];
    await Promise.all([first.getMessages(), second.getMessages()]);
    expect(evicted).toHaveLength(2);
    const stored = await (await kind.open(id)).getMessages();
    expect(stored.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(new Set(keys(stored)).size).toBe(stored.length);
    // The store is exactly one compactor's result: the original less what it evicted, plus its note.
    const removed = new Set(keys(evicted[0]!));
    expect(keys(stored.filter((m) => !isOmissionNote(m)))).toEqual(keys(original).filter((k) => !removed.has(k)));
    expect(omissionNoteMetadata(stored.find((m) => isOmissionNote(m))!)!.removed_messages).toBe(evicted[0]!.length);
  });

  test("an append made while a compaction waits on onEvict stays behind the compacted list", async () => {
    if (!kind.available()) return;
    const id = sessionId("append-during");
    const original = chat(12);
    await (await kind.open(id)).addMessages(original);
    const late = new HumanMessage("appended by another writer during the compaction");
    const other = await kind.open(id);
    const history = new CompactingChatMessageHistory({
      history: await kind.open(id),
      targetTokens: TARGET,
      mode: "commit",
      onEvict: async () => {
        await other.addMessage(late);
      },
    });
    const seen = await history.getMessages();
    const stored = await (await kind.open(id)).getMessages();
    expect(key(stored.at(-1)!)).toBe(key(late));
    expect(key(stored.at(-2)!)).toBe(key(original.at(-1)!));
    expect(stored[0]).toBeInstanceOf(SystemMessage);
    expect(keys(seen)).toEqual(keys(stored));
  });
});

describe("a store without an atomic rewrite", () => {
  test("commit mode is refused with a TypeError that names the way out", () => {
    const make = () => new CompactingChatMessageHistory({ history: new PlainListHistory(), targetTokens: TARGET, mode: "commit" });
    expect(make).toThrow(TypeError);
    expect(make).toThrow(/a PlainListHistory.*none of the recognised stores.*single-writer-clear-and-add/);
    // View mode needs no rewrite; a rewrite of one's own, or the named opt-in, is accepted.
    expect(() => new CompactingChatMessageHistory({ history: new PlainListHistory(), targetTokens: TARGET })).not.toThrow();
    expect(() => new CompactingChatMessageHistory({ history: new PlainListHistory(), targetTokens: TARGET, mode: "commit", rewrite: async () => false })).not.toThrow();
    expect(() => new CompactingChatMessageHistory({ history: new PlainListHistory(), targetTokens: TARGET, mode: "commit", rewrite: "single-writer-clear-and-add" })).not.toThrow();
    expect(() => new CompactingChatMessageHistory({ history: new PlainListHistory(), targetTokens: TARGET, mode: "commit", rewrite: "clear-and-add" as never })).toThrow(/`rewrite`.*"clear-and-add"/);
  });

  test("single-writer mode carries over a message appended between its two reads", async () => {
    const store = new PlainListHistory();
    const original = chat(12);
    await store.addMessages(original);
    const late = new HumanMessage("appended between the first read and the re-read");
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      rewrite: "single-writer-clear-and-add",
      // onEvict runs between the two reads: an append made here is what the re-read must carry over.
      onEvict: async () => {
        await store.addMessage(late);
      },
    });
    const seen = await history.getMessages();
    expect(key(store.list.at(-1)!)).toBe(key(late));
    expect(key(store.list.at(-2)!)).toBe(key(original.at(-1)!));
    expect(keys(seen)).toEqual(keys(store.list));
  });

  test("clear() drops a pending rewrite: the cleared history does not come back", async () => {
    const store = new FaultyHistory(await memoryStore(chat(12)));
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", rewrite: "single-writer-clear-and-add" });
    // Operations: read, re-read, clear, then the first re-add fails.
    store.failAt = 3;
    await expect(history.getMessages()).rejects.toThrow("injected fault");
    expect(history.hasPendingRewrite).toBe(true);
    store.failAt = Number.POSITIVE_INFINITY;
    await history.clear();
    expect(history.hasPendingRewrite).toBe(false);
    const fresh = new HumanMessage("a new conversation");
    await history.addMessage(fresh);
    expect(keys(await store.inner.getMessages())).toEqual(keys([fresh]));
    expect(keys(await history.getMessages())).toEqual(keys([fresh]));
  });
});

describe("the order of calls on one instance", () => {
  test("appends land in call order even when the store answers out of order", async () => {
    const store = new PlainListHistory();
    store.addDelays = [60, 30, 0];
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: 10_000 });
    const messages = [new HumanMessage("a"), new AIMessage("b"), new HumanMessage("c")];
    await Promise.all(messages.map((message) => history.addMessage(message)));
    expect(store.list.map((m) => m.text)).toEqual(["a", "b", "c"]);
  });

  test("a read sees the appends called before it", async () => {
    const store = new PlainListHistory();
    store.addDelays = [40];
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: 10_000 });
    void history.addMessage(new HumanMessage("written first"));
    expect((await history.getMessages()).map((m) => m.text)).toEqual(["written first"]);
  });

  test("two reads on one instance run one after the other: each removed message goes to onEvict once", async () => {
    const store = await memoryStore(chat(12));
    const evicted: BaseMessage[] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: async (removed) => {
        await tick(10);
        evicted.push(...removed.map((entry) => entry.message));
      },
    });
    const [first, second] = await Promise.all([history.getMessages(), history.getMessages()]);
    expect(keys(second)).toEqual(keys(first));
    expect(new Set(keys(evicted)).size).toBe(evicted.length);
    expect(omissionNoteMetadata(first.find((m) => isOmissionNote(m))!)!.removed_messages).toBe(evicted.length);
  });

  test("clear() during a compaction makes its rewrite refuse: nothing cleared comes back", async () => {
    const store = await memoryStore(chat(12));
    const release = deferred();
    const entered = deferred();
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    const reading = history.getMessages();
    await entered.promise;
    await history.clear();
    const after = new HumanMessage("after the clear");
    await history.addMessage(after);
    release.resolve();
    await reading;
    expect(keys(await store.getMessages())).toEqual(keys([after]));
  });
});

describe("onEvict is awaited before the store is touched", () => {
  test("an onEvict that resolves later: the store is unchanged until it does", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    const archived = deferred();
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", onEvict: () => archived.promise });
    const reading = history.getMessages();
    await tick(30);
    expect(keys(await store.getMessages())).toEqual(keys(original));
    archived.resolve();
    const seen = await reading;
    expect(keys(await store.getMessages())).toEqual(keys(seen));
    expect(seen.length).toBeLessThan(original.length);
  });

  test("an onEvict that rejects later leaves the store untouched", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: async () => {
        await tick(10);
        throw new Error("archive timed out");
      },
    });
    await expect(history.getMessages()).rejects.toThrow("archive timed out");
    await tick(10);
    expect(keys(await store.getMessages())).toEqual(keys(original));
  });
});

describe("a compaction that never settles", () => {
  const stuckCounter = () => new Promise<number>(() => undefined);

  test.each(["view", "commit"] as const)("%s mode: appends are written while it hangs", async (mode) => {
    const store = await memoryStore(chat(12));
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode, tokenCounter: stuckCounter });
    void history.getMessages();
    await tick(10);
    const reply = new AIMessage("the reply that must be written");
    const written = history.addMessage(reply).then(() => "written");
    expect(await Promise.race([written, tick(1_000).then(() => "blocked")])).toBe("written");
    expect(key((await store.getMessages()).at(-1)!)).toBe(key(reply));
  });

  test("single-writer mode: appends are written while it hangs", async () => {
    const store = new PlainListHistory();
    await store.addMessages(chat(12));
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", rewrite: "single-writer-clear-and-add", tokenCounter: stuckCounter });
    void history.getMessages();
    await tick(10);
    const written = history.addMessage(new AIMessage("reply")).then(() => "written");
    expect(await Promise.race([written, tick(1_000).then(() => "blocked")])).toBe("written");
  });

  test("compactionTimeoutMs abandons it: the read rejects, nothing is written, the next read runs", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    let stuck = true;
    const counter = (messages: BaseMessage[]) => (stuck ? new Promise<number>(() => undefined) : approximateTokenCounter(messages));
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", tokenCounter: counter, compactionTimeoutMs: 50 });
    await expect(history.getMessages()).rejects.toThrow(/compactionTimeoutMs \(50 ms\)/);
    expect(keys(await store.getMessages())).toEqual(keys(original));
    stuck = false;
    expect((await history.getMessages()).some((m) => isOmissionNote(m))).toBe(true);
    expect(() => new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, compactionTimeoutMs: 0 })).toThrow(/`compactionTimeoutMs`.*got 0/);
  });

  test("an aborted signal rejects with its reason", async () => {
    const controller = new AbortController();
    const history = new CompactingChatMessageHistory({ history: await memoryStore(chat(12)), targetTokens: TARGET, tokenCounter: stuckCounter, signal: controller.signal });
    const reading = history.getMessages();
    controller.abort(new Error("shutting down"));
    await expect(reading).rejects.toThrow("shutting down");
  });
});

describe("the wrapper's signal and timeout reach the compactor", () => {
  const budgets = [
    ["targetTokens", { targetTokens: TARGET }],
    ["contextWindow", { contextWindow: 600 }],
  ] as const;

  test.each(budgets)("%s: compactionTimeoutMs aborts the compactor's own signal", async (_name, budget) => {
    const compactor = new NeverSettles(false);
    const history = new CompactingChatMessageHistory({ history: await memoryStore(chat(12)), ...budget, mode: "commit", compactor, compactionTimeoutMs: 50 });
    await expect(history.getMessages()).rejects.toThrow(/compactionTimeoutMs \(50 ms\)/);
    expect(compactor.signals).toHaveLength(1);
    expect(compactor.signals[0]?.aborted).toBe(true);
    expect(String(compactor.signals[0]?.reason)).toMatch(/compactionTimeoutMs/);
  });

  test.each(budgets)("%s: the wrapper's signal aborts the compactor's own signal with its reason", async (_name, budget) => {
    const controller = new AbortController();
    const compactor = new NeverSettles(false);
    const history = new CompactingChatMessageHistory({ history: await memoryStore(chat(12)), ...budget, compactor, signal: controller.signal });
    const reading = history.getMessages();
    await tick(10);
    expect(compactor.signals).toHaveLength(1);
    expect(compactor.signals[0]?.aborted).toBe(false);
    controller.abort(new Error("shutting down"));
    await expect(reading).rejects.toThrow("shutting down");
    expect(compactor.signals[0]?.aborted).toBe(true);
    expect(compactor.signals[0]?.reason).toBe(controller.signal.reason);
  });

  test("a summary call that hangs is aborted by the timeout, and nothing is written", async () => {
    const original = chat(12);
    const store = await memoryStore(original);
    const model = new ScriptedSummaryModel(() => ({ hang: true, listen: true }));
    const compactor = new SummarizationCompactor({ model });
    const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", compactor, compactionTimeoutMs: 50 });
    await expect(history.getMessages()).rejects.toThrow(/compactionTimeoutMs/);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.signal?.aborted).toBe(true);
    expect(keys(await store.getMessages())).toEqual(keys(original));
  });
});

describe("note counts", () => {
  test("a note duplicated by a race is folded once: the count never exceeds the messages that existed", async () => {
    const base = chat(12);
    const once = await new CompactingChatMessageHistory({ history: await memoryStore(base), targetTokens: TARGET, mode: "commit" }).getMessages();
    const note = once.find((m) => isOmissionNote(m))!;
    const firstCount = omissionNoteMetadata(note)!.removed_messages;
    // What two clear-and-add writers leave: the whole list twice, note included.
    const doubled = [...once, ...once.slice(1), ...chat(6, "n").slice(1)];
    const again = await new CompactingChatMessageHistory({ history: await memoryStore(doubled), targetTokens: TARGET, mode: "commit" }).getMessages();
    const count = omissionNoteMetadata(again.find((m) => isOmissionNote(m))!)!.removed_messages;
    const existed = base.length + 12;
    expect(count).toBeLessThanOrEqual(existed + (once.length - 2));
    // The two copies of the first note count its removed messages once.
    const removedOthers = doubled.length - again.length + 1 - 2;
    expect(count).toBe(firstCount + removedOthers);
  });
});

describe("redisListRewrite: the server-side compare", () => {
  test("a competing compactor landing between the client's check and the script makes the script refuse", async () => {
    if (!stores.redisUp()) return;
    const id = sessionId("lua");
    const store = (await kinds[1]!.open(id)) as RedisChatMessageHistory;
    const original = chat(12, "l");
    await store.addMessages(original);
    const appended = chat(12, "after").slice(1);
    const competitor = new CompactingChatMessageHistory({ history: (await kinds[1]!.open(id)) as RedisChatMessageHistory, targetTokens: TARGET, mode: "commit" });
    let refused = 0;
    // The client this rewrite talks through: the competitor's whole commit runs right before the script.
    const client = store.client as unknown as RedisRewriteClient;
    const racing: RedisRewriteClient = {
      get isReady() {
        return client.isReady;
      },
      connect: () => client.connect(),
      lRange: (k, start, stop) => client.lRange(k, start, stop),
      eval: async (script, options) => {
        await competitor.getMessages();
        // Appends after it make the list long enough that only the compare (not the length check) can refuse.
        await store.addMessages(appended);
        const result = await client.eval(script, options);
        if (result !== 1) refused += 1;
        return result;
      },
    };
    const evicted: BaseMessage[] = [];
    const history = new CompactingChatMessageHistory({
      history: store,
      targetTokens: TARGET,
      mode: "commit",
      onEvict: (removed) => void evicted.push(...removed.map((entry) => entry.message)),
      rewrite: redisListRewrite({ client: racing, sessionId: id }),
    });
    await history.getMessages();
    expect(refused).toBe(1);
    const stored = await store.getMessages();
    // The competitor's compacted list, then the appends, untouched by the refused script.
    const competitorNote = stored.findIndex((m) => isOmissionNote(m));
    expect(competitorNote).toBeGreaterThan(0);
    expect(keys(stored.slice(-appended.length))).toEqual(keys(appended));
    const kept = keys(stored.slice(0, -appended.length).filter((m) => !isOmissionNote(m)));
    expect(kept).toEqual(keys(original).filter((k) => kept.includes(k)));
    expect(kept[0]).toBe(key(original[0]!));
    expect(kept.at(-1)).toBe(key(original.at(-1)!));
    expect(kept.length).toBeLessThan(original.length);
    expect(stored.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(new Set(keys(stored)).size).toBe(stored.length);
  });

  test("a process killed at any step of a rewrite loses nothing; a fresh instance finishes the job", async () => {
    if (!stores.redisUp()) return;
    let cases = 0;
    for (const step of ["lRange", "eval-before", "eval-after"] as const) {
      const id = sessionId(`kill-${step}`);
      const store = (await kinds[1]!.open(id)) as RedisChatMessageHistory;
      const original = chat(12, "k");
      await store.addMessages(original);
      const client = store.client as unknown as RedisRewriteClient;
      const dying: RedisRewriteClient = {
        get isReady() {
          return client.isReady;
        },
        connect: () => client.connect(),
        lRange: async (k, start, stop) => {
          if (step === "lRange") throw new Error("killed");
          return client.lRange(k, start, stop);
        },
        eval: async (script, options) => {
          if (step === "eval-after") await client.eval(script, options);
          throw new Error("killed");
        },
      };
      const evicted: BaseMessage[] = [];
      const doomed = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", onEvict: (r) => void evicted.push(...r.map((entry) => entry.message)), rewrite: redisListRewrite({ client: dying, sessionId: id }) });
      await expect(doomed.getMessages()).rejects.toThrow("killed");
      const after = await store.getMessages();
      const inStore = new Set(keys(after));
      expect(keys(original).filter((k) => !inStore.has(k) && !keys(evicted).includes(k))).toEqual([]);
      // Either the old list or the new one, nothing in between.
      expect(after.length === original.length || after.some((m) => isOmissionNote(m))).toBe(true);
      const fresh = new CompactingChatMessageHistory({ history: (await kinds[1]!.open(id)) as RedisChatMessageHistory, targetTokens: TARGET, mode: "commit" });
      const done = await fresh.getMessages();
      expect(done.filter((m) => isOmissionNote(m))).toHaveLength(1);
      expect(keys(await store.getMessages())).toEqual(keys(done));
      cases += 1;
    }
    expect(cases).toBe(3);
  });
});

const comparableData = (message: BaseMessage) => mapChatMessagesToStoredMessages([message])[0]!.data;

describe("postgresRewrite", () => {
  test("a rewrite waiting on a competitor's locked rows refuses once they are gone", async () => {
    if (!stores.pgUp()) return;
    const id = sessionId("pg-lock");
    const store = (await kinds[2]!.open(id)) as PostgresChatMessageHistory;
    const original = chat(3, "p");
    await store.addMessages(original);
    const rewrite = postgresRewrite(store);
    // The competitor: a rewrite in place (same number of rows, same ids) that has locked the rows and not yet committed.
    const competitor = await stores.pool().connect();
    await competitor.query("BEGIN");
    await competitor.query(`SELECT id FROM ${PG_TABLE} WHERE session_id = $1 ORDER BY id FOR UPDATE`, [id]);
    const { rows } = await competitor.query(`DELETE FROM ${PG_TABLE} WHERE id = (SELECT min(id) FROM ${PG_TABLE} WHERE session_id = $1) RETURNING id, message`, [id]);
    const replaced = new SystemMessage("a shorter system prompt, written by the competitor");
    await competitor.query(`INSERT INTO ${PG_TABLE} (id, session_id, message) VALUES ($1, $2, $3)`, [rows[0].id, id, { ...comparableData(replaced), type: "system" }]);
    const waiting = rewrite(original.slice(0, 3), [new HumanMessage("x")]);
    await tick(100);
    await competitor.query("COMMIT");
    competitor.release();
    expect(await waiting).toBe(false);
    expect(keys(await store.getMessages())).toEqual(keys([replaced, ...original.slice(1)]));
    // Replacing the oldest two keeps the third behind, and the ids keep it there.
    const current = await store.getMessages();
    expect(await rewrite(current.slice(0, 2), [new HumanMessage("y")])).toBe(true);
    await store.addMessage(new AIMessage("z"));
    expect((await store.getMessages()).map((m) => m.text)).toEqual(["y", ...current.slice(2).map((m) => m.text), "z"]);
    expect(await rewrite([new HumanMessage("not there")], [])).toBe(false);
  });

  test("while a rewrite runs, its rows are locked: a competitor between its read and its delete cannot land", async () => {
    if (!stores.pgUp()) return;
    const id = sessionId("pg-locked");
    const store = (await kinds[2]!.open(id)) as PostgresChatMessageHistory;
    const original = chat(3, "r");
    await store.addMessages(original);
    let competitorLanded: boolean | undefined;
    const racingPool = {
      connect: async () => {
        const client = await stores.pool().connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            if (text.startsWith("DELETE") && competitorLanded === undefined) {
              const competitor = await stores.pool().connect();
              try {
                await competitor.query("BEGIN");
                await competitor.query(`SELECT id FROM ${PG_TABLE} WHERE session_id = $1 ORDER BY id FOR UPDATE NOWAIT`, [id]);
                await competitor.query(`DELETE FROM ${PG_TABLE} WHERE id = (SELECT min(id) FROM ${PG_TABLE} WHERE session_id = $1)`, [id]);
                await competitor.query("COMMIT");
                competitorLanded = true;
              } catch {
                await competitor.query("ROLLBACK");
                competitorLanded = false;
              } finally {
                competitor.release();
              }
            }
            return client.query(text, values);
          },
          release: (destroy?: boolean | Error) => client.release(destroy),
        };
      },
    };
    const rewrite = postgresRewrite({ pool: racingPool, tableName: PG_TABLE, sessionId: id });
    expect(await rewrite(original.slice(0, 3), [new HumanMessage("x")])).toBe(true);
    expect(competitorLanded).toBe(false);
    expect(keys(await store.getMessages())).toEqual(keys([new HumanMessage("x"), ...original.slice(3)]));
  });

  test("a connection that dies at any statement of the transaction loses nothing; a fresh instance finishes the job", async () => {
    if (!stores.pgUp()) return;
    let faults = 0;
    for (let failAt = 0; failAt < 6; failAt += 1) {
      for (const landsFirst of [false, true]) {
        const id = sessionId(`pg-kill-${failAt}-${landsFirst}`);
        const store = (await kinds[2]!.open(id)) as PostgresChatMessageHistory;
        const original = chat(12, "q");
        await store.addMessages(original);
        let statement = 0;
        const dyingPool = {
          connect: async () => {
            const client = await stores.pool().connect();
            return {
              query: async (text: string, values?: unknown[]) => {
                const index = statement++;
                if (index !== failAt) return client.query(text, values);
                faults += 1;
                if (landsFirst) await client.query(text, values);
                throw new Error("connection lost");
              },
              release: (destroy?: boolean | Error) => client.release(destroy),
            };
          },
        };
        const evicted: BaseMessage[] = [];
        const doomed = new CompactingChatMessageHistory({
          history: store,
          targetTokens: TARGET,
          mode: "commit",
          onEvict: (r) => void evicted.push(...r.map((entry) => entry.message)),
          rewrite: postgresRewrite({ pool: dyingPool, tableName: PG_TABLE, sessionId: id }),
        });
        const failed = await doomed.getMessages().then(
          () => false,
          () => true,
        );
        const after = await store.getMessages();
        const inStore = new Set(keys(after));
        expect(keys(original).filter((k) => !inStore.has(k) && !keys(evicted).includes(k))).toEqual([]);
        if (failed) expect(after.length === original.length || after.some((m) => isOmissionNote(m))).toBe(true);
        const done = await new CompactingChatMessageHistory({ history: (await kinds[2]!.open(id)) as PostgresChatMessageHistory, targetTokens: TARGET, mode: "commit" }).getMessages();
        expect(done.filter((m) => isOmissionNote(m))).toHaveLength(1);
        expect(keys(await store.getMessages())).toEqual(keys(done));
      }
    }
    diagnostic(`postgres kill injection: ${faults} faults injected over 12 cases`);
    expect(faults).toBeGreaterThanOrEqual(10);
  });
});
