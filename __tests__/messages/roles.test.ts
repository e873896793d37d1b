/**
 * What a message is to the rules (src/messages/roles.ts), asked directly: the
 * compactors' suites reach `isTool` and `toolCallIdOf` only through whole
 * compactions, so a broken predicate could hide behind a compaction that
 * happens to give the same answer.
 */
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { isAI, isHuman, isSystem, isTool, roleOf, toolCallIdOf } from "../../src/messages/roles";
import { toolCallsIn } from "../../src/messages/exchanges";

const call = { id: "c1", name: "lookup", args: { q: 1 }, type: "tool_call" as const };

test.each([
  [new ToolMessage({ content: "r", tool_call_id: "c1" }), "tool"],
  [new ChatMessage({ content: "r", role: "tool" }), "tool"],
  [new ChatMessage({ content: "r", role: "developer" }), "system"],
  [new ChatMessage({ content: "r", role: "user" }), "human"],
  [new ChatMessage({ content: "r", role: "assistant" }), "ai"],
  [new ChatMessage({ content: "r", role: "critic" }), "other"],
  [new ChatMessage({ content: "r", role: "toString" }), "other"],
  [new SystemMessage("s"), "system"],
  [new HumanMessage("h"), "human"],
  [new AIMessage("a"), "ai"],
])("%# the role of a %s message is %s, and exactly one predicate says so", (message, role) => {
  expect(roleOf(message)).toBe(role);
  expect([isSystem(message), isHuman(message), isAI(message), isTool(message)]).toEqual(
    ["system", "human", "ai", "tool"].map((name) => name === role),
  );
});

describe("toolCallIdOf", () => {
  test("the id a tool result answers", () => {
    expect(toolCallIdOf(new ToolMessage({ content: "r", tool_call_id: "c1" }))).toBe("c1");
  });

  test("a lost (empty) id, a tool ChatMessage and a message that is no result answer nothing", () => {
    expect(toolCallIdOf(new ToolMessage({ content: "r", tool_call_id: "" }))).toBeUndefined();
    expect(toolCallIdOf(new ChatMessage({ content: "r", role: "tool" }))).toBeUndefined();
    const notAResult = Object.assign(new HumanMessage("h"), { tool_call_id: "c1" });
    expect(toolCallIdOf(notAResult)).toBeUndefined();
    const stored = Object.assign(new ToolMessage({ content: "r", tool_call_id: "c1" }), { tool_call_id: 7 as unknown as string });
    expect(toolCallIdOf(stored)).toBeUndefined();
  });
});

describe("toolCallsIn, read by role", () => {
  test("an assistant's calls; none for any other message, whatever fields it carries", () => {
    expect(toolCallsIn(new AIMessage({ content: "", tool_calls: [call] })).map((c) => c.id)).toEqual(["c1"]);
    expect(toolCallsIn(new AIMessage("a"))).toEqual([]);
    const notAnAssistant = Object.assign(new HumanMessage("h"), { tool_calls: [call] });
    expect(toolCallsIn(notAnAssistant)).toEqual([]);
    const broken = Object.assign(new AIMessage("a"), { tool_calls: "c1" as unknown as [] });
    expect(toolCallsIn(broken)).toEqual([]);
  });
});
