/**
 * Where an assistant message's call ids are read from (each id once per message, and what is ignored), and whether
 * a message asks for tools at all (a result without an id may answer it): `src/messages/exchanges.ts`, stated rule by
 * rule.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { asksForTools, collectAssistantCallIds, toolCallIdsOf } from "../../src/messages/exchanges";
import { RAW_TOOL_CALLS_WARNING, withCoreWarning } from "../support/core-warnings";

describe("the call ids of an assistant message", () => {
  test("read from tool_calls, invalid_tool_calls, OpenAI's raw tool_calls and the call blocks, in that order", () => {
    const message = new AIMessage({
      content: [
        "plain text",
        null,
        { type: "text", text: "thinking", id: "text_block" },
        { type: "tool_use", id: "d", name: "read", input: {} },
        { type: "tool_call", id: "e", name: "read", args: {} },
        { type: "function_call", call_id: "f", id: "fc_item", name: "read", arguments: "{}" },
        { type: "function_call", id: "g", name: "read", arguments: "{}" },
      ] as never,
      tool_calls: [{ id: "a", name: "search", args: {}, type: "tool_call" }],
      invalid_tool_calls: [{ id: "b", name: "search", args: "{oops", error: "bad JSON", type: "invalid_tool_call" }],
      additional_kwargs: { tool_calls: [{ id: "c", type: "function", function: { name: "search", arguments: "{}" } }] },
    });
    expect(toolCallIdsOf(message)).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  test("each id once per message, wherever it is repeated; empty ids and non-object entries are skipped", () => {
    const message = new AIMessage({
      content: [{ type: "tool_use", id: "a", name: "search", input: {} }] as never,
      tool_calls: [{ id: "a", name: "search", args: {}, type: "tool_call" }, { id: "", name: "x", args: {}, type: "tool_call" }],
      additional_kwargs: { tool_calls: [null, "a", { id: "a" }, { id: "b" }] as never },
    });
    expect(toolCallIdsOf(message)).toEqual(["a", "b"]);
  });

  test("an id an earlier message gave is this message's too: de-duplication is per message", () => {
    const first = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "s", args: {}, type: "tool_call" }] });
    const second = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "s", args: {}, type: "tool_call" }, { id: "a", name: "s", args: {}, type: "tool_call" }] });
    const out: string[] = [];
    expect(collectAssistantCallIds(first, out)).toBe(1);
    expect(collectAssistantCallIds(second, out)).toBe(1);
    expect(out).toEqual(["a", "a"]);
  });

  test("additional_kwargs missing or null is no call, not a crash; a human message has none", () => {
    const bare = new AIMessage("done");
    (bare as unknown as { additional_kwargs: unknown }).additional_kwargs = null;
    expect(toolCallIdsOf(bare)).toEqual([]);
    const human = new HumanMessage({ content: "hi", additional_kwargs: { tool_calls: [{ id: "x" }] as never } });
    expect(toolCallIdsOf(human)).toEqual([]);
  });
});

describe("whether a message asks for tools at all", () => {
  const withCalls = (calls: unknown[]) => new AIMessage({ content: "", tool_calls: calls as never });

  test("a call in any shape means yes, with or without an id", () => {
    expect(asksForTools(withCalls([{ id: "a", name: "search", args: {}, type: "tool_call" }]))).toBe(true);
    expect(asksForTools(withCalls([{ name: "search", args: {}, type: "tool_call" }]))).toBe(true);
    expect(asksForTools(new AIMessage({ content: [{ type: "tool_use", id: "u", name: "search", input: {} }] as never }))).toBe(true);
    expect(asksForTools(new AIMessage({ content: [{ type: "function_call", call_id: "f", name: "search", arguments: "{}" }] as never }))).toBe(true);
    const raw = withCoreWarning(RAW_TOOL_CALLS_WARNING, () => new AIMessage({ content: "", additional_kwargs: { tool_calls: [{ id: "r", type: "function", function: { name: "s", arguments: "{}" } }] } }));
    expect(asksForTools(raw)).toBe(true);
  });

  test("no calls mean no; a non-assistant message never asks", () => {
    expect(asksForTools(withCalls([]))).toBe(false);
    expect(asksForTools(new AIMessage("just text"))).toBe(false);
    expect(asksForTools(new HumanMessage("hi"))).toBe(false);
  });
});
