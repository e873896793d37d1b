/**
 * Rules of `compactionMiddleware` that a mutation run of the integration suites showed unpinned (TESTING.md): commit mode hands a structured-output response on as it is, and the request's overhead (tool
 * schemas, system prompt) is counted once per distinct pair, and again whenever a middleware changes either.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, createMiddleware, toolStrategy } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter, isOmissionNote } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";

const clock = tool(async ({ zone }: { zone: string }) => `${zone}: 09:00`, {
  name: "clock",
  description: "The local time in a time zone, for scheduling.",
  schema: z.object({ zone: z.string().describe("An IANA time zone") }),
});

/** 20 old exchanges of about 80 tokens each (approximate counter). */
function longHistory(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = 0; turn < 20; turn += 1) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `Meeting ${turn}: ${"when can we meet ".repeat(15)}` }));
    messages.push(new AIMessage({ id: `a${turn}`, content: `Slot ${turn}: ${"tuesday at ten ".repeat(15)}` }));
  }
  return messages;
}

/** A counter that records how often it was shown a message carrying `marker`. */
function markerCounter(marker: string) {
  const seen = { times: 0 };
  const counter = (messages: BaseMessage[]) => {
    for (const message of messages) if (message.text.includes(marker)) seen.times += 1;
    return approximateTokenCounter(messages);
  };
  return { counter, seen };
}

/** Replies with one clock call first, then plain text: two model calls per run. */
const twoCalls = () =>
  new ScriptedChatModel({
    usage: false,
    reply: (_messages, call) => (call === 0 ? { content: "", tool_calls: [{ id: "c0", name: "clock", args: { zone: "Europe/Paris" } }] } : "booked"),
  });

describe("compactionMiddleware: commit mode and structured output", () => {
  test("a structured response reaches the agent as it is, after the state was compacted", async () => {
    const Booking = z.object({ day: z.string(), time: z.string() });
    const model: ScriptedChatModel = new ScriptedChatModel({
      usage: approximateTokenCounter,
      reply: (_messages, call) => {
        const name = model.calls[call]!.tools.find((t) => t !== "clock")!;
        return { content: "", tool_calls: [{ id: `so-${call}`, name, args: { day: "tuesday", time: "10:00" } }] };
      },
    });
    const agent = createAgent({
      model,
      tools: [clock],
      responseFormat: toolStrategy(Booking),
      middleware: [compactionMiddleware({ contextWindow: 2_000, mode: "commit" })],
      checkpointer: new MemorySaver(),
    });
    const output = await agent.invoke({ messages: [...longHistory(), new HumanMessage({ id: "task", content: "Book the slot." })] }, { configurable: { thread_id: "booking" } });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.messages.some((m) => isOmissionNote(m))).toBe(true);
    expect(output.structuredResponse).toEqual({ day: "tuesday", time: "10:00" });
  });
});

describe("compactionMiddleware: the overhead is counted once per tools and system prompt", () => {
  test.each(["view", "commit"] as const)("%s mode: two model calls with the same tools and prompt count the schemas once", async (mode) => {
    const { counter, seen } = markerCounter("for scheduling");
    const model = twoCalls();
    const agent = createAgent({ model, tools: [clock], systemPrompt: "You book meetings.", middleware: [compactionMiddleware({ contextWindow: 100_000, mode, tokenCounter: counter })] });
    await agent.invoke({ messages: [new HumanMessage("Book a meeting.")] });
    expect(model.calls).toHaveLength(2);
    expect(seen.times).toBe(1);
  });

  test("a system prompt another middleware changes between calls is counted again", async () => {
    const { counter, seen } = markerCounter("second prompt");
    const model = twoCalls();
    let call = 0;
    const changing = createMiddleware({
      name: "ChangingPrompt",
      wrapModelCall: async (request, handler) => {
        call += 1;
        return handler({ ...request, systemMessage: new SystemMessage(call === 1 ? "first prompt" : "second prompt, a little longer") });
      },
    });
    const agent = createAgent({ model, tools: [clock], middleware: [changing, compactionMiddleware({ contextWindow: 100_000, tokenCounter: counter })] });
    await agent.invoke({ messages: [new HumanMessage("Book a meeting.")] });
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.messages[0]!.text).toBe("second prompt, a little longer");
    expect(seen.times).toBe(1);
  });

  test("a system prompt of an image alone is sent, so it is counted (empty text is not an empty prompt)", async () => {
    const seen = { systemPrompts: 0 };
    const counter = (messages: BaseMessage[]) => {
      // The tool schemas reach the counter as a system message of text; the prompt is the one with blocks.
      for (const message of messages) if (message.type === "system" && Array.isArray(message.content)) seen.systemPrompts += 1;
      return approximateTokenCounter(messages);
    };
    const imageOnly = createMiddleware({
      name: "ImagePrompt",
      wrapModelCall: async (request, handler) =>
        handler({ ...request, systemMessage: new SystemMessage({ content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }) }),
    });
    const model = twoCalls();
    const agent = createAgent({ model, tools: [clock], middleware: [imageOnly, compactionMiddleware({ contextWindow: 100_000, tokenCounter: counter })] });
    await agent.invoke({ messages: [new HumanMessage("Book a meeting.")] });
    expect(model.calls).toHaveLength(2);
    // The middleware builds a new (equal) prompt object for each call, so each call counts it once.
    expect(seen.systemPrompts).toBe(2);
  });

  test("tools another middleware adds on the second call are counted then", async () => {
    const { counter, seen } = markerCounter("for scheduling");
    const model = twoCalls();
    let call = 0;
    const lateTools = createMiddleware({
      name: "LateTools",
      wrapModelCall: async (request, handler) => {
        call += 1;
        return handler(call === 1 ? { ...request, tools: [] } : request);
      },
    });
    const agent = createAgent({
      model,
      tools: [clock],
      systemPrompt: "You book meetings.",
      middleware: [lateTools, compactionMiddleware({ contextWindow: 100_000, tokenCounter: counter })],
    });
    await agent.invoke({ messages: [new HumanMessage("Book a meeting.")] });
    expect(model.calls.map((c) => c.tools)).toEqual([[], ["clock"]]);
    expect(seen.times).toBe(1);
  });
});
