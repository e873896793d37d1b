/**
 * The agent runtime around compaction, on one `createAgent` thread, offline:
 *
 * 1. the provider refuses a request as too long (its real window is smaller
 *    than the one configured): the middleware learns from the error,
 *    compacts lower and sends the request once more;
 * 2. a tool waits on `interrupt()` and the user asks something else instead
 *    of answering: the next request answers the dangling call with a
 *    synthetic result, so the provider accepts it;
 * 3. the agent calls the compaction tool with instructions, and the next
 *    model call compacts, the instructions handed to the summary model;
 * 4. every compaction is a LangChain custom event, printed as it arrives.
 *
 *   npx tsx examples/agent-runtime.ts
 */
import { ContextOverflowError } from "@langchain/core/errors";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { interrupt, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter, COMPACTION_TOOL_NAME, createCompactionTool, isRepairedCallResult, SlidingWindowCompactor, SummarizationCompactor } from "../src";
import type { CompactionEventData } from "../src";
import { compactionMiddleware } from "../src/integrations/middleware";
import { ScriptedChatModel } from "../src/testing";
import { runIfMain } from "./support/run-if-main";

/** The window the agent is configured with, and the provider's real one (unknown to the agent). */
export const CONFIGURED_WINDOW = 8_000;
export const REAL_WINDOW = 3_000;
export const INSTRUCTIONS = "keep every city already looked up";
const CONFIRM = "Deploy the forecast page, after asking me.";
const COMPACT = "Please compact our conversation.";

const weather = tool(async ({ city }: { city: string }) => `${city}: ${"sunny, 24 degrees, light wind from the west; ".repeat(14)}`, {
  name: "weather",
  description: "The weather forecast for a city.",
  schema: z.object({ city: z.string() }),
});

const confirm = tool(async () => `The user said: ${String(interrupt({ question: "Deploy now?" }))}`, {
  name: "confirm",
  description: "Asks the user to confirm.",
  schema: z.object({}),
});

/** What the example shows: the events heard, and what the models were sent. */
export interface RuntimeRun {
  events: { name: string; data: CompactionEventData }[];
  model: ScriptedChatModel;
  summarizer: ScriptedChatModel;
  /** Indices of the model calls the provider refused. */
  refused: number[];
  /** The tool's answer to the agent. */
  toolAnswer: string;
  /** The request sent after the interrupted call, and that call's id. */
  repairedRequest: BaseMessage[];
  danglingCallId: string;
}

export async function main(): Promise<RuntimeRun> {
  const refused: number[] = [];
  const model: ScriptedChatModel = new ScriptedChatModel({
    reply: (messages, call) => {
      // The provider: it refuses what is over its real window, as ChatAnthropic reports it.
      const tokens = model.requestTokens(model.calls[call]!)!;
      if (tokens > REAL_WINDOW) {
        refused.push(call);
        throw new ContextOverflowError(`prompt is too long: ${tokens} tokens > ${REAL_WINDOW} maximum`);
      }
      const last = messages.at(-1)!;
      if (last.type === "human" && last.text === CONFIRM) return { content: "", tool_calls: [{ name: "confirm", args: {} }] };
      if (last.type === "human" && last.text === COMPACT) return { content: "", tool_calls: [{ name: COMPACTION_TOOL_NAME, args: { instructions: INSTRUCTIONS } }] };
      if (last.type === "tool") return `Done (${last.text.slice(0, 30)}...).`;
      const city = /weather in (\w+)/.exec(last.text)?.[1] ?? "Lisbon";
      return { content: "", tool_calls: [{ name: "weather", args: { city } }] };
    },
  });
  const summarizer = new ScriptedChatModel({ reply: () => "## Cities looked up\n- all sunny, 24 degrees", usage: false });

  const middleware = compactionMiddleware({
    contextWindow: CONFIGURED_WINDOW,
    compactor: [new SummarizationCompactor({ model: summarizer, maxSummaryTokens: 100 }), new SlidingWindowCompactor()],
  });
  const agent = createAgent({
    model,
    tools: [weather, confirm, createCompactionTool(middleware)],
    systemPrompt: "You are a weather assistant.",
    middleware: [middleware],
    checkpointer: new MemorySaver(),
  });

  const events: RuntimeRun["events"] = [];
  const printEvents = {
    handleCustomEvent(name: string, data: CompactionEventData) {
      events.push({ name, data });
      const { before, after } = data.breakdown;
      const overflow = data.overflow ? ` (provider: ${data.overflow.requestTokens} > ${data.overflow.limitTokens})` : "";
      console.log(`  [event ${name}] ${data.strategy}: ${data.tokensBefore} -> ${data.tokensAfter} tokens, ${data.removed} removed${overflow}; tool results ${before.toolResults} -> ${after.toolResults}`);
    },
  };
  const config = { configurable: { thread_id: "runtime" }, callbacks: [printEvents] };
  const ask = (text: string) => agent.invoke({ messages: [new HumanMessage(text)] }, config);

  console.log(`1. Overflow: configured for ${CONFIGURED_WINDOW} tokens, the provider takes ${REAL_WINDOW}`);
  const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Accra", "Perth", "Lima", "Riga", "Dakar", "Kyoto", "Cusco", "Turin", "Bern", "Cairo"];
  for (const city of cities) await ask(`What is the weather in ${city}?`);
  const sizes = model.calls.map((call) => model.requestTokens(call)!);
  console.log(`  ${cities.length} questions, ${model.calls.length} model calls, ${refused.length} refused; largest request accepted: ${Math.max(...sizes.filter((_, i) => !refused.includes(i)))} tokens`);

  console.log("2. Dangling call: a tool waits on interrupt(), the user asks something else");
  await ask(CONFIRM);
  const before = model.calls.length;
  await ask("Actually, what is the weather in Oslo?");
  const repairedRequest = model.calls[before]!.messages;
  const synthetic = repairedRequest.find((message) => isRepairedCallResult(message))!;
  const danglingCallId = (synthetic as { tool_call_id?: string }).tool_call_id ?? "";
  console.log(`  the model was sent a result for call ${danglingCallId}: ${synthetic.text}`);

  console.log("3. The compaction tool");
  const result = await ask(COMPACT);
  const toolAnswer = result.messages.filter((message) => message.type === "tool").at(-1)!.text;
  console.log(`  tool: ${toolAnswer}`);
  const asked = summarizer.calls.some((call) => call.messages.some((message) => message.text.includes(INSTRUCTIONS)));
  console.log(`  the summary model was told to ${asked ? "" : "NOT "}"${INSTRUCTIONS}"`);
  console.log(`  last request: ${approximateTokenCounter(model.calls.at(-1)!.messages)} tokens`);
  return { events, model, summarizer, refused, toolAnswer, repairedRequest, danglingCallId };
}

runIfMain(module, main);
