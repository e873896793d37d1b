/**
 * ToolResultOffloadCompactor and its reader tool, over
 * LangGraph's InMemoryStore and the real PostgresStore.
 */
import { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createOffloadReaderTool, isCompactionMessage, OFFLOAD_READER_TOOL_NAME, ToolResultOffloadCompactor } from "../../src";
import type { OffloadStore } from "../../src";
import { snapshotMessages } from "../support/conversations";
import { POSTGRES_URL, requireServer } from "../support/servers";
import { answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

const NAMESPACE = ["stages", "offload-test"];

/** system, task, then `n` steps each with one result of `size` characters. */
function agentRun(n: number, size = 1000): BaseMessage[] {
  const messages: BaseMessage[] = [system(), human()];
  for (let i = 0; i < n; i += 1) messages.push(calling([`c${i}`]), result(`c${i}`, size));
  return messages;
}

const offloadedIds = (list: BaseMessage[], input: BaseMessage[]) =>
  list.filter((m, i) => m !== input[i] && m.type === "tool").map((m) => (m as ToolMessage).tool_call_id);
const keyOf = (message: BaseMessage) => (message.response_metadata as { compaction: { key: string } }).compaction.key;

function digest(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
}

async function exercise(store: OffloadStore & { search?: unknown }, namespace: string[]) {
  const messages = agentRun(5);
  const before = snapshotMessages(messages);
  const compactor = new ToolResultOffloadCompactor({ store, namespace, cache: null });
  const report = await compactor.compactWithReport(messages, tokens(messages) - 1, lengthCounter);
  expect(snapshotMessages(messages)).toStrictEqual(before);
  // One offload frees enough: the oldest result only.
  expect(offloadedIds(report.messages!, messages)).toEqual(["c0"]);
  const [{ original, replacement }] = report.rewritten as [{ original: BaseMessage; replacement: ToolMessage }];
  expect(original).toBe(messages[3]);
  const text = original.content as string;
  const key = `c0_${digest(text)}`;
  expect([replacement.id, replacement.tool_call_id, replacement.name]).toEqual([original.id, "c0", "lookup"]);
  expect(replacement.response_metadata).toEqual({ compaction: { strategy: "tool_result_offloading", original_tokens: 1000, key } });
  expect(replacement.content).toContain(JSON.stringify(key));
  expect(replacement.content).toContain(OFFLOAD_READER_TOOL_NAME);
  expect(replacement.content).toContain(text.slice(0, 200));
  expect(replacement.content).not.toContain(text.slice(0, 201));
  expect(report.tokensAfter).toBe(tokens(report.messages!));
  expect((await store.get(namespace, key))?.value).toEqual({ content: text, tool_call_id: "c0", tool_name: "lookup", chars: 1000 });

  // The reader gives the original back, in pages.
  const reader = createOffloadReaderTool({ store, namespace });
  expect(reader.name).toBe(OFFLOAD_READER_TOOL_NAME);
  const whole = String(await reader.invoke({ key }));
  expect(whole.endsWith(text)).toBe(true);
  expect(whole).toContain("characters 0 to 1000 of 1000; end of the result");
  const page = String(await reader.invoke({ key, offset: 100, length: 50 }));
  expect(page.split("\n").slice(1).join("\n")).toBe(text.slice(100, 150));
  expect(page).toContain("call again with offset 150");
  expect(String(await reader.invoke({ key: "nope" }))).toMatch(/No offloaded tool result is stored under key "nope"/);
  // Arguments are checked against the tool's JSON schema before the store is read.
  await expect(reader.invoke({ key, offset: -1 })).rejects.toThrow();
  await expect(reader.invoke({ key: "" })).rejects.toThrow();
  await expect(reader.invoke({ offset: 3 } as unknown as { key: string })).rejects.toThrow();

  // Compacting again writes the same keys (idempotent) and leaves the offloaded result alone.
  const again = await compactor.compactWithReport(messages, 0, lengthCounter);
  expect(offloadedIds(again.messages!, messages)).toEqual(["c0", "c1", "c2", "c3"]);
  expect(keyOf(again.messages![3]!)).toBe(key);
  expect(await compactor.compact(again.messages!, 0, lengthCounter)).toBeNull();
  return { again };
}

describe("ToolResultOffloadCompactor over InMemoryStore", () => {
  test("offloads the oldest results, reads them back, with stable keys and idempotent writes", async () => {
    const store = new InMemoryStore();
    await exercise(store, NAMESPACE);
    const items = await store.search(NAMESPACE, { limit: 100 });
    expect(items).toHaveLength(4);
  });

  test("keys differ for the same call id with different content, and match for the same content", async () => {
    const store = new InMemoryStore();
    const compactor = new ToolResultOffloadCompactor({ store, cache: null });
    const a = await compactor.compact(agentRun(3, 1000), 0, lengthCounter);
    const b = agentRun(3, 1000);
    b[3] = new ToolMessage({ tool_call_id: "c0", name: "lookup", content: "other ".repeat(200) });
    const outB = await compactor.compact(b, 0, lengthCounter);
    const c = await compactor.compact(agentRun(3, 1000), 0, lengthCounter);
    expect(keyOf(a![3]!)).not.toBe(keyOf(outB![3]!));
    expect(keyOf(a![3]!)).toBe(keyOf(c![3]!));
    expect(keyOf(a![3]!).startsWith("c0_")).toBe(true);
  });

  test("the results of the newest minKeepSteps steps stay, all parallel results included", async () => {
    const messages = [...agentRun(2), calling(["p1", "p2"]), result("p1", 1000), result("p2", 1000)];
    const out = await new ToolResultOffloadCompactor({ store: new InMemoryStore(), cache: null }).compact(messages, 0, lengthCounter);
    expect(offloadedIds(out!, messages)).toEqual(["c0", "c1"]);
    const two = await new ToolResultOffloadCompactor({ store: new InMemoryStore(), minKeepSteps: 2, cache: null }).compact(messages, 0, lengthCounter);
    expect(offloadedIds(two!, messages)).toEqual(["c0"]);
  });

  test("errors, small, non-text, already rewritten and protected results stay; a reference that saves nothing is not used", async () => {
    const image = new ToolMessage({ tool_call_id: "c2", name: "lookup", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(4000)}` } }] as never });
    const pruned = new ToolMessage({ tool_call_id: "c3", name: "lookup", content: "p".repeat(1000), response_metadata: { compaction: { strategy: "tool_result_pruning", original_tokens: 2000 } } });
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["c0"]), result("c0", 1000, { status: "error" }),
      calling(["c1"]), result("c1", 200),
      calling(["c2"]), image,
      calling(["c3"]), pruned,
      calling(["c4"]), result("c4", 1000),
      calling(["c5"]), result("c5", 1000),
      calling(["c6"]), result("c6", 1000),
      answer(),
    ];
    const store = new InMemoryStore();
    const out = await new ToolResultOffloadCompactor({ store, cache: null, protect: (m) => (m as ToolMessage).tool_call_id === "c5" }).compact(messages, 0, lengthCounter);
    expect(offloadedIds(out!, messages)).toEqual(["c4"]); // c6 is the newest step
    // A preview as long as the result makes the reference larger than it: nothing offloaded, nothing written.
    const emptyStore = new InMemoryStore();
    const big = await new ToolResultOffloadCompactor({ store: emptyStore, cache: null, minTokens: 0, previewChars: 5000 }).compact(agentRun(3, 300), 0, lengthCounter);
    expect(big).toBeNull();
    expect(await emptyStore.search(["compaction", "tool-results"])).toHaveLength(0);
  });

  test("a result whose write fails stays in context; an abort during a write rejects with its reason", async () => {
    const inner = new InMemoryStore();
    const failing: OffloadStore = {
      put: async (namespace, key, value) => {
        if (key.startsWith("c1_")) throw new Error("disk full");
        await inner.put(namespace, key, value);
      },
      get: (namespace, key) => inner.get(namespace, key),
    };
    const messages = agentRun(4);
    const out = await new ToolResultOffloadCompactor({ store: failing, cache: null }).compact(messages, 0, lengthCounter);
    expect(offloadedIds(out!, messages)).toEqual(["c0", "c2"]);
    expect(out![5]).toBe(messages[5]);

    const controller = new AbortController();
    const reason = new Error("cancelled");
    const hanging: OffloadStore = {
      put: () => {
        controller.abort(reason);
        return new Promise<void>(() => undefined);
      },
      get: async () => null,
    };
    await expect(new ToolResultOffloadCompactor({ store: hanging, cache: null }).compact(messages, 0, lengthCounter, { signal: controller.signal })).rejects.toBe(reason);
  });

  test("offloaded results are compaction messages, and the module needs no LangGraph import", async () => {
    const out = await new ToolResultOffloadCompactor({ store: new InMemoryStore(), cache: null }).compact(agentRun(3), 0, lengthCounter);
    expect(out!.filter(isCompactionMessage)).toHaveLength(2);
    for (const file of ["tool-result-offload.ts", "offload-reader.ts", "offload-store.ts"]) {
      const source = readFileSync(join(__dirname, "../../src/compactors", file), "utf8");
      const imports = [...source.matchAll(/from "([^"]+)"/g)].map((m) => m[1]!);
      expect(imports.filter((name) => !name.startsWith(".") && !name.startsWith("node:") && !name.startsWith("@langchain/core") && name !== "zod/v4")).toEqual([]);
    }
  });

  test("the default namespace is one PostgresStore accepts (no LIKE wildcards)", () => {
    expect(new ToolResultOffloadCompactor({ store: new InMemoryStore() }).namespace).toEqual(["compaction", "tool-results"]);
    for (const label of new ToolResultOffloadCompactor({ store: new InMemoryStore() }).namespace) expect(label).not.toMatch(/[_%\\]/);
  });

  test("bad options are typed errors", () => {
    const store = new InMemoryStore();
    expect(() => new ToolResultOffloadCompactor({} as never)).toThrow(TypeError);
    expect(() => new ToolResultOffloadCompactor({ store: { put() {} } as never })).toThrow(/store/);
    expect(() => new ToolResultOffloadCompactor({ store, namespace: [] })).toThrow(RangeError);
    expect(() => new ToolResultOffloadCompactor({ store, namespace: ["a.b"] })).toThrow(RangeError);
    expect(() => new ToolResultOffloadCompactor({ store, namespace: "x" as never })).toThrow(TypeError);
    expect(() => new ToolResultOffloadCompactor({ store, minKeepSteps: 0 })).toThrow(RangeError);
    expect(() => new ToolResultOffloadCompactor({ store, previewChars: -1 })).toThrow(RangeError);
    expect(() => createOffloadReaderTool({ store, defaultLength: 0 })).toThrow(RangeError);
  });
});

describe("ToolResultOffloadCompactor over PostgresStore", () => {
  const schema = `stages_offload_${randomUUID().replace(/-/g, "")}`;
  let store: PostgresStore | null = null;
  beforeAll(async () => {
    if (!(await requireServer("PostgreSQL", POSTGRES_URL))) return;
    store = PostgresStore.fromConnString(POSTGRES_URL, { schema });
    await store.setup();
  });
  afterAll(async () => {
    if (store === null) return;
    await store.stop();
    // The store's typed API cannot drop its schema; a saver's pool can.
    const saver = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
    await (saver as unknown as { pool: { query(sql: string): Promise<unknown> } }).pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await saver.end();
  });

  test("the same rules hold on a real server", async () => {
    if (store === null) return;
    await exercise(store, ["stages", "offload-pg"]);
    const items = await store.search(["stages", "offload-pg"], { limit: 100 });
    expect(items).toHaveLength(4);
    // The default namespace is accepted by PostgresStore: the write succeeds, so the result is offloaded.
    const byDefault = await new ToolResultOffloadCompactor({ store, cache: null }).compact(agentRun(3), 0, lengthCounter);
    expect(byDefault?.filter(isCompactionMessage)).toHaveLength(2);
  });
});
