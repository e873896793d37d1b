/**
 * CompactingChatMessageHistory over real stores: InMemoryChatMessageHistory
 * and RedisChatMessageHistory on the real Redis server, with fault injection
 * during commits and parallel writers appending while compactions run.
 */
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { RedisChatMessageHistory } from "@langchain/redis";
import { createClient } from "redis";
import { approximateTokenCounter, compactionNoteMetadata, CompactingChatMessageHistory, isCompactionNote, redisListRewrite } from "../../src";
import { REDIS_URL, requireServer } from "../support/servers";
import { ScriptedAgentModel } from "../support/scripted-model-agent";

const TARGET = 300;

const key = (message: BaseMessage) => JSON.stringify(mapChatMessagesToStoredMessages([message])[0]);
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
    expect(approximateTokenCounter(seen.filter((m) => !isCompactionNote(m)))).toBeLessThanOrEqual(TARGET);
    expect(seen.filter((m) => isCompactionNote(m))).toHaveLength(1);
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
        evicted.push(...removed);
      },
    });
    const seen = await history.getMessages();
    expect(storeDuringEvict).toEqual(keys(original));
    const stored = await store.getMessages();
    expect(keys(stored)).toEqual(keys(seen));
    // Nothing vanished: every original message is kept or was evicted, exactly once.
    expect([...keys(evicted), ...keys(stored.filter((m) => !isCompactionNote(m)))].sort()).toEqual(keys(original).sort());
    expect(compactionNoteMetadata(stored.find((m) => isCompactionNote(m))!)?.removed_messages).toBe(evicted.length);
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

  test("works in RunnableWithMessageHistory: the model gets the compacted history, the store keeps all", async () => {
    const store = new InMemoryChatMessageHistory();
    const model = new ScriptedAgentModel({ reply: (_messages, call) => `reply ${call}: ${"it will be sunny and mild. ".repeat(4)}` });
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
    expect(model.calls.some((call) => call.messages.some((m) => isCompactionNote(m)))).toBe(true);
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

describe("fault injection during commits", () => {
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
        const history = new CompactingChatMessageHistory({ history: store, targetTokens: TARGET, mode: "commit", onEvict: (removed) => void evicted.push(...removed) });
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
    console.log(`fault injection: ${cases} cases, ${faults} faults injected, ${casesRelyingOnPending} left kept messages only in the pending rewrite`);
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
    const note = committed.find((m) => isCompactionNote(m))!;

    // A fresh client and wrapper: what another process would do.
    const reread = await (await redisStore(id)).getMessages();
    expect(keys(reread)).toEqual(keys(committed));
    const readNote = reread.find((m) => isCompactionNote(m));
    expect(readNote).toBeInstanceOf(HumanMessage);
    expect(compactionNoteMetadata(readNote!)).toEqual(compactionNoteMetadata(note));

    const viewId = session("view");
    const viewStore = await redisStore(viewId);
    await viewStore.addMessages(chat(12, "v"));
    const first = await new CompactingChatMessageHistory({ history: viewStore, targetTokens: TARGET }).getMessages();
    const second = await new CompactingChatMessageHistory({ history: await redisStore(viewId), targetTokens: TARGET }).getMessages();
    expect(keys(second)).toEqual(keys(first));
    expect(first.some((m) => isCompactionNote(m))).toBe(true);
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
        onEvict: (removed) => void evicted.push(...removed),
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
      expect(retried.filter((m) => isCompactionNote(m))).toHaveLength(1);
    }
    console.log(`redis fault injection: ${faults} faults injected`);
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
      onEvict: (removed) => void evicted.push(...removed),
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
    console.log(
      `parallel writers: ${written.length} concurrent appends, ${compactions} compactions, ${landed} rewrites landed, ${refused} refused (list changed), ${written.length - lost.length} appends survived`,
    );
    expect(lost).toEqual([]);
    expect(written).toHaveLength(writers * perWriter);
    expect(compactions).toBeGreaterThan(1);
    expect(landed).toBeGreaterThan(1);
  });
});
