/**
 * The offloading stage, its store helpers and its reader tool, one rule per
 * test (survivors and unreached mutants of the mutation run over
 * `tool-result-offload.ts`, `offload-store.ts` and `offload-reader.ts`). The
 * suite in `compactors/tool-result-offload` runs the stage end to end on
 * InMemoryStore and PostgresStore; here each boundary is pinned on its own:
 * where the loop stops, the size thresholds, which step a result belongs to,
 * what text counts as offloadable, the reference's wording, what is stored,
 * and the reader's paging.
 */
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { createHash } from "node:crypto";
import {
  createOffloadReaderTool,
  DEFAULT_OFFLOAD_NAMESPACE,
  OFFLOAD_READER_TOOL_NAME,
  sharedTokenCountCache,
  ToolResultOffloadCompactor,
} from "../../src";
import type { OffloadStore, ToolResultOffloadCompactorOptions } from "../../src";
import { assertOffloadStore, checkedNamespace, offloadKey } from "../../src/compactors/offload-store";
import { abortedSignal, answer, calling, human, lengthCounter, result, system, tokens, x } from "../support/stages";

/** A tool result without a call id, of `n` tokens. */
const idless = (n: number, label: string) => new ToolMessage({ tool_call_id: "", name: "lookup", content: x(n, label) });

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);

/** A store that records every write, over an InMemoryStore. */
function recordingStore(fail: (key: string) => boolean = () => false) {
  const inner = new InMemoryStore();
  const writes: { namespace: string[]; key: string; value: Record<string, unknown> }[] = [];
  const store: OffloadStore = {
    put: async (namespace, key, value) => {
      if (fail(key)) throw new Error(`cannot write ${key}`);
      writes.push({ namespace, key, value });
      await inner.put(namespace, key, value);
    },
    get: (namespace, key) => inner.get(namespace, key),
  };
  return { store, writes };
}

/** The stage with a short preview, so that the reference to a result of 300 tokens is smaller than it. */
const stage = (store: OffloadStore, options: Partial<ToolResultOffloadCompactorOptions> = {}) =>
  new ToolResultOffloadCompactor({ store, cache: null, previewChars: 20, ...options });

/** Call ids of the results the stage replaced. */
const offloaded = (output: readonly BaseMessage[] | null, input: readonly BaseMessage[]) =>
  output === null ? null : output.flatMap((message, index) => (message !== input[index] ? [(message as ToolMessage).tool_call_id] : []));

/** system, task, then one step per size, each with one result of that many tokens, then a final answer. */
function run(sizes: number[]): BaseMessage[] {
  const messages: BaseMessage[] = [system(), human()];
  sizes.forEach((size, i) => messages.push(calling([`c${i}`]), result(`c${i}`, size)));
  messages.push(answer());
  return messages;
}

describe("ToolResultOffloadCompactor: arguments", () => {
  const store = new InMemoryStore();

  test.each([null, [], "store", undefined])("options %p are a TypeError naming them", (options) => {
    const make = () => new ToolResultOffloadCompactor(options as unknown as ToolResultOffloadCompactorOptions);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(/^ToolResultOffloadCompactor options must be an object with a store, got /);
  });

  test("each bad option names itself, with the right error type", () => {
    const make = (options: Partial<ToolResultOffloadCompactorOptions>) => () => new ToolResultOffloadCompactor({ store, ...options });
    expect(make({ store: null as never })).toThrow(new TypeError("`store` must be a LangGraph BaseStore (an object with put() and get()), got null"));
    expect(make({ store: { put: async () => undefined } as never })).toThrow(/^`store` must be a LangGraph BaseStore/);
    expect(make({ store: { get: async () => null } as never })).toThrow(/^`store` must be a LangGraph BaseStore/);
    expect(make({ store: { put: 1, get: async () => null } as never })).toThrow(/^`store` must be/);
    expect(make({ minKeepSteps: 1.5 })).toThrow(new RangeError("`minKeepSteps` must be a whole number of at least 1, got 1.5"));
    expect(make({ minTokens: -1 })).toThrow(RangeError);
    expect(make({ minTokens: "9" as never })).toThrow(TypeError);
    expect(make({ minTokens: -1 })).toThrow(/^`minTokens` must be/);
    expect(make({ previewChars: 2.5 })).toThrow(/^`previewChars` must be a whole number of at least 0/);
    expect(make({ protect: "c0" as never })).toThrow(new TypeError("`protect` must be a function (message, index) => boolean, got \"c0\""));
    expect(make({ cache: "shared" as never })).toThrow(TypeError);
    expect(make({ cache: "shared" as never })).toThrow(/cache/);
    // The smallest values allowed are allowed.
    expect(() => new ToolResultOffloadCompactor({ store, minKeepSteps: 1, minTokens: 0, previewChars: 0 })).not.toThrow();
  });

  test("the documented defaults, and a namespace copied and frozen", () => {
    const compactor = new ToolResultOffloadCompactor({ store });
    expect([compactor.minKeepSteps, compactor.minTokens, compactor.previewChars, compactor.protect]).toEqual([1, 200, 200, undefined]);
    expect(compactor.cache).toBe(sharedTokenCountCache);
    expect(compactor.store).toBe(store);
    expect(compactor.namespace).toEqual(DEFAULT_OFFLOAD_NAMESPACE);
    const labels = ["mine", "results"];
    const own = new ToolResultOffloadCompactor({ store, namespace: labels, cache: null });
    labels.push("later");
    expect(own.namespace).toEqual(["mine", "results"]);
    expect(Object.isFrozen(own.namespace)).toBe(true);
    expect(own.cache).toBeNull();
  });

  test("a bad conversation, target or options object is refused before anything is written", async () => {
    const { store: recording, writes } = recordingStore();
    const compactor = stage(recording, { minTokens: 0 });
    await expect(compactor.compact("messages" as never, 0, lengthCounter)).rejects.toThrow(TypeError);
    await expect(compactor.compact(run([300]), -1, lengthCounter)).rejects.toThrow(/^`targetTokens` must be/);
    await expect(compactor.compact(run([300]), 0, lengthCounter, "fast" as never)).rejects.toThrow(new TypeError('compaction options must be an object, got "fast"'));
    const reason = new Error("already stopped");
    await expect(compactor.compact(run([300, 300]), 0, lengthCounter, { signal: abortedSignal(reason) })).rejects.toBe(reason);
    expect(writes).toEqual([]);
  });
});

describe("ToolResultOffloadCompactor: what it offloads and when it stops", () => {
  test("a conversation at exactly the target is left alone; one token over is compacted", async () => {
    const { store, writes } = recordingStore();
    const messages = run([300, 300, 300]);
    const atTarget = await stage(store).compactWithReport(messages, tokens(messages), lengthCounter);
    expect(atTarget.messages).toBeNull();
    expect([atTarget.tokensBefore, atTarget.tokensAfter]).toEqual([tokens(messages), tokens(messages)]);
    expect(writes).toEqual([]);
    const over = await stage(store).compact(messages, tokens(messages) - 1, lengthCounter);
    expect(offloaded(over, messages)).toEqual(["c0"]);
  });

  test("it stops as soon as the conversation is at the target, not one result later", async () => {
    const { store, writes } = recordingStore();
    const messages = run([300, 300, 300]);
    const first = await stage(store).compactWithReport(messages, 0, lengthCounter);
    // The saving of one offload, read off the first result's reference.
    const oneSaving = messages[3]!.content.length - (first.messages![3]!.content as string).length;
    writes.length = 0;
    const exact = await stage(store).compactWithReport(messages, tokens(messages) - oneSaving, lengthCounter);
    expect(offloaded(exact.messages, messages)).toEqual(["c0"]);
    expect(exact.tokensAfter).toBe(tokens(messages) - oneSaving);
    expect(writes.map((write) => write.key)).toEqual([`c0_${digest(messages[3]!.content as string)}`]);
    const oneMore = await stage(store).compact(messages, tokens(messages) - oneSaving - 1, lengthCounter);
    expect(offloaded(oneMore, messages)).toEqual(["c0", "c1"]);
  });

  test("only results of more than minTokens are offloaded", async () => {
    const { store } = recordingStore();
    const messages = run([400, 401, 500]);
    expect(offloaded(await stage(store, { minTokens: 400 }).compact(messages, 0, lengthCounter), messages)).toEqual(["c1"]);
    expect(offloaded(await stage(store, { minTokens: 401 }).compact(messages, 0, lengthCounter), messages)).toBeNull();
    expect(offloaded(await stage(store, { minTokens: 399 }).compact(messages, 0, lengthCounter), messages)).toEqual(["c0", "c1"]);
    // By default, more than 200.
    const small = run([200, 300, 10]);
    expect(offloaded(await stage(store, { previewChars: 0 }).compact(small, 0, lengthCounter), small)).toEqual(["c1"]);
  });

  test("a reference exactly as large as the result is not used; one token smaller is", async () => {
    const { store } = recordingStore();
    const messages = run([1000, 10]);
    // The reference grows by one token per preview character (until the preview is the whole text).
    const probe = await stage(store, { previewChars: 10 }).compact(messages, 0, lengthCounter);
    const at10 = (probe![3]!.content as string).length;
    const equal = 10 + (1000 - at10);
    const same = await stage(store, { previewChars: equal }).compactWithReport(messages, 0, lengthCounter);
    expect(same.messages).toBeNull();
    const smaller = await stage(store, { previewChars: equal - 1 }).compactWithReport(messages, 0, lengthCounter);
    expect((smaller.messages![3]!.content as string).length).toBe(999);
    expect([smaller.tokensBefore - smaller.tokensAfter, smaller.tokensAfter]).toEqual([1, tokens(smaller.messages!)]);
  });

  test("a call reusing an earlier call's id joins its exchange: the newest step is the whole exchange", async () => {
    // Exchanges: x (2, 3), and a (asked at 4 and again at 5, with b) with its results. The newest step is a's
    // exchange, so both of its results stay and only x's result goes.
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["x"]), result("x", 300),
      calling(["a"]),
      new AIMessage({ content: "again", tool_calls: ["a", "b"].map((id) => ({ id, name: "lookup", args: {}, type: "tool_call" as const })) }),
      result("a", 300), result("b", 300),
    ];
    expect(offloaded(await stage(recordingStore().store).compact(messages, 0, lengthCounter), messages)).toEqual(["x"]);
  });

  test("a result whose id nobody asked for is a step of its own, even right after a call", async () => {
    const messages: BaseMessage[] = [system(), human(), calling(["a"]), result("a", 300), result("ghost", 300)];
    // The ghost result is the newest step: it stays, and a's result goes.
    expect(offloaded(await stage(recordingStore().store).compact(messages, 0, lengthCounter), messages)).toEqual(["a"]);
  });

  test("a result without an id belongs to the call it follows; one that follows no call, or a call-less reply, is a step of its own", async () => {
    const afterCall: BaseMessage[] = [
      system(), human(),
      calling(["p"]), result("p", 300),
      calling(["q", "r"]), idless(300, "Q"), idless(300, "R"),
    ];
    // The two id-less results are the newest step's: only p's result goes.
    expect(offloaded(await stage(recordingStore().store).compact(afterCall, 0, lengthCounter), afterCall)).toEqual(["p"]);

    const afterReply: BaseMessage[] = [
      system(), human(),
      calling(["p"]), result("p", 300),
      new AIMessage("no calls here"), idless(300, "L1"),
      new HumanMessage("go on"), idless(300, "L2"),
    ];
    // Each loose result is its own step; the newest (L2) stays, p's result and L1 go.
    const out = await stage(recordingStore().store).compact(afterReply, 0, lengthCounter);
    expect(out!.map((message, index) => message !== afterReply[index])).toEqual([false, false, false, true, false, true, false, false]);
  });

  test("results standing first, before any message that could have asked for them, are a step each", async () => {
    const leading: BaseMessage[] = [
      idless(300, "L1"),
      idless(300, "L2"),
      calling(["c"]), result("c", 300),
    ];
    // Steps, newest first: c's (2), L2's (1), L1's (0). Keeping two, only L1 goes.
    expect(offloaded(await stage(recordingStore().store, { minKeepSteps: 2 }).compact(leading, 0, lengthCounter), leading)).toEqual([""]);
  });

  test("results without an id right after a call at the very start belong to it", async () => {
    const messages: BaseMessage[] = [calling(["p", "q"]), idless(300, "P"), idless(300, "Q"), calling(["r"]), result("r", 300)];
    // Two steps: the first call's (both results) and r's. Keeping two, nothing goes.
    expect(await stage(recordingStore().store, { minKeepSteps: 2 }).compact(messages, 0, lengthCounter)).toBeNull();
  });

  test("two results without an id after the user, or after a reply without calls, are a step each", async () => {
    for (const before of [new HumanMessage("go on"), new AIMessage("no calls")]) {
      const messages: BaseMessage[] = [system(), human(), before, idless(300, "L1"), idless(300, "L2")];
      // The newest step is L2 alone: L1 goes.
      const out = await stage(recordingStore().store).compact(messages, 0, lengthCounter);
      expect(out!.map((message, index) => message !== messages[index])).toEqual([false, false, false, true, false]);
    }
  });

  test("minKeepSteps counts steps, newest first", async () => {
    const messages = run([300, 300, 300, 300]);
    const { store } = recordingStore();
    expect(offloaded(await stage(store, { minKeepSteps: 3 }).compact(messages, 0, lengthCounter), messages)).toEqual(["c0"]);
    expect(offloaded(await stage(store, { minKeepSteps: 4 }).compact(messages, 0, lengthCounter), messages)).toBeNull();
  });

  test("text blocks and plain strings in block content are offloaded as one text; any other block keeps the result", async () => {
    const { store, writes } = recordingStore();
    const blocks = (content: unknown[]) => new ToolMessage({ tool_call_id: "b", name: "lookup", content: content as never });
    const text = x(400, "B");
    const mixed = [system(), human(), calling(["b"]), blocks([{ type: "text", text }, "tail"]), calling(["z"]), result("z", 10)];
    // Block content counts as 0 under lengthCounter, so count it as its text.
    const counter = (list: BaseMessage[]) =>
      list.reduce((sum, m) => sum + (typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length), 0);
    const out = await stage(store).compact(mixed, 0, counter);
    expect(offloaded(out, mixed)).toEqual(["b"]);
    expect(writes[0]!.value).toEqual({ content: `${text}\ntail`, tool_call_id: "b", tool_name: "lookup", chars: 405 });
    expect(writes[0]!.key).toBe(`b_${digest(`${text}\ntail`)}`);

    for (const other of [
      [{ type: "text", text }, { type: "image_url", image_url: { url: "data:," } }],
      [{ type: "text", text: 42 }, { type: "text", text }],
      [null, { type: "text", text }],
      [{ type: "reasoning", text }],
    ]) {
      const list = [system(), human(), calling(["b"]), blocks(other), calling(["z"]), result("z", 10)];
      expect(await stage(store).compact(list, 0, counter)).toBeNull();
    }
    expect(writes).toHaveLength(1);
  });
});

describe("ToolResultOffloadCompactor: the reference, the stored original and the stand-in", () => {
  test("the reference names the tool, the size, the reader and the key, and shows the preview", async () => {
    const { store } = recordingStore();
    const messages = run([300, 10]);
    const text = messages[3]!.content as string;
    const key = `c0_${digest(text)}`;
    const out = await stage(store, { previewChars: 20 }).compact(messages, 0, lengthCounter);
    expect(out![3]!.content).toBe(
      `[The result of \`lookup\` (300 characters) was moved out of the conversation to free up context. ` +
        `Read it with the \`${OFFLOAD_READER_TOOL_NAME}\` tool, key ${JSON.stringify(key)} (use offset and length for long results).` +
        ` It begins:\n${text.slice(0, 20)}…]`,
    );
  });

  test("no preview, a preview of the whole text, and a result without a name", async () => {
    const { store, writes } = recordingStore();
    const messages = run([300, 10]);
    const none = (await stage(store, { previewChars: 0 }).compact(messages, 0, lengthCounter))![3]!.content as string;
    expect(none.endsWith("(use offset and length for long results).]")).toBe(true);
    expect(none).not.toContain("It begins");

    const nameless: BaseMessage[] = [system(), human(), calling(["n"]), new ToolMessage({ tool_call_id: "n", content: x(300, "N") }), calling(["z"]), result("z", 10)];
    const unnamed = (await stage(store, { previewChars: 0 }).compact(nameless, 0, lengthCounter))![3]!.content as string;
    expect(unnamed.startsWith("[The result of `this tool` (300 characters)")).toBe(true);
    expect(writes.at(-1)!.value).toEqual({ content: x(300, "N"), tool_call_id: "n", tool_name: null, chars: 300 });

    // A preview of the whole text shows it with no ellipsis. The reference then holds more than the text, so only a
    // counter that charges references less than their text lets it be used.
    const cheapReferences = (list: BaseMessage[]) =>
      list.reduce((sum, m) => sum + ("compaction" in m.response_metadata ? 1 : lengthCounter([m])), 0);
    const short = run([60, 10]);
    const wholeText = short[3]!.content as string;
    const whole = (await stage(store, { previewChars: 60, minTokens: 0 }).compact(short, 0, cheapReferences))![3]!.content as string;
    expect(whole.endsWith(`It begins:\n${wholeText}]`)).toBe(true);
    const cut = (await stage(store, { previewChars: 59, minTokens: 0 }).compact(short, 0, cheapReferences))![3]!.content as string;
    expect(cut.endsWith(`It begins:\n${wholeText.slice(0, 59)}…]`)).toBe(true);
    // Counted by characters, such a reference is larger than the result, and is not used.
    expect(await stage(store, { previewChars: 60, minTokens: 0 }).compact(short, 0, lengthCounter)).toBeNull();
  });

  test("a result without a call id is stored under its digest alone, with a null call id", async () => {
    const { store, writes } = recordingStore();
    const text = x(300, "U");
    const messages: BaseMessage[] = [system(), human(), calling(["u"]), new ToolMessage({ tool_call_id: "", name: "lookup", content: text }), calling(["z"]), result("z", 10)];
    const out = await stage(store).compact(messages, 0, lengthCounter);
    expect(writes.map((write) => [write.key, write.value.tool_call_id])).toEqual([[digest(text), null]]);
    expect((out![3]!.response_metadata as { compaction: { key: string } }).compaction.key).toBe(digest(text));
    expect(writes[0]!.namespace).toEqual([...DEFAULT_OFFLOAD_NAMESPACE]);
  });

  test("the stand-in keeps id, call id, name, status, additional_kwargs and other metadata, and copies them", async () => {
    const { store } = recordingStore();
    const kwargs = { trace: "t1" };
    const original = new ToolMessage({
      tool_call_id: "k", name: "fetch", id: "msg-k", status: "success", content: x(300, "K"),
      additional_kwargs: kwargs, response_metadata: { provider: "p" },
    });
    const messages: BaseMessage[] = [system(), human(), calling(["k"], 10, "fetch"), original, calling(["z"]), result("z", 10)];
    const report = await stage(store).compactWithReport(messages, 0, lengthCounter);
    const standIn = report.messages![3] as ToolMessage;
    expect([standIn.id, standIn.tool_call_id, standIn.name, standIn.status]).toEqual(["msg-k", "k", "fetch", "success"]);
    expect(standIn.additional_kwargs).toEqual({ trace: "t1" });
    expect(standIn.additional_kwargs).not.toBe(kwargs);
    expect(standIn.response_metadata).toEqual({ provider: "p", compaction: { strategy: "tool_result_offloading", original_tokens: 300, key: `k_${digest(x(300, "K"))}` } });
    expect(report.rewritten).toEqual([{ original, replacement: standIn }]);
    expect([report.removed, report.added, report.note, report.stepsTrimmed, report.keptCount]).toEqual([[], [], null, false, messages.length]);
    expect(report.stages).toHaveLength(1);
    expect(report.stages[0]!.strategy).toBe("tool_result_offloading");

    // Without an id or a status, none is made up.
    const bare = new ToolMessage({ tool_call_id: "k", content: x(300, "K") });
    const out = await stage(store).compact([system(), human(), calling(["k"]), bare, calling(["z"]), result("z", 10)], 0, lengthCounter);
    expect([out![3]!.id, (out![3] as ToolMessage).status, (out![3] as ToolMessage).name]).toEqual([bare.id, bare.status, bare.name]);
  });

  test("when every write fails nothing is offloaded: the unchanged report", async () => {
    const { store, writes } = recordingStore(() => true);
    const messages = run([300, 300, 10]);
    const report = await stage(store).compactWithReport(messages, 0, lengthCounter);
    expect(report.messages).toBeNull();
    expect([report.tokensBefore, report.tokensAfter, report.rewritten.length]).toEqual([tokens(messages), tokens(messages), 0]);
    expect(writes).toEqual([]);
  });

  test("a store whose put is synchronous (returns no promise) is written to", async () => {
    const inner = new InMemoryStore();
    const keys: string[] = [];
    const store = {
      put: (namespace: string[], key: string, value: Record<string, unknown>) => {
        keys.push(key);
        void inner.put(namespace, key, value);
      },
      get: (namespace: string[], key: string) => inner.get(namespace, key),
    } as unknown as OffloadStore;
    const messages = run([300, 300, 10]);
    expect(offloaded(await stage(store).compact(messages, 0, lengthCounter), messages)).toEqual(["c0", "c1"]);
    // With a signal too (the write is then raced against it).
    const signal = new AbortController().signal;
    expect(offloaded(await stage(store).compact(messages, 0, lengthCounter, { signal }), messages)).toEqual(["c0", "c1"]);
    expect(keys).toHaveLength(4);
  });

  test("a store whose put throws synchronously is a failed write, not a crash", async () => {
    const inner = new InMemoryStore();
    const store: OffloadStore = {
      put: (namespace, key, value) => {
        if (key.startsWith("c0_")) throw new Error("sync failure");
        return inner.put(namespace, key, value);
      },
      get: (namespace, key) => inner.get(namespace, key),
    };
    const messages = run([300, 300, 10]);
    expect(offloaded(await stage(store).compact(messages, 0, lengthCounter), messages)).toEqual(["c1"]);
  });

  test("an abort while a write fails rejects with the signal's reason instead of going on", async () => {
    const controller = new AbortController();
    const reason = new Error("user cancelled");
    const { store, writes } = recordingStore();
    const failing: OffloadStore = {
      put: async (namespace, key, value) => {
        if (key.startsWith("c0_")) {
          controller.abort(reason);
          throw new Error("write failed");
        }
        await store.put(namespace, key, value);
      },
      get: store.get,
    };
    await expect(stage(failing).compact(run([300, 300, 300, 10]), 0, lengthCounter, { signal: controller.signal })).rejects.toBe(reason);
    expect(writes).toEqual([]);
  });

  test("an abort while the conversation is counted rejects before anything is written", async () => {
    const controller = new AbortController();
    const reason = new Error("stop counting");
    const { store, writes } = recordingStore();
    const counter = async (list: BaseMessage[]) => {
      controller.abort(reason);
      return lengthCounter(list);
    };
    await expect(stage(store).compact(run([300, 300, 10]), 0, counter, { signal: controller.signal })).rejects.toBe(reason);
    // Also when the conversation turns out to fit: the caller asked to stop, so no answer is given.
    const later = new AbortController();
    const countThenAbort = async (list: BaseMessage[]) => {
      later.abort(reason);
      return lengthCounter(list);
    };
    await expect(stage(store).compact(run([300, 300, 10]), 10_000, countThenAbort, { signal: later.signal })).rejects.toBe(reason);
    expect(writes).toEqual([]);
  });
});

describe("offload store helpers", () => {
  test("a store needs put and get as functions", () => {
    const functionWithMethods = Object.assign(() => undefined, { put() {}, get() {} });
    for (const bad of [undefined, null, 7, {}, { put() {} }, { get() {} }, { put: 1, get() {} }, { put() {}, get: "x" }, functionWithMethods]) {
      expect(() => assertOffloadStore(bad)).toThrow(TypeError);
    }
    expect(() => assertOffloadStore({ put() {}, get() {} })).not.toThrow();
  });

  test("a namespace is a non-empty array of non-empty labels without periods, returned as a copy", () => {
    expect(() => checkedNamespace("a")).toThrow(new TypeError('`namespace` must be an array of strings, got "a"'));
    expect(() => checkedNamespace(["a", 1])).toThrow(new TypeError('`namespace` must be an array of strings, got an array of 2'));
    expect(() => checkedNamespace([])).toThrow(new RangeError("`namespace` must hold at least one label, none empty or with a period, got []"));
    expect(() => checkedNamespace(["a", ""])).toThrow(RangeError);
    expect(() => checkedNamespace(["a", "b.c"])).toThrow(RangeError);
    const labels = ["a", "b"];
    const copy = checkedNamespace(labels);
    expect(copy).toEqual(["a", "b"]);
    expect(copy).not.toBe(labels);
  });

  test("a key is the call id and 16 hex digits of the text's SHA-256; without a call id, the digits alone", () => {
    expect(offloadKey("call-1", "hello")).toBe(`call-1_${digest("hello")}`);
    expect(digest("hello")).toBe("2cf24dba5fb0a30e");
    expect(offloadKey(undefined, "hello")).toBe("2cf24dba5fb0a30e");
    expect(offloadKey("", "hello")).toBe("2cf24dba5fb0a30e");
    expect(offloadKey("call-1", "hellO")).not.toBe(offloadKey("call-1", "hello"));
  });
});

describe("the offload reader tool", () => {
  const namespace = ["reader", "rules"];
  async function stored(text: string) {
    const store = new InMemoryStore();
    await store.put(namespace, "k", { content: text, tool_call_id: "c", tool_name: "t", chars: text.length });
    return store;
  }

  test("bad options are typed errors naming the value", () => {
    const store = new InMemoryStore();
    expect(() => createOffloadReaderTool(null as never)).toThrow(new TypeError("createOffloadReaderTool options must be an object, got null"));
    expect(() => createOffloadReaderTool("store" as never)).toThrow(new TypeError('createOffloadReaderTool options must be an object, got "store"'));
    expect(() => createOffloadReaderTool({ store: {} as never })).toThrow(/^`store` must be/);
    expect(() => createOffloadReaderTool({ store, namespace: [] })).toThrow(RangeError);
    for (const bad of [1.5, 0, -3, "10"]) {
      expect(() => createOffloadReaderTool({ store, defaultLength: bad as never })).toThrow(RangeError);
      expect(() => createOffloadReaderTool({ store, defaultLength: bad as never })).toThrow(/^`defaultLength` must be a whole number of at least 1, got /);
    }
    expect(() => createOffloadReaderTool({ store, defaultLength: 1 })).not.toThrow();
  });

  test("without a length it reads defaultLength characters (4000 by default), and says where to go on", async () => {
    const text = x(5000, "R");
    const reader = createOffloadReaderTool({ store: await stored(text), namespace });
    expect(await reader.invoke({ key: "k" })).toBe(`[characters 0 to 4000 of 5000; more follows: call again with offset 4000]\n${text.slice(0, 4000)}`);
    const small = createOffloadReaderTool({ store: await stored(text), namespace, defaultLength: 7 });
    expect(await small.invoke({ key: "k", offset: 10 })).toBe(`[characters 10 to 17 of 5000; more follows: call again with offset 17]\n${text.slice(10, 17)}`);
    expect(reader.description).toContain("offset");
    // Every argument is described to the model, and no other argument is accepted.
    const properties = (reader.schema as { properties: Record<string, { description?: string }> }).properties;
    expect(Object.keys(properties)).toEqual(["key", "offset", "length"]);
    for (const property of Object.values(properties)) expect(property.description!.length).toBeGreaterThan(10);
    await expect(reader.invoke({ key: "k", page: 2 } as never)).rejects.toThrow();
    expect(JSON.stringify(small.schema)).toContain("default 7");
  });

  test("a page that reaches the end says so; an offset past the end reads nothing", async () => {
    const text = x(100, "E");
    const reader = createOffloadReaderTool({ store: await stored(text), namespace });
    expect(await reader.invoke({ key: "k", offset: 60, length: 40 })).toBe(`[characters 60 to 100 of 100; end of the result]\n${text.slice(60)}`);
    expect(await reader.invoke({ key: "k", offset: 60, length: 39 })).toBe(`[characters 60 to 99 of 100; more follows: call again with offset 99]\n${text.slice(60, 99)}`);
    expect(await reader.invoke({ key: "k", offset: 500 })).toBe("[characters 100 to 100 of 100; end of the result]\n");
  });

  test("a missing key, or a stored value without text, is reported, not thrown", async () => {
    const store = await stored("abc");
    await store.put(namespace, "odd", { content: 42 });
    const reader = createOffloadReaderTool({ store, namespace });
    expect(await reader.invoke({ key: "odd" })).toBe('No offloaded tool result is stored under key "odd".');
    expect(await reader.invoke({ key: "gone" })).toBe('No offloaded tool result is stored under key "gone".');
    // A store answering with an item that has no value.
    const bare = createOffloadReaderTool({ store: { put: async () => undefined, get: async () => ({}) as never }, namespace });
    expect(await bare.invoke({ key: "k" })).toBe('No offloaded tool result is stored under key "k".');
    // It reads the namespace it was given, not the default one.
    expect(await createOffloadReaderTool({ store }).invoke({ key: "k" })).toBe('No offloaded tool result is stored under key "k".');
  });
});
