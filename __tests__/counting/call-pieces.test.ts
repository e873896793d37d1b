/**
 * The pieces of a message's tool calls that a counter charges for: the fast
 * reading (`visitToolCalls`, calls read in place for a message whose only
 * calls are parsed `tool_calls` with distinct ids) gives exactly the pieces
 * of the rule (`visitToolCallsByRule`: every call of `toolCallsIn`, once),
 * on every shape a provider puts calls in and on the odd ones.
 */
import { AIMessage, AIMessageChunk, ChatMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { visitToolCalls, visitToolCallsByRule } from "../../src/counting/text";
import type { MessageTextVisitor } from "../../src/counting/text";
import { RAW_TOOL_CALLS_WARNING, withCoreWarning } from "../support/core-warnings";

function pieces(visit: (message: BaseMessage, visitor: MessageTextVisitor) => void, message: BaseMessage): string[] {
  const seen: string[] = [];
  visit(message, { text: (value) => seen.push(value), image: () => seen.push("(image)") });
  return seen;
}

const call = (id: string | undefined, name = "search", args: Record<string, unknown> = { q: "x" }) => ({ id, name, args, type: "tool_call" as const });

const messages: [string, () => BaseMessage][] = [
  ["parsed calls with ids", () => new AIMessage({ content: "", tool_calls: [call("a"), call("b", "read", { path: "p" })] })],
  ["parsed calls, text content", () => new AIMessage({ content: "Looking.", tool_calls: [call("a")] })],
  ["a repeated id", () => new AIMessage({ content: "", tool_calls: [call("a"), call("a", "other")] })],
  ["a call without an id", () => new AIMessage({ content: "", tool_calls: [call(undefined), call("b")] })],
  ["an empty id", () => new AIMessage({ content: "", tool_calls: [call("")] })],
  ["an empty name and string args", () => new AIMessage({ content: "", tool_calls: [{ ...call("a", ""), args: "{\"q\":1}" } as never] })],
  ["no args", () => new AIMessage({ content: "", tool_calls: [{ id: "a", name: "s", args: undefined, type: "tool_call" } as never] })],
  ["a null item", () => new AIMessage({ content: "", tool_calls: [null, call("a")] as never })],
  ["invalid calls beside parsed ones", () => new AIMessage({ content: "", tool_calls: [call("a")], invalid_tool_calls: [{ id: "b", name: "s", args: "{oops", error: "bad", type: "invalid_tool_call" }] })],
  ["OpenAI's raw calls beside parsed ones", () => new AIMessage({ content: "", tool_calls: [call("a")], additional_kwargs: { tool_calls: [{ id: "a", type: "function", function: { name: "search", arguments: "{}" } }, { id: "r", type: "function", function: { name: "s", arguments: "{}" } }] } })],
  ["OpenAI's raw calls only", () => withCoreWarning(RAW_TOOL_CALLS_WARNING, () => new AIMessage({ content: "", additional_kwargs: { tool_calls: [{ id: "r", type: "function", function: { name: "s", arguments: "{}" } }] } }))],
  ["Anthropic tool_use blocks and the same parsed calls", () => new AIMessage({ content: [{ type: "text", text: "Reading." }, { type: "tool_use", id: "a", name: "search", input: { q: "x" } }] as never, tool_calls: [call("a")] })],
  ["a tool_use block only", () => new AIMessage({ content: [{ type: "tool_use", id: "u", name: "search", input: {} }] as never })],
  ["Responses function_call and v1 tool_call blocks", () => new AIMessage({ content: [{ type: "function_call", call_id: "f", id: "fc", name: "s", arguments: "{}" }, { type: "tool_call", id: "t", name: "s", args: {} }] as never, tool_calls: [call("f")] })],
  ["no calls", () => new AIMessage("done")],
  ["a chunk", () => new AIMessageChunk({ content: "", tool_call_chunks: [{ id: "a", name: "search", args: "{\"q\":\"x\"}", index: 0, type: "tool_call_chunk" }] })],
  ["an assistant ChatMessage", () => new ChatMessage({ role: "assistant", content: "hi" })],
  ["a human message", () => new HumanMessage("hi")],
  ["a human message carrying a tool_calls field", () => Object.assign(new HumanMessage("hi"), { tool_calls: [call("a")] })],
  ["a tool result", () => new ToolMessage({ tool_call_id: "a", content: "r" })],
];

test.each(messages)("%s: the fast reading gives the rule's pieces", (_label, build) => {
  const message = build();
  expect(pieces(visitToolCalls, message)).toEqual(pieces(visitToolCallsByRule, message));
});

test("the usual message is read in place: its pieces are its calls' name, arguments and id, in order", () => {
  const message = new AIMessage({ content: "", tool_calls: [call("a"), call("b", "read", { path: "p" })] });
  expect(pieces(visitToolCalls, message)).toEqual(["search", '{"q":"x"}', "a", "read", '{"path":"p"}', "b"]);
});
