/**
 * Message shapes LangChain itself produces, one concrete case
 * each: ChatMessages by role, tool-call ids wherever a provider's converter
 * reads them, system messages after the task, and a model reusing one call id
 * (grouping stays linear: counted, not timed).
 */
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { convertMessagesToCompletionsMessageParams } from "@langchain/openai";
import { SlidingWindowCompactor } from "../../src/compactors/sliding-window";
import { freshLayout, layoutConversation } from "../../src/messages/layout";
import { layoutWork } from "../../src/messages/layout-engine";

/** Counts every message as 10 tokens, so targets read as message counts. */
const tenEach = (messages: BaseMessage[]) => messages.length * 10;
const compactor = (minKeepSteps = 1) => new SlidingWindowCompactor({ minKeepSteps, cache: null });

describe("ChatMessage is classified by its role", () => {
  test.each(["user", "human"])("role %p is the user's message: the current task, kept", async (role) => {
    const task = new ChatMessage({ role, content: "What is the weather in Oslo?" });
    const messages = [new SystemMessage("sys"), new HumanMessage("old question"), new AIMessage("old answer"), task];
    const result = await compactor().compact(messages, 20, tenEach);
    expect(result).not.toBeNull();
    expect(result).toContain(task);
    expect(result).toContain(messages[0]);
    expect(result).not.toContain(messages[1]);
  });

  test.each(["assistant", "ai"])("role %p is an assistant message: it opens a step of the task", async (role) => {
    const steps = [new ChatMessage({ role, content: "first thought" }), new ChatMessage({ role, content: "second thought" })];
    const messages = [new HumanMessage("task"), ...steps];
    const layout = freshLayout(messages);
    expect(layout.task).toBe(0);
    expect(layout.steps.map((step) => step.members)).toEqual([[1], [2]]);
    expect(layout.loose).toEqual([]);
  });

  test.each(["system", "developer"])("role %p leads as instructions: protected", async (role) => {
    const instructions = new ChatMessage({ role, content: "Be brief." });
    const messages = [instructions, new HumanMessage("old"), new AIMessage("old answer"), new HumanMessage("task")];
    expect(freshLayout(messages).systemEnd).toBe(1);
    const result = await compactor().compact(messages, 20, tenEach);
    expect(result![0]).toBe(instructions);
  });

  test("role tool without an id is a result: it joins the calling AI message right before it", () => {
    const call = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "f", args: {}, type: "tool_call" }] });
    const messages = [new HumanMessage("task"), call, new ChatMessage({ role: "tool", content: "result" })];
    expect(freshLayout(messages).steps.map((step) => step.members)).toEqual([[1, 2]]);
  });

  test("an unknown role is kept with the step it stands in, never the task", () => {
    const messages = [new HumanMessage("task"), new AIMessage("step"), new ChatMessage({ role: "critic", content: "hmm" })];
    const layout = freshLayout(messages);
    expect(layout.task).toBe(0);
    expect(layout.steps.map((step) => step.members)).toEqual([[1, 2]]);
  });

  test("a ChatMessage read back from a store (type generic) is the same", async () => {
    const { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } = await import("@langchain/core/messages");
    const [stored] = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages([new ChatMessage({ role: "user", content: "task" })]));
    expect(stored!.type).toBe("generic");
    expect(freshLayout([new SystemMessage("s"), stored!]).task).toBe(1);
  });
});

describe("tool-call ids from every place a provider reads them", () => {
  const result = (id: string) => new ToolMessage({ tool_call_id: id, content: `result ${id}` });
  const shapes: [string, () => AIMessage][] = [
    ["tool_calls", () => new AIMessage({ content: "", tool_calls: [{ id: "x1", name: "f", args: {}, type: "tool_call" }] })],
    [
      "invalid_tool_calls (malformed JSON arguments)",
      () => new AIMessage({ content: "", tool_calls: [], invalid_tool_calls: [{ id: "x1", name: "f", args: "{oops", error: "bad", type: "invalid_tool_call" }] }),
    ],
    [
      "additional_kwargs.tool_calls only (raw OpenAI)",
      () => {
        const message = new AIMessage({ content: "" });
        message.additional_kwargs = { tool_calls: [{ id: "x1", type: "function", function: { name: "f", arguments: "{}" } }] };
        message.tool_calls = [];
        return message;
      },
    ],
    ["tool_use content blocks only (Anthropic)", () => new AIMessage({ content: [{ type: "tool_use", id: "x1", name: "f", input: {} }], tool_calls: [] })],
    // OpenAI Responses items: `id` names the item, `call_id` the call its output answers.
    [
      "function_call content blocks only (OpenAI Responses), the call named by call_id",
      () => new AIMessage({ content: [{ type: "function_call", id: "fc_item9", call_id: "x1", name: "f", arguments: "{}" }], tool_calls: [] }),
    ],
    ["function_call content blocks without call_id, named by id", () => new AIMessage({ content: [{ type: "function_call", id: "x1", name: "f", arguments: "{}" }], tool_calls: [] })],
  ];

  test.each(shapes)("%s: the result stays with its call in the task, and goes with it", async (_label, make) => {
    const call = make();
    const answer = result("x1");
    const later = new AIMessage("done");
    const messages = [new HumanMessage("task"), call, new AIMessage("thinking"), answer, later];
    const layout = freshLayout(messages);
    expect(layout.loose).toEqual([]);
    const withCall = layout.steps.find((step) => step.members.includes(1))!;
    expect(withCall.members).toContain(3);
    // Target for the task and one more message: the call's step cannot fit, so call and result go together.
    const compacted = (await compactor(0).compact(messages, 20, tenEach))!;
    expect(compacted.includes(call)).toBe(compacted.includes(answer));
    expect(compacted).toContain(later);
  });

  test("in history too: a call whose id is only in additional_kwargs is never sent without its result", async () => {
    const call = shapes[2]![1]();
    const messages = [new SystemMessage("s"), new HumanMessage("q1"), call, result("x1"), new AIMessage("a1"), new HumanMessage("task")];
    for (const target of [20, 30, 40, 50]) {
      const compacted = (await compactor().compact(messages, target, tenEach)) ?? messages;
      const params = convertMessagesToCompletionsMessageParams({ messages: compacted, model: "gpt-4o" }) as { role: string; tool_calls?: unknown[] }[];
      const calls = params.filter((p) => p.tool_calls?.length).length;
      const results = params.filter((p) => p.role === "tool").length;
      expect(calls).toBe(results);
    }
  });
});

describe("system messages after the task", () => {
  test("stay with the step they stand in (kept with it, removed with it), not dropped as loose", async () => {
    const reminder = new SystemMessage("Reminder: cite sources.");
    const first = new AIMessage("first step");
    const second = new AIMessage("second step");
    const messages = [new SystemMessage("s"), new HumanMessage("task"), first, reminder, second];
    const layout = freshLayout(messages);
    expect(layout.loose).toEqual([]);
    expect(layout.steps.map((step) => step.members)).toEqual([[2, 3], [4]]);
    // Everything fits but the oldest step: it goes with its reminder.
    const compacted = (await compactor().compact(messages, 30, tenEach))!;
    expect(compacted).not.toContain(reminder);
    expect(compacted).not.toContain(first);
    // Room for both steps' messages: the reminder stays.
    expect(await compactor().compact(messages, 50, tenEach)).toBeNull();
    const roomy = [...messages, new HumanMessage("x")].slice(0, 5);
    expect((await compactor(2).compact([new HumanMessage("old"), ...roomy], 50, tenEach))!).toContain(reminder);
  });

  test("right after the task, one opens a step of its own; an earlier note is still folded, not kept", () => {
    const note = new HumanMessage({ content: "[3 removed]", response_metadata: { compaction: { strategy: "sliding_window", removed_messages: 3, kept_messages: 1 } } });
    const messages = [new HumanMessage("task"), new SystemMessage("late"), note, new AIMessage("step")];
    const layout = freshLayout(messages);
    expect(layout.steps.map((step) => step.members)).toEqual([[1], [3]]);
    expect(layout.notes).toEqual([2]);
  });
});

describe("a model that reuses one call id", () => {
  /** `pairs` steps, each an AI message asking for `call_0` and a result answering it. */
  function reused(pairs: number): BaseMessage[] {
    const messages: BaseMessage[] = [new SystemMessage("s"), new HumanMessage("task")];
    for (let i = 0; i < pairs; i += 1) {
      messages.push(new AIMessage({ content: `step ${i}`, tool_calls: [{ id: "call_0", name: "f", args: { i }, type: "tool_call" }] }));
      messages.push(new ToolMessage({ tool_call_id: "call_0", content: `result ${i}` }));
    }
    return messages;
  }

  function workOf(messages: BaseMessage[]): number {
    const before = { ...layoutWork };
    freshLayout(messages);
    return layoutWork.ownerVisits - before.ownerVisits + (layoutWork.unions - before.unions) + (layoutWork.findSteps - before.findSteps) + (layoutWork.memberMoves - before.memberMoves);
  }

  test("groups every exchange sharing the id into one unit", () => {
    const layout = freshLayout(reused(50));
    expect(layout.steps).toHaveLength(1);
    expect(layout.steps[0]!.members).toHaveLength(100);
  });

  test("the grouping's work grows linearly (n log n at most) with the number of messages, not quadratically", () => {
    // Counted, not timed: owner-list visits, unions, union-find steps and moved members.
    const small = workOf(reused(2_000));
    const large = workOf(reused(16_000));
    // 8× the messages: linear work grows 8×, n log n about 10×, quadratic 64×.
    expect(large / small).toBeLessThan(12);
    expect(large).toBeLessThan(16_000 * 2 * 20);
  });

  test("a remembered layout extended by one more exchange does work in proportion to it, not to the history", () => {
    const history = reused(20_000);
    layoutConversation(history);
    const extra = reused(1).slice(2);
    const before = { ...layoutWork };
    const layout = layoutConversation([...history, ...extra]);
    const work = layoutWork.ownerVisits - before.ownerVisits + (layoutWork.unions - before.unions) + (layoutWork.findSteps - before.findSteps);
    expect(layoutWork.messages - before.messages).toBe(extra.length);
    expect(work).toBeLessThan(100);
    expect(layout.steps[0]!.members).toHaveLength(history.length - 2 + extra.length);
  });
});
