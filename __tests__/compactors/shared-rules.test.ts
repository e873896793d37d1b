/**
 * Rules every stage shares: compaction metadata that survives
 * stores and checkpointers, `isCompactionMessage`, `protect` on the sliding
 * window, and `options.signal`.
 */
import { AIMessage, BaseMessage, HumanMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, ToolMessage } from "@langchain/core/messages";
import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createOmissionNote, DEFAULT_OMISSION_NOTE } from "../../src/messages/omission-note";
import { layoutConversation } from "../../src/messages/layout";
import { isCompactionMessage, isOmissionNote, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import { abortedSignal, answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

const summary = (text = "<conversation_summary>\nearlier work\n</conversation_summary>") =>
  new HumanMessage({ content: text, response_metadata: { compaction: { strategy: "summarization", summarized_messages: 4, source: "historical_turns" } } });
const prunedResult = () =>
  new ToolMessage({ tool_call_id: "c9", content: "[removed]", response_metadata: { compaction: { strategy: "tool_result_pruning", original_tokens: 500 } } });
const offloadedResult = () =>
  new ToolMessage({ tool_call_id: "c8", content: "[stored]", response_metadata: { compaction: { strategy: "tool_result_offloading", original_tokens: 500, key: "k" } } });

describe("compaction metadata", () => {
  test("isCompactionMessage recognises every strategy's messages, and only by known strategy names", () => {
    const note = createOmissionNote(DEFAULT_OMISSION_NOTE, 3, 2);
    for (const message of [note, summary(), prunedResult(), offloadedResult()]) expect(isCompactionMessage(message)).toBe(true);
    const foreign = new HumanMessage({ content: "x", response_metadata: { compaction: { strategy: "summary" } } });
    const text = new HumanMessage("<conversation_summary>typed by a user</conversation_summary>");
    for (const message of [foreign, text, new AIMessage("a"), "not a message", null]) expect(isCompactionMessage(message)).toBe(false);
    // isOmissionNote stays the sliding window's own.
    expect(isOmissionNote(note)).toBe(true);
    expect(isOmissionNote(summary())).toBe(false);
  });

  test("the metadata survives mapChatMessagesToStoredMessages and a LangGraph checkpointer", async () => {
    const written = [createOmissionNote(DEFAULT_OMISSION_NOTE, 3, 2), summary(), calling(["c9"]), prunedResult(), calling(["c8"]), offloadedResult()];
    const stored = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages(written));
    expect(stored.map(isCompactionMessage)).toEqual([true, true, false, true, false, true]);
    expect(stored.map((m) => m.response_metadata)).toEqual(written.map((m) => m.response_metadata));

    const graph = new StateGraph(MessagesAnnotation).addNode("noop", () => ({})).addEdge(START, "noop").compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "stages-metadata" } };
    await graph.invoke({ messages: written }, config);
    const state = (await graph.getState(config)).values as { messages: BaseMessage[] };
    expect(state.messages.map(isCompactionMessage)).toEqual([true, true, false, true, false, true]);
    expect((state.messages[1]!.response_metadata as { compaction: unknown }).compaction).toEqual({ strategy: "summarization", summarized_messages: 4, source: "historical_turns" });
  });

  test("a summary is never the current task: the layout anchors on the user's own message", () => {
    const messages = [system(), human(10, "Q"), summary(), calling(["c1"]), result("c1")];
    expect(layoutConversation(messages).task).toBe(1);
    // After the task, a summary is a step of its own (kept or removed whole), not a stray.
    expect(layoutConversation(messages).steps.map((s) => s.members)).toEqual([[2], [3, 4]]);
  });
});

describe("protect on the sliding window", () => {
  // system 10, an old turn with a plan (human 10, call 10, result 10, answer 10), a newer turn, the task and two steps.
  function conversation() {
    const plan = result("plan", 10, { name: "read_plan" });
    const messages: BaseMessage[] = [
      system(),
      human(), calling(["plan"]), plan, answer(),
      human(), answer(100),
      human(10, "Q"),
      calling(["s1"]), result("s1", 100),
      calling(["s2"]), result("s2", 10),
    ];
    return { messages, plan };
  }

  test("a protected result keeps its call and its turn; it is counted against the target", async () => {
    const { messages, plan } = conversation();
    const compactor = new SlidingWindowCompactor({ protect: (m) => m === plan, cache: null });
    const report = await compactor.compactWithReport(messages, 60, lengthCounter);
    const kept = report.messages!;
    expect(kept).toContain(plan);
    expect(kept).toContain(messages[2]); // its call
    // 60 = system 10 + task 10 + protected turn 40: no room for any step beyond minKeepSteps.
    expect(kept.filter((m) => messages.includes(m))).toEqual([messages[0], messages[1], messages[2], plan, messages[4], messages[7], messages[10], messages[11]]);
    // Without protect the plan goes.
    const plain = await new SlidingWindowCompactor({ cache: null }).compact(messages, 60, lengthCounter);
    expect(plain).not.toContain(plan);
  });

  test("a protected call keeps its results; a protected step survives when steps are trimmed", async () => {
    const { messages } = conversation();
    const protect = (_m: BaseMessage, index: number) => index === 8; // the call of s1
    const out = await new SlidingWindowCompactor({ protect, cache: null, minKeepSteps: 0 }).compact(messages, 0, lengthCounter);
    expect(out).toContain(messages[8]);
    expect(out).toContain(messages[9]);
    expect(out).not.toContain(messages[10]);
  });

  test("a protected earlier note is kept, not folded", async () => {
    const note = createOmissionNote(DEFAULT_OMISSION_NOTE, 7, 3);
    const messages = [system(), note, human(), answer(200), human(10, "Q"), answer()];
    const out = await new SlidingWindowCompactor({ protect: (m) => m === note, cache: null }).compact(messages, 40, lengthCounter);
    expect(out).toContain(note);
  });

  test("rejects with the signal's reason", async () => {
    const { messages } = conversation();
    const reason = new Error("cancelled");
    await expect(new SlidingWindowCompactor().compact(messages, 0, lengthCounter, { signal: abortedSignal(reason) })).rejects.toBe(reason);
    const controller = new AbortController();
    const counter = async (list: BaseMessage[]) => {
      controller.abort(reason);
      return lengthCounter(list);
    };
    await expect(new SlidingWindowCompactor({ cache: null }).compactWithReport(messages, 0, counter, { signal: controller.signal })).rejects.toBe(reason);
    // Without a signal, the same call works.
    expect(await new SlidingWindowCompactor({ cache: null }).compact(messages, 0, counter)).not.toBeNull();
    expect(() => new SlidingWindowCompactor({ protect: "plan" as never })).toThrow(TypeError);
  });

  test("every stage's protect sees each message with its index once", async () => {
    const { messages } = conversation();
    const seen: number[] = [];
    await new ToolResultPruningCompactor({ cache: null, minTokens: 0, minKeepResults: 1, protect: (_m, i) => (seen.push(i), false) }).compact(messages, 0, lengthCounter);
    expect(seen).toEqual(messages.map((_, i) => i));
    expect(tokens(messages)).toBeGreaterThan(0);
  });
});
