/**
 * agentCompactor: the recommended pipeline in one call. Its summary call resends the conversation by default (for the
 * provider's cache), any summarization option can be overridden, stages given in `before` run first, and the window
 * after it never removes a summary.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod/v4";
import { agentCompactor, CompactionPipeline, isSummaryMessage, ToolResultPruningCompactor } from "../../src";
import { CONVERSATION_SUMMARY_REQUEST } from "../../src/compactors/summarization";
import { ScriptedChatModel } from "../../src/testing";
import { lengthCounter } from "../support/stages";

const search = tool(async () => "r", { name: "search", description: "Searches.", schema: z.object({ q: z.string() }) });

function chat(turns = 6, resultChars = 200): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("Rules in the list.")];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage(`question ${turn} ${"q".repeat(120)}`));
    messages.push(new AIMessage({ content: "", tool_calls: [{ id: `c${turn}`, name: "search", args: { q: `${turn}` }, type: "tool_call" }] }));
    messages.push(new ToolMessage({ tool_call_id: `c${turn}`, name: "search", content: `result ${turn} ${"r".repeat(resultChars)}` }));
    messages.push(new AIMessage(`answer ${turn}`));
  }
  messages.push(new HumanMessage("the task"));
  return messages;
}

const summarizer = (reply = "the summary") => new ScriptedChatModel({ reply: () => reply, usage: false });

describe("agentCompactor", () => {
  test("returns a pipeline whose summary call resends the conversation with the agent's tools, then a request to summarize", async () => {
    const model = summarizer();
    const compactor = agentCompactor({ model, maxSummaryTokens: 50, cache: null, circuitBreaker: null });
    expect(compactor).toBeInstanceOf(CompactionPipeline);
    const messages = chat();
    const systemMessage = new SystemMessage("You are a research agent.");
    const report = await compactor.compactWithReport(messages, 900, lengthCounter, { request: { systemMessage, tools: [search] } });
    expect(model.calls).toHaveLength(1);
    const sent = model.calls[0]!.messages;
    expect(sent[0]).toBe(systemMessage);
    // The model's last request: every message before its latest answer.
    expect(sent.slice(1, -1)).toEqual(messages.slice(0, -2));
    expect(String(sent.at(-1)!.content).startsWith(CONVERSATION_SUMMARY_REQUEST)).toBe(true);
    expect(model.calls[0]!.tools).toEqual(["search"]);
    expect(report.messages!.filter((message) => isSummaryMessage(message))).toHaveLength(1);
    expect(report.tokensAfter).toBeLessThanOrEqual(900);
  });

  test("summarization options are passed through: a transcript when asked", async () => {
    const model = summarizer();
    await agentCompactor({ model, summaryPrompt: "transcript", maxSummaryTokens: 50, cache: null, circuitBreaker: null }).compactWithReport(chat(), 900, lengthCounter);
    expect(model.calls[0]!.messages).toHaveLength(2);
    expect(String(model.calls[0]!.messages[1]!.content)).toMatch(/^<conversation_to_summarize>/);
  });

  test("the window never removes a summary: when summaries cannot make room, it drops raw history around them", async () => {
    // A first compaction writes a summary; then the model fails, and only the window can reach the target.
    const first = await agentCompactor({ model: summarizer(), maxSummaryTokens: 50, cache: null, circuitBreaker: null }).compact(chat(), 900, lengthCounter);
    const summary = first!.find((message) => isSummaryMessage(message))!;
    expect(summary).toBeDefined();
    const grown = [...first!.slice(0, -1), ...chat(4).slice(1)];
    const failing = agentCompactor({ model: summarizer("   "), maxSummaryTokens: 50, cache: null, circuitBreaker: null, retries: 0 });
    const report = await failing.compactWithReport(grown, 500, lengthCounter);
    expect(report.messages).not.toBeNull();
    expect(report.messages).toContain(summary);
    expect(report.removed.length).toBeGreaterThan(0);
    expect(report.tokensAfter).toBeLessThan(report.tokensBefore);
  });

  test("stages in `before` run first: when pruning makes room, the summary model is never called", async () => {
    const model = summarizer();
    const report = await agentCompactor({ model, maxSummaryTokens: 50, cache: null, circuitBreaker: null, before: [new ToolResultPruningCompactor({ cache: null })] }).compactWithReport(chat(), 1_800, lengthCounter);
    expect(report.stages[0]!.strategy).toBe("tool_result_pruning");
    expect(report.stages[0]!.rewritten.length).toBeGreaterThan(0);
    expect(model.calls).toHaveLength(0);
    expect(report.tokensAfter).toBeLessThanOrEqual(1_800);
  });

  test("with `offload`, large results go to the store first and the reference names the key the reader tool takes", async () => {
    const store = new InMemoryStore();
    const model = summarizer();
    const messages = chat(6, 4_000);
    const total = await lengthCounter(messages);
    const report = await agentCompactor({ model, maxSummaryTokens: 50, cache: null, circuitBreaker: null, offload: { store } }).compactWithReport(messages, Math.floor(total * 0.8), lengthCounter);
    expect(report.stages[0]!.strategy).toBe("tool_result_offloading");
    expect(report.stages[0]!.rewritten.length).toBeGreaterThan(0);
    const stored = await store.search(["compaction", "tool-results"]);
    expect(stored.length).toBe(report.stages[0]!.rewritten.length);
    expect(model.calls).toHaveLength(0);
  });

  test("with `offload`, the summary call that follows in the same compaction is sent the results as the model saw them, not their references", async () => {
    const store = new InMemoryStore();
    const model = summarizer();
    const messages = chat(6, 4_000);
    const report = await agentCompactor({ model, maxSummaryTokens: 50, cache: null, circuitBreaker: null, offload: { store } }).compactWithReport(messages, 1_000, lengthCounter);
    expect(report.stages.map((stage) => stage.strategy)).toEqual(expect.arrayContaining(["tool_result_offloading", "summarization"]));
    expect(model.calls).toHaveLength(1);
    const sent = model.calls[0]!.messages;
    // Same objects, in order: the prefix the provider cached when the model was last sent this list.
    sent.slice(0, messages.length).forEach((message, index) => expect(message).toBe(messages[index]));
    expect(String(sent.at(-1)!.content).startsWith(CONVERSATION_SUMMARY_REQUEST)).toBe(true);
  });

  test("`protect` keeps a message from the summary and from the window", async () => {
    const messages = chat();
    const pinned = messages[1]!; // the first question
    const report = await agentCompactor({ model: summarizer("   "), maxSummaryTokens: 50, cache: null, circuitBreaker: null, retries: 0, protect: (message) => message === pinned }).compactWithReport(messages, 700, lengthCounter);
    expect(report.removed.length).toBeGreaterThan(0);
    expect(report.messages).toContain(pinned);
  });

  test("bad options are named where they enter", () => {
    expect(() => agentCompactor(null as never)).toThrow("agentCompactor options must be an object, got null");
    expect(() => agentCompactor({ model: summarizer(), before: {} as never })).toThrow(/^agentCompactor `before` must be an array of compactors, got/);
    expect(() => agentCompactor({ model: summarizer(), offload: 7 as never })).toThrow("agentCompactor `offload` must be the options of a ToolResultOffloadCompactor (with a store), got 7");
    expect(() => agentCompactor({ model: summarizer(), before: [42 as never] })).toThrow("agentCompactor `before[0]` must be a compactor (compact and compactWithReport), got 42");
    expect(() => agentCompactor({ model: summarizer(), summaryPrompt: "cached" as never })).toThrow('`summaryPrompt` must be "transcript" or "conversation", got "cached"');
  });
});
