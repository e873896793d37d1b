/**
 * compactionMiddleware on a `createAgent` agent: a weather agent answers many
 * questions on one thread. In "view" mode the model is sent a compacted
 * request while the checkpointed state keeps the whole history; in "commit"
 * mode the state itself is compacted. Offline with a scripted model; with
 * OPENAI_API_KEY set, the same agent runs on ChatOpenAI.
 *
 *   npx tsx examples/middleware.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter, isOmissionNote } from "../src";
import { compactionMiddleware } from "../src/integrations/middleware";
import { ScriptedChatModel } from "../src/testing";
import type * as OpenAI from "@langchain/openai";
import { runIfMain } from "./support/run-if-main";

const weather = tool(async ({ city }: { city: string }) => `${city}: ${"sunny, 24 degrees, light wind from the west; ".repeat(14)}`, {
  name: "weather",
  description: "The weather forecast for a city.",
  schema: z.object({ city: z.string().describe("The city") }),
});

/** A small window, so that a dozen questions need compaction. */
export const WINDOW = { contextWindow: 3_000, compactAt: 0.7, compactTo: 0.4 } as const;
export const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Accra", "Perth", "Lima", "Riga", "Dakar", "Kyoto", "Cusco", "Turin"];

async function chatModel(): Promise<{ model: BaseChatModel; scripted: ScriptedChatModel | null }> {
  if (process.env.OPENAI_API_KEY) {
    // \`require\`, typed from this CommonJS file's own view of the package: an \`import()\` here would see the
    // package's ES-module types, whose \`@langchain/core\` classes are not the CommonJS ones imported above.
    const { ChatOpenAI } = require("@langchain/openai") as typeof OpenAI;
    return { model: new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 }), scripted: null };
  }
  const scripted = new ScriptedChatModel({
    reply: (messages, call) => {
      const last = messages.at(-1)!;
      if (last.type === "tool") return `It will be sunny in ${last.text.split(":")[0]}.`;
      const city = /weather in (\w+)/.exec(last.text)?.[1] ?? "Lisbon";
      return { content: "", tool_calls: [{ id: `call-${call}`, name: "weather", args: { city } }] };
    },
  });
  return { model: scripted, scripted };
}

/** One mode's run: the checkpointed messages at the end, and what the scripted model was sent (null for a real model). */
export interface MiddlewareRun {
  mode: "view" | "commit";
  messages: BaseMessage[];
  scripted: ScriptedChatModel | null;
}

async function run(mode: "view" | "commit"): Promise<MiddlewareRun> {
  const { model, scripted } = await chatModel();
  const agent = createAgent({
    model,
    tools: [weather],
    systemPrompt: "You are a weather assistant. Use the weather tool, then answer in one sentence.",
    middleware: [compactionMiddleware({ ...WINDOW, mode })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: `example-${mode}` } };
  for (const city of cities) {
    await agent.invoke({ messages: [new HumanMessage(`What is the weather in ${city}?`)] }, config);
  }
  const state = (await agent.graph.getState(config)).values as { messages: BaseMessage[] };
  console.log(`\n${mode} mode: ${cities.length} questions`);
  console.log(`  state holds ${state.messages.length} messages (${approximateTokenCounter(state.messages)} tokens)${state.messages.some(isOmissionNote) ? ", with a note" : ""}`);
  if (scripted !== null) {
    const sizes = scripted.calls.map((call) => scripted.requestTokens(call)!);
    const withNote = scripted.calls.filter((call) => call.messages.some(isOmissionNote)).length;
    console.log(`  model calls: ${scripted.calls.length}, largest request ${Math.max(...sizes)} tokens (trigger ${WINDOW.contextWindow * WINDOW.compactAt}), ${withNote} requests carried a note`);
    console.log(`  last request: ${scripted.calls.at(-1)!.messages.length} messages`);
  }
  return { mode, messages: state.messages, scripted };
}

export async function main(): Promise<{ view: MiddlewareRun; commit: MiddlewareRun }> {
  const view = await run("view");
  const commit = await run("commit");
  return { view, commit };
}

runIfMain(module, main);
