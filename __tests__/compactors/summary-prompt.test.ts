/**
 * The two ways a summary call is sent: a transcript of the stretch alone (the default), or the conversation as the
 * model last saw it (system prompt and tools included) followed by a request naming the stretch, so that a provider's
 * prompt cache serves everything before that request.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod/v4";
import { isSummaryMessage, SummarizationCompactor } from "../../src";
import { CONVERSATION_SUMMARY_REQUEST } from "../../src/compactors/summarization";
import { ScriptedChatModel } from "../../src/testing";
import { lengthCounter } from "../support/stages";

const search = tool(async () => "r", { name: "search", description: "Searches.", schema: z.object({ q: z.string() }) });

function chat(): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("Rules in the list.")];
  for (let turn = 0; turn < 6; turn += 1) {
    messages.push(new HumanMessage(`question ${turn} ${"q".repeat(120)}`));
    messages.push(new AIMessage({ content: "", tool_calls: [{ id: `c${turn}`, name: "search", args: { q: `${turn}` }, type: "tool_call" }] }));
    messages.push(new ToolMessage({ tool_call_id: `c${turn}`, name: "search", content: `result ${turn} ${"r".repeat(200)}` }));
    messages.push(new AIMessage(`answer ${turn}`));
  }
  messages.push(new HumanMessage("the task"));
  return messages;
}

const summarizer = () => new ScriptedChatModel({ reply: () => "the summary", usage: false });

describe("summaryPrompt: \"conversation\"", () => {
  test("sends the outside system prompt, every message as it stands, and a request naming where the stretch begins and ends, with the agent's tools bound", async () => {
    const model = summarizer();
    const messages = chat();
    const systemMessage = new SystemMessage("You are a research agent.");
    const stage = new SummarizationCompactor({ model, summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null });
    const report = await stage.compactWithReport(messages, 900, lengthCounter, { request: { systemMessage, tools: [search] }, instructions: "keep the result numbers" });
    expect(model.calls).toHaveLength(1);
    const sent = model.calls[0]!;
    // The prefix is exactly what the model was sent last: the outside prompt, then the list itself (same objects) up
    // to the model's latest answer, which that request produced (the answer and the new task are not resent).
    const seen = messages.length - 2;
    expect(messages[seen]!.type).toBe("ai");
    expect(sent.messages[0]).toBe(systemMessage);
    expect(sent.messages.slice(1, 1 + seen)).toEqual(messages.slice(0, seen));
    expect(sent.messages).toHaveLength(seen + 2);
    expect(sent.tools).toEqual(["search"]);
    const ask = String(sent.messages.at(-1)!.content);
    expect(ask.startsWith(CONVERSATION_SUMMARY_REQUEST)).toBe(true);
    const replaced = report.standsFor![0]!.originals;
    expect(ask).toContain(`Summarize only the ${replaced.length} messages from the user message that begins «question 0`);
    const next = messages[messages.indexOf(replaced.at(-1)!) + 1]!;
    expect(ask).toContain(`up to, but not including, the user message that begins «${String(next.content).slice(0, 20)}`);
    expect(ask).toContain("keep the result numbers");
    expect(report.messages!.filter((message) => isSummaryMessage(message))).toHaveLength(1);
  });

  test("one compaction that would summarize the turns and then combine the history's summaries makes one call, sent the conversation as it came", async () => {
    const model = summarizer();
    const earlier = new HumanMessage({
      content: `<conversation_summary>\nearlier ${"e".repeat(300)}\n</conversation_summary>`,
      response_metadata: { compaction: { strategy: "summarization", summarized_messages: 4, source: "historical_turns" } },
    });
    const messages = chat();
    messages.splice(1, 0, earlier);
    const stage = new SummarizationCompactor({ model, summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null });
    // Under this target every turn goes, and the new summary must be combined with the earlier one.
    const report = await stage.compactWithReport(messages, 120, lengthCounter);
    expect(model.calls).toHaveLength(1);
    const sent = model.calls[0]!.messages;
    expect(sent.slice(0, messages.length)).toEqual(messages);
    expect(sent).toHaveLength(messages.length + 1);
    const summaries = report.messages!.filter((message) => isSummaryMessage(message));
    expect(summaries).toHaveLength(1);
    expect(report.standsFor![0]!.originals).toEqual(messages.slice(1, -1));
    expect(report.messages!.at(-1)).toBe(messages.at(-1));
  });

  test("`asSent` (the list before an earlier stage rewrote tool results in place) is what the call resends, unless it does not line up", async () => {
    const messages = chat();
    const shortened = messages.map((message) => (message instanceof ToolMessage ? new ToolMessage({ tool_call_id: message.tool_call_id, name: "search", content: "stored" }) : message));
    const stage = () => new SummarizationCompactor({ model: summarizer(), summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null });
    const lined = stage();
    await lined.compactWithReport(shortened, 300, lengthCounter, { asSent: messages });
    const model = lined.model as ReturnType<typeof summarizer>;
    expect(model.calls[0]!.messages.slice(0, -1)).toEqual(messages.slice(0, -2));
    // A user message that differs: the list did not come from in-place rewrites, so the list itself is sent.
    const other = [...messages];
    other[1] = new HumanMessage("something else");
    const unlined = stage();
    await unlined.compactWithReport(shortened, 300, lengthCounter, { asSent: other });
    expect((unlined.model as ReturnType<typeof summarizer>).calls[0]!.messages.slice(0, -1)).toEqual(shortened.slice(0, -2));
  });

  test("what followed the model's latest answer is not resent; a stretch reaching past that answer is sent with all of it", async () => {
    // An agent mid-task: the latest answer called a tool whose (large) result came back after the last request.
    const messages = chat().slice(0, -1);
    messages.push(new HumanMessage("the task"), new AIMessage({ content: "", tool_calls: [{ id: "t", name: "search", args: { q: "t" }, type: "tool_call" }] }));
    messages.push(new ToolMessage({ tool_call_id: "t", name: "search", content: `fresh ${"f".repeat(400)}` }));
    const model = summarizer();
    await new SummarizationCompactor({ model, summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null }).compactWithReport(messages, 900, lengthCounter);
    const sent = model.calls[0]!.messages;
    expect(sent.slice(0, -1)).toEqual(messages.slice(0, -2));
    expect(sent.some((message) => String(message.content).startsWith("fresh"))).toBe(false);
    // Under a target that takes every turn, the stretch ends at the task: the list is sent whole.
    const deep = summarizer();
    const history = chat();
    await new SummarizationCompactor({ model: deep, summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null }).compactWithReport(history, 120, lengthCounter);
    expect(deep.calls[0]!.messages.slice(0, -1)).toEqual(history);
  });

  test("a stretch with a gap in it (a protected message) is sent as a transcript", async () => {
    const model = summarizer();
    const messages = chat();
    const pinned = messages[5]!;
    const stage = new SummarizationCompactor({ model, summaryPrompt: "conversation", maxSummaryTokens: 50, cache: null, circuitBreaker: null, protect: (message) => message === pinned });
    await stage.compactWithReport(messages, 900, lengthCounter);
    expect(model.calls[0]!.messages).toHaveLength(2);
    expect(String(model.calls[0]!.messages[1]!.content)).toMatch(/^<conversation_to_summarize>/);
  });

  test("a conversation over maxSummaryInputTokens is sent as a transcript", async () => {
    const model = summarizer();
    const stage = new SummarizationCompactor({ model, summaryPrompt: "conversation", maxSummaryTokens: 50, maxSummaryInputTokens: 4_000, cache: null, circuitBreaker: null });
    await stage.compactWithReport(chat(), 900, lengthCounter);
    for (const call of model.calls) expect(String(call.messages.at(-1)!.content)).toMatch(/^<conversation_to_summarize>/);
  });

  test("the default is a transcript of the stretch alone, with any instructions", async () => {
    const model = summarizer();
    await new SummarizationCompactor({ model, maxSummaryTokens: 50, cache: null, circuitBreaker: null }).compactWithReport(chat(), 900, lengthCounter, { instructions: "keep the numbers" });
    const [system, transcript] = model.calls[0]!.messages;
    expect(system!.type).toBe("system");
    expect(String(system!.content)).toContain("keep the numbers");
    expect(String(transcript!.content)).toMatch(/^<conversation_to_summarize>/);
    expect(model.calls[0]!.tools).toEqual([]);
  });

  test("bad options are named", async () => {
    expect(() => new SummarizationCompactor({ model: summarizer(), summaryPrompt: "cached" as never })).toThrow('`summaryPrompt` must be "transcript" or "conversation", got "cached"');
    const stage = new SummarizationCompactor({ model: summarizer(), cache: null });
    await expect(stage.compact(chat(), 900, lengthCounter, { instructions: 7 as never })).rejects.toThrow("`instructions` must be a string, got 7");
    await expect(stage.compact(chat(), 900, lengthCounter, { request: { tools: [null] } as never })).rejects.toThrow(/^`request.tools\[0\]` must be a tool/);
  });
});
