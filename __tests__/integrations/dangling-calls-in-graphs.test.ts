/**
 * Dangling tool calls as LangGraph really leaves them, on real graphs with a
 * checkpointer: a tool that throws with error handling off (a ToolNode with
 * `handleToolErrors: false`; in `createAgent`, a tool middleware that
 * throws), an `interrupt()` answered by a new human message instead of a
 * resume, and an invocation aborted while its tool ran. The next request
 * the model is sent must answer each such call with a synthetic result and
 * be accepted by the providers' own converters; the checkpointed state keeps
 * the calls unanswered; a normal step and an interrupt that is resumed get
 * no synthetic result.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { convertMessagesToCompletionsMessageParams } from "@langchain/openai";
import { createMiddleware } from "langchain";
import { z } from "zod/v4";
import { CompactingChatMessageHistory, isRepairedCallResult } from "../../src";
import type { ScriptedChatModel } from "../../src/testing";
import { middlewareAgent, nodeAgent, question, thread, weatherModel } from "../support/runtime-agents";
import type { AgentGraph } from "../support/runtime-agents";
import { toolPairingProblems } from "../support/tool-pairing";

const explode = tool(async () => {
  throw new Error("the deploy service is down");
}, { name: "explode", description: "Deploys.", schema: z.object({}) });

const confirm = tool(async () => `confirmed: ${String(interrupt({ question: "Deploy now?" }))}`, { name: "confirm", description: "Asks the user.", schema: z.object({}) });

/** Waits until the run is aborted. */
const slow = tool(
  async (_input, config) =>
    new Promise<string>((_resolve, reject) => {
      const signal = (config as { signal?: AbortSignal }).signal;
      signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      started.resolve?.();
    }),
  { name: "slow", description: "Takes long.", schema: z.object({}) },
);
const started: { resolve?: () => void } = {};

/** The question that leads the model to call `tool` (with a weather call beside it, which gets no result either). */
const BREAKING: Record<Shape, string> = { throw: "please explode", interrupt: "please confirm", abort: "please slow" };
type Shape = "throw" | "interrupt" | "abort";
const TOOL_OF: Record<Shape, string> = { throw: "explode", interrupt: "confirm", abort: "slow" };

function model(): ScriptedChatModel {
  return weatherModel({
    script: (messages, call) => {
      const last = messages.at(-1)!;
      if (last.type !== "human") return undefined;
      const shape = (Object.keys(BREAKING) as Shape[]).find((key) => last.text === BREAKING[key]);
      if (shape === undefined) return undefined;
      return { content: "", tool_calls: [{ name: TOOL_OF[shape], args: {}, id: `${shape}-${call}` }, ...(shape === "interrupt" ? [] : [{ name: "weather", args: { city: "Oslo" }, id: `w-${call}` }])] };
    },
  });
}

/** In `createAgent`, a tool middleware that throws is how a tool error reaches the caller (ToolNode bubbles it up). */
const throwingToolMiddleware = createMiddleware({
  name: "ExplodeGuard",
  wrapToolCall: async (request, handler) => {
    if (request.toolCall.name === "explode") throw new Error("explode is not allowed here");
    return handler(request);
  },
});

type Setup = "middleware view" | "middleware commit" | "node view" | "node view (CompactionAnnotation)" | "node commit";
const SETUPS: Setup[] = ["middleware view", "middleware commit", "node view", "node view (CompactionAnnotation)", "node commit"];

function build(setup: Setup, scripted: ScriptedChatModel, repairDanglingToolCalls = true): AgentGraph {
  const mode = setup.endsWith("commit") ? "commit" : "view";
  const tools = [explode, confirm, slow];
  if (setup.startsWith("middleware")) return middlewareAgent(scripted, { mode, repairDanglingToolCalls }, tools, [throwingToolMiddleware]).agent;
  return nodeAgent(scripted, { mode, repairDanglingToolCalls }, tools, { handleToolErrors: false }, setup.endsWith("(CompactionAnnotation)")).agent;
}

/** Leaves the thread with the calls of `shape`'s question unanswered. */
async function breakThread(agent: AgentGraph, shape: Shape, id: string): Promise<void> {
  if (shape === "interrupt") {
    const result = (await agent.invoke(question(BREAKING.interrupt), thread(id))) as { __interrupt__?: unknown[] };
    expect(result.__interrupt__).toHaveLength(1);
    return;
  }
  if (shape === "throw") {
    await expect(agent.invoke(question(BREAKING.throw), thread(id))).rejects.toThrow(/explode|deploy service/);
    return;
  }
  const controller = new AbortController();
  const running = new Promise<void>((resolve) => (started.resolve = resolve));
  const run = agent.invoke(question(BREAKING.abort), thread(id, { signal: controller.signal }));
  await running;
  controller.abort();
  await expect(run).rejects.toThrow();
}

/** The calls of the last AI message of `messages` that carries calls. */
function lastCalls(messages: readonly BaseMessage[]): string[] {
  const message = [...messages].reverse().find((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) as AIMessage;
  return message.tool_calls!.map((call) => call.id!);
}

/** Throws unless OpenAI's and Anthropic's own converters turn `messages` into a request their APIs accept (call/result pairing). */
function assertProvidersAccept(messages: BaseMessage[]): void {
  const completions = convertMessagesToCompletionsMessageParams({ messages, model: "gpt-4o" }) as unknown as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
  completions.forEach((message, index) => {
    if (message.role !== "assistant" || !message.tool_calls?.length) return;
    const answered = new Set<string>();
    for (let next = index + 1; next < completions.length && completions[next]!.role === "tool"; next += 1) answered.add(completions[next]!.tool_call_id!);
    const missing = message.tool_calls.filter((call) => !answered.has(call.id));
    if (missing.length > 0) throw new Error(`openai: tool_calls ${missing.map((call) => call.id).join(",")} must be followed by tool messages`);
  });
  const anthropic = convertPromptToAnthropic(new ChatPromptValue(messages)) as { messages: { role: string; content: unknown }[] };
  const blocks = (index: number) => {
    const content = anthropic.messages[index]?.content;
    return (Array.isArray(content) ? content : []) as { type: string; id?: string; tool_use_id?: string }[];
  };
  anthropic.messages.forEach((message, index) => {
    const uses = blocks(index).filter((block) => block.type === "tool_use").map((block) => block.id!);
    if (message.role !== "assistant" || uses.length === 0) return;
    const results = new Set(blocks(index + 1).filter((block) => block.type === "tool_result").map((block) => block.tool_use_id!));
    const missing = uses.filter((id) => !results.has(id));
    if (anthropic.messages[index + 1]?.role !== "user" || missing.length > 0) throw new Error(`anthropic: tool_use ids were found without tool_result blocks immediately after: ${missing.join(",")}`);
  });
}

describe.each(SETUPS)("%s", (setup) => {
  describe.each(["throw", "interrupt", "abort"] as const)("after a %s", (shape) => {
    test("the next request answers each dangling call with a synthetic result; the state keeps them unanswered", async () => {
      const scripted = model();
      const agent = build(setup, scripted);
      await agent.invoke(question("What is the weather in Lima?"), thread("t"));
      await breakThread(agent, shape, "t");
      const broken = ((await agent.getState(thread("t"))).values as { messages: BaseMessage[] }).messages;
      const dangling = lastCalls(broken);
      expect(dangling.length).toBe(shape === "interrupt" ? 1 : 2);
      expect(toolPairingProblems(broken)).not.toEqual([]);

      const before = scripted.calls.length;
      await agent.invoke(question("What is the weather in Quito?"), thread("t"));
      const request = scripted.calls[before]!.messages;
      expect(toolPairingProblems(request)).toEqual([]);
      expect(() => assertProvidersAccept(request)).not.toThrow();
      // One synthetic result per dangling call, right after the message that made the calls.
      const synthetic = request.filter((m) => isRepairedCallResult(m));
      expect(synthetic.map((m) => (m as { tool_call_id?: string }).tool_call_id).sort()).toEqual([...dangling].sort());
      const callAt = request.findIndex((m) => AIMessage.isInstance(m) && m.tool_calls?.some((call) => call.id === dangling[0]));
      expect(request.slice(callAt + 1, callAt + 1 + dangling.length).every((m) => isRepairedCallResult(m))).toBe(true);
      expect(synthetic[0]!.text).toMatch(/interrupted/);

      // The state is not repaired: the calls are still unanswered there, and no synthetic result was written.
      const after = ((await agent.getState(thread("t"))).values as { messages: BaseMessage[] }).messages;
      expect(after.some((m) => isRepairedCallResult(m))).toBe(false);
      const answered = new Set(after.flatMap((m) => (m.type === "tool" ? [(m as { tool_call_id?: string }).tool_call_id] : [])));
      expect(dangling.filter((id) => answered.has(id))).toEqual([]);
      // Every request after it is valid too, and the run answered.
      for (const call of scripted.calls.slice(before)) expect(toolPairingProblems(call.messages)).toEqual([]);
      expect(after.at(-1)!.type).toBe("ai");
    });
  });

  test("with repairDanglingToolCalls: false the request carries the dangling call, which the converters' pairing rules reject", async () => {
    const scripted = model();
    const agent = build(setup, scripted, false);
    await breakThread(agent, "throw", "t");
    const before = scripted.calls.length;
    await agent.invoke(question("What is the weather in Quito?"), thread("t"));
    const request = scripted.calls[before]!.messages;
    expect(request.some((m) => isRepairedCallResult(m))).toBe(false);
    expect(toolPairingProblems(request)).not.toEqual([]);
    expect(() => assertProvidersAccept(request)).toThrow(/tool/);
  });

  test("calls of the step in progress are left alone: normal steps and a resumed interrupt get no synthetic result", async () => {
    const scripted = model();
    const agent = build(setup, scripted);
    await agent.invoke(question("What is the weather in Lima?"), thread("t"));
    await breakThread(agent, "interrupt", "t");
    await agent.invoke(new Command({ resume: "yes" }), thread("t"));
    const state = ((await agent.getState(thread("t"))).values as { messages: BaseMessage[] }).messages;
    expect(state.some((m) => m.type === "tool" && m.text === "confirmed: yes")).toBe(true);
    for (const call of scripted.calls) expect(call.messages.some((m) => isRepairedCallResult(m))).toBe(false);
    expect(toolPairingProblems(state)).toEqual([]);
  });
});

describe.each(["view", "commit"] as const)("the history wrapper (%s mode)", (mode) => {
  test("a read answers the calls of an interrupted exchange; the store keeps them as they are; calls still in progress are left alone", async () => {
    const store = new InMemoryChatMessageHistory();
    const history = new CompactingChatMessageHistory({ history: store, contextWindow: 100_000, mode });
    const call = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "weather", args: { city: "Oslo" }, type: "tool_call" }, { id: "c2", name: "weather", args: { city: "Lima" }, type: "tool_call" }] });
    await history.addMessages([new HumanMessage("Weather in Oslo and Lima?"), call, new ToolMessage({ tool_call_id: "c1", content: "Oslo: rain" })]);
    // The exchange is still in progress: the missing result may yet come.
    expect((await history.getMessages()).some((m) => isRepairedCallResult(m))).toBe(false);
    await history.addMessage(new HumanMessage("Never mind, what about Quito?"));
    const read = await history.getMessages();
    expect(toolPairingProblems(read)).toEqual([]);
    expect(() => assertProvidersAccept(read)).not.toThrow();
    expect(read.map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "human"]);
    expect(isRepairedCallResult(read[3]!)).toBe(true);
    expect((read[3] as ToolMessage).tool_call_id).toBe("c2");
    const stored = await store.getMessages();
    expect(stored.some((m) => isRepairedCallResult(m))).toBe(false);
    expect(stored).toHaveLength(4);
  });
});
