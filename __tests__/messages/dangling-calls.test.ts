/**
 * The repair of dangling tool calls (`src/messages/dangling-calls.ts`), one rule per test, worked out by hand, and
 * checked with every provider's converter: a repaired list is a valid request wherever a call stood.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { INTERRUPTED_CALL_RESULT, isRepairedCallResult, repairDanglingCalls } from "../../src/messages/dangling-calls";
import { assertConvertsEverywhere } from "../support/providers";

const asking = (ids: string[], name = "search") => new AIMessage({ content: "", tool_calls: ids.map((id) => ({ id, name, args: { q: id }, type: "tool_call" as const })) });
const result = (id: string) => new ToolMessage({ tool_call_id: id, name: "search", content: `result ${id}` });
const shape = (messages: readonly BaseMessage[]) =>
  messages.map((m) => (isRepairedCallResult(m) ? `repaired:${(m as ToolMessage).tool_call_id}` : m.type === "tool" ? `tool:${(m as ToolMessage).tool_call_id}` : m.type));

describe("repairDanglingCalls", () => {
  test("a call the conversation moved on from gets a synthetic error result right after its message and its results", () => {
    const messages = [new SystemMessage("s"), new HumanMessage("q"), asking(["a", "b"]), result("a"), new HumanMessage("new question")];
    const { messages: repaired, added } = repairDanglingCalls(messages);
    expect(shape(repaired)).toEqual(["system", "human", "ai", "tool:a", "repaired:b", "human"]);
    expect(added).toHaveLength(1);
    expect(added[0]!.status).toBe("error");
    expect(added[0]!.name).toBe("search");
    expect(added[0]!.content).toBe(INTERRUPTED_CALL_RESULT.replace("{tool_name}", "search"));
    expect(() => assertConvertsEverywhere(repaired)).not.toThrow();
    expect(() => assertConvertsEverywhere(messages)).toThrow();
  });

  test("the calls of the step in progress (nothing but results after them) are left alone", () => {
    const waiting = [new HumanMessage("q"), asking(["a", "b"]), result("a")];
    expect(repairDanglingCalls(waiting).messages).toBe(waiting);
    const justAsked = [new HumanMessage("q"), asking(["a"])];
    expect(repairDanglingCalls(justAsked).added).toEqual([]);
  });

  test("every step but the one in progress is repaired, each call once; answered calls and calls without ids are not", () => {
    const idless = new AIMessage({ content: "", tool_calls: [{ name: "search", args: {}, type: "tool_call" }] });
    const messages = [new HumanMessage("q"), asking(["a"]), new AIMessage("went on"), idless, new AIMessage("again"), asking(["c"]), result("c"), asking(["d"])];
    expect(shape(repairDanglingCalls(messages).messages)).toEqual(["human", "ai", "repaired:a", "ai", "ai", "ai", "ai", "tool:c", "ai"]);
  });

  test("a result standing before its call answers an earlier call, not this one; a retried id is answered by the results after it", () => {
    const messages = [new HumanMessage("q"), asking(["a"]), result("a"), asking(["a"]), new HumanMessage("next")];
    expect(shape(repairDanglingCalls(messages).messages)).toEqual(["human", "ai", "tool:a", "ai", "repaired:a", "human"]);
    const answeredLater = [new HumanMessage("q"), asking(["a"]), new AIMessage("x"), result("a"), new HumanMessage("next")];
    expect(repairDanglingCalls(answeredLater).added).toEqual([]);
  });

  test("calls in every provider shape are read (the one definition of calls)", () => {
    const anthropic = new AIMessage({ content: [{ type: "tool_use", id: "u1", name: "fetch", input: {} }] as never });
    const { added } = repairDanglingCalls([new HumanMessage("q"), anthropic, new HumanMessage("next")]);
    expect(added.map((m) => [m.tool_call_id, m.name])).toEqual([["u1", "fetch"]]);
  });

  test("the input is not modified; nothing dangling returns the input array itself", () => {
    const messages = [new HumanMessage("q"), asking(["a"]), new HumanMessage("next")];
    const copy = [...messages];
    repairDanglingCalls(messages);
    expect(messages).toEqual(copy);
    const clean = [new HumanMessage("q"), asking(["a"]), result("a"), new AIMessage("done")];
    expect(repairDanglingCalls(clean).messages).toBe(clean);
  });

  test("the text is a template: {tool_name} is the call's tool", () => {
    const { added } = repairDanglingCalls([new HumanMessage("q"), asking(["a"], "grep"), new HumanMessage("n")], "cut: {tool_name}/{tool_name}");
    expect(added[0]!.content).toBe("cut: grep/grep");
  });
});
