/**
 * ToolResultPruningCompactor: one test per rule, with a
 * counter of one token per character so every expectation is worked out by hand.
 */
import { BaseMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, ToolMessage } from "@langchain/core/messages";
import { isCompactionMessage, ToolResultPruningCompactor } from "../../src";
import { snapshotMessages } from "../support/conversations";
import { abortedSignal, agentRun, answer, calling, human, lengthCounter, placeholderFor, result, system, tokens } from "../support/stages";

const pruned = (list: BaseMessage[]) => list.filter((m) => m.type === "tool" && (m.response_metadata as { compaction?: unknown }).compaction !== undefined);

describe("ToolResultPruningCompactor", () => {
  const compactor = new ToolResultPruningCompactor({ cache: null });

  test("prunes oldest first and stops as soon as the target is reached", async () => {
    const messages = agentRun(6);
    const saving = 300 - placeholderFor("lookup").length;
    // One pruning is just enough.
    const one = await compactor.compact(messages, tokens(messages) - saving, lengthCounter);
    expect(one).not.toBeNull();
    expect(pruned(one!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0"]);
    // One token more to free needs the second oldest too, and no other.
    const two = await compactor.compact(messages, tokens(messages) - saving - 1, lengthCounter);
    expect(pruned(two!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0", "c1"]);
    expect(tokens(two!)).toBe(tokens(messages) - 2 * saving);
  });

  test("never prunes the newest minKeepResults results, even when the target is not reached", async () => {
    const messages = agentRun(6);
    const out = await new ToolResultPruningCompactor({ minKeepResults: 2, cache: null }).compact(messages, 0, lengthCounter);
    expect(pruned(out!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0", "c1", "c2", "c3"]);
    const defaults = await compactor.compact(messages, 0, lengthCounter);
    expect(pruned(defaults!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0", "c1", "c2"]);
  });

  test("never prunes the trailing batch of results, however many", async () => {
    const messages = [...agentRun(3, 300, false), calling(["p1", "p2", "p3", "p4"]), result("p1", 300), result("p2", 300), result("p3", 300), result("p4", 300)];
    const out = await new ToolResultPruningCompactor({ minKeepResults: 1, cache: null }).compact(messages, 0, lengthCounter);
    expect(pruned(out!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0", "c1", "c2"]);
  });

  test("leaves error results, small results, rewritten results and skipped results alone", async () => {
    const offloaded = new ToolMessage({
      tool_call_id: "c3",
      name: "lookup",
      content: "x".repeat(300),
      response_metadata: { compaction: { strategy: "tool_result_offloading", original_tokens: 900, key: "k" } },
    });
    const messages: BaseMessage[] = [
      system(),
      human(),
      calling(["c0"]), result("c0", 300, { status: "error" }),
      calling(["c1"]), result("c1", 200), // exactly minTokens: not more than it
      calling(["c2"]), result("c2", 201),
      calling(["c3"]), offloaded,
      calling(["c4"], 10, "read_plan"), result("c4", 300, { name: "read_plan" }),
      calling(["k1"]), result("k1", 300), calling(["k2"]), result("k2", 300), calling(["k3"]), result("k3", 300),
      answer(),
    ];
    const skipping = new ToolResultPruningCompactor({ cache: null, skip: (m) => m.name === "read_plan" });
    const out = await skipping.compact(messages, 0, lengthCounter);
    expect(pruned(out!).filter((m) => !messages.includes(m)).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c2"]);
    // Without `skip`, the read_plan result is prunable too.
    const all = await compactor.compact(messages, 0, lengthCounter);
    expect(pruned(all!).filter((m) => !messages.includes(m)).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c2", "c4"]);
  });

  test("the replacement keeps id, tool_call_id, name and status, records the original size, and the input is untouched", async () => {
    const original = new ToolMessage({ id: "msg-7", tool_call_id: "c0", name: "search", status: "success", content: "r".repeat(400), response_metadata: { model: "m" } });
    const messages = [human(), calling(["c0"], 10, "search"), original, ...agentRun(3).slice(2)];
    const before = snapshotMessages(messages);
    const report = await compactor.compactWithReport(messages, 0, lengthCounter);
    expect(snapshotMessages(messages)).toStrictEqual(before);
    expect(report.strategy).toBe("tool_result_pruning");
    expect(report.removed).toEqual([]);
    expect(report.added).toEqual([]);
    expect(report.rewritten).toHaveLength(1);
    const { original: from, replacement } = report.rewritten[0]!;
    expect(from).toBe(original);
    expect(report.messages![2]).toBe(replacement);
    expect(ToolMessage.isInstance(replacement)).toBe(true);
    const tool = replacement as ToolMessage;
    expect(tool).not.toBe(original);
    expect([tool.id, tool.tool_call_id, tool.name, tool.status]).toEqual(["msg-7", "c0", "search", "success"]);
    expect(tool.content).toBe(placeholderFor("search"));
    expect(tool.response_metadata).toEqual({ model: "m", compaction: { strategy: "tool_result_pruning", original_tokens: 400 } });
    expect(report.tokensBefore).toBe(tokens(messages));
    expect(report.tokensAfter).toBe(tokens(report.messages!));
    expect(report.stages).toEqual([expect.objectContaining({ strategy: "tool_result_pruning", rewritten: report.rewritten })]);
    // Every other message is the same object.
    report.messages!.forEach((m, i) => i !== 2 && expect(m).toBe(messages[i]));
  });

  test("fills {tool_name} (from the call when the result lost its name) and keeps other braces", async () => {
    const nameless = new ToolMessage({ tool_call_id: "w0", content: "z".repeat(500) });
    const messages = [human(), calling(["w0"], 10, "weather"), nameless, ...agentRun(3).slice(2)];
    const custom = new ToolResultPruningCompactor({ cache: null, placeholder: '{"pruned": "{tool_name}", "keep": {braces}}' });
    const out = await custom.compact(messages, 0, lengthCounter);
    expect(out![2]!.content).toBe('{"pruned": "weather", "keep": {braces}}');
  });

  test("a placeholder that would not save tokens is not used, and then the result is null", async () => {
    const messages = agentRun(6, 60);
    const out = await new ToolResultPruningCompactor({ cache: null, minTokens: 0 }).compact(messages, 0, lengthCounter);
    expect(placeholderFor("lookup").length).toBeGreaterThan(60);
    expect(out).toBeNull();
    // The same results with a short placeholder are pruned.
    const short = await new ToolResultPruningCompactor({ cache: null, minTokens: 0, placeholder: "[gone]" }).compact(messages, 0, lengthCounter);
    expect(pruned(short!)).toHaveLength(3);
  });

  test("null when the conversation fits, and when nothing is prunable", async () => {
    const messages = agentRun(6);
    expect(await compactor.compact(messages, tokens(messages), lengthCounter)).toBeNull();
    expect(await compactor.compact(agentRun(3), 0, lengthCounter)).toBeNull();
    const report = await compactor.compactWithReport(agentRun(3), 0, lengthCounter);
    expect(report.messages).toBeNull();
    expect(report.rewritten).toEqual([]);
    expect(report.tokensAfter).toBe(report.tokensBefore);
  });

  test("counts each message once and each replacement once (linear, no recount of the list)", async () => {
    const messages = agentRun(200);
    let calls = 0;
    let counted = 0;
    const counter = (list: BaseMessage[]) => {
      calls += 1;
      counted += list.length;
      return lengthCounter(list);
    };
    const report = await compactor.compactWithReport(messages, 0, counter);
    expect(report.rewritten).toHaveLength(197);
    expect(counted).toBe(messages.length + report.rewritten.length);
    expect(calls).toBe(counted);
  });

  test("protected results, and results of protected calls, are not pruned", async () => {
    const messages = agentRun(6);
    const protect = (m: BaseMessage) => (m.type === "tool" && (m as ToolMessage).tool_call_id === "c0") || (m.type === "ai" && (m as { tool_calls?: { id?: string }[] }).tool_calls?.[0]?.id === "c2");
    const out = await new ToolResultPruningCompactor({ cache: null, protect }).compact(messages, 0, lengthCounter);
    expect(pruned(out!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c1"]);
    // The index is the one in the list being compacted.
    const byIndex = await new ToolResultPruningCompactor({ cache: null, protect: (_m, i) => i === 3 }).compact(messages, 0, lengthCounter);
    expect(pruned(byIndex!).map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c1", "c2"]);
  });

  test("an aborted signal rejects with its reason; an abort during async counting too", async () => {
    const messages = agentRun(6);
    const reason = new Error("user cancelled");
    await expect(compactor.compact(messages, 0, lengthCounter, { signal: abortedSignal(reason) })).rejects.toBe(reason);
    const controller = new AbortController();
    const slow = async (list: BaseMessage[]) => {
      controller.abort(reason);
      return lengthCounter(list);
    };
    await expect(compactor.compactWithReport(messages, 0, slow, { signal: controller.signal })).rejects.toBe(reason);
    await expect(compactor.compact(messages, 0, lengthCounter, { signal: "no" as never })).rejects.toThrow(TypeError);
  });

  test("bad options are typed errors naming the value", () => {
    expect(() => new ToolResultPruningCompactor({ minKeepResults: 0 })).toThrow(RangeError);
    expect(() => new ToolResultPruningCompactor({ minKeepResults: 0 })).toThrow(/minKeepResults.*0/);
    expect(() => new ToolResultPruningCompactor({ minTokens: -1 })).toThrow(RangeError);
    expect(() => new ToolResultPruningCompactor({ placeholder: 5 as never })).toThrow(TypeError);
    expect(() => new ToolResultPruningCompactor({ skip: "read_plan" as never })).toThrow(/skip.*"read_plan"/);
    expect(() => new ToolResultPruningCompactor({ protect: 1 as never })).toThrow(TypeError);
  });

  test("pruned results stay recognisable after a store round trip", async () => {
    const out = await compactor.compact(agentRun(6), 0, lengthCounter);
    const restored = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages(out!));
    const marked = restored.filter(isCompactionMessage);
    expect(marked.map((m) => (m as ToolMessage).tool_call_id)).toEqual(["c0", "c1", "c2"]);
    expect((marked[0]!.response_metadata as { compaction?: unknown }).compaction).toEqual({ strategy: "tool_result_pruning", original_tokens: 300 });
    // Pruning the restored list again changes nothing: rewritten results are left alone.
    expect(await compactor.compact(restored, 0, lengthCounter)).toBeNull();
  });
});
