/**
 * createCompactionNode as the `preModelHook` of a LangGraph `createReactAgent`:
 * an archive agent answers many questions on one checkpointed thread. In
 * "view" mode the state keeps the whole history and the model is sent a
 * compacted view whose cut stays put between compactions; in "commit" mode
 * the state itself is compacted. Offline with a scripted model; with
 * OPENAI_API_KEY set, the agent runs on ChatOpenAI.
 *
 *   npx tsx examples/langgraph.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { isOmissionNote } from "../src";
import { CompactionAnnotation, createCompactionNode, COMPACTION_VIEW_KEY } from "../src/integrations/langgraph";
import type { CompactionView } from "../src/integrations/langgraph";
import { ScriptedChatModel } from "../src/testing";
import type * as OpenAI from "@langchain/openai";
import { runIfMain } from "./support/run-if-main";

const lookup = tool(async ({ topic }: { topic: string }) => `Records on ${topic}: ${"a dated entry with names and places; ".repeat(15)}`, {
  name: "lookup",
  description: "Looks a topic up in the archive.",
  schema: { type: "object", properties: { topic: { type: "string", description: "The topic" } }, required: ["topic"] },
});
export const tools = [lookup];
export const PROMPT = "You are an archivist. Look topics up, then answer in one sentence.";
/** A small window, so that ten questions need compaction. */
export const WINDOW = { contextWindow: 2_000, compactAt: 0.7, compactTo: 0.4 } as const;
export const topics = ["the harbour", "the mill", "the fire of 1890", "the school", "the railway", "the bridge", "the market", "the church", "the flood", "the brewery"];

async function chatModel(): Promise<{ model: BaseChatModel; scripted: ScriptedChatModel | null }> {
  if (process.env.OPENAI_API_KEY) {
    // \`require\`, typed from this CommonJS file's own view of the package: an \`import()\` here would see the
    // package's ES-module types, whose \`@langchain/core\` classes are not the CommonJS ones imported above.
    const { ChatOpenAI } = require("@langchain/openai") as typeof OpenAI;
    return { model: new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 }), scripted: null };
  }
  const scripted = new ScriptedChatModel({
    // Its replies report usage as a provider does, which the hook anchors its estimate on.
    reply: (messages, call) => {
      const last = messages.at(-1)!;
      if (last.type === "tool") return `The archive has records on that: ${last.text.slice(11, 40)}...`;
      const topic = /about (.+)\?$/.exec(last.text)?.[1] ?? "the town";
      return { content: "", tool_calls: [{ id: `call-${call}`, name: "lookup", args: { topic } }] };
    },
  });
  return { model: scripted, scripted };
}

/** One mode's run: the checkpointed state at the end, and what the scripted model was sent (null for a real model). */
export interface LangGraphRun {
  mode: "view" | "commit";
  messages: BaseMessage[];
  view: CompactionView | null;
  scripted: ScriptedChatModel | null;
}

async function run(mode: "view" | "commit"): Promise<LangGraphRun> {
  const { model, scripted } = await chatModel();
  const agent = createReactAgent({
    llm: model,
    tools,
    prompt: PROMPT,
    stateSchema: CompactionAnnotation,
    // Tools and prompt are counted as overhead.
    preModelHook: createCompactionNode({ ...WINDOW, mode, tools, systemMessage: PROMPT }),
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: `archive-${mode}` } };
  for (const topic of topics) {
    const result = await agent.invoke({ messages: [new HumanMessage(`What do you know about ${topic}?`)] }, config);
    if (topic === topics[0]) console.log(`  first answer: ${result.messages.at(-1)!.text}`);
  }
  const state = (await agent.getState(config)).values as { messages: BaseMessage[]; [COMPACTION_VIEW_KEY]: CompactionView | null };
  console.log(`${mode}: the checkpointed state holds ${state.messages.length} messages`);
  if (mode === "view") {
    const view = state[COMPACTION_VIEW_KEY];
    const note = view?.added?.map((addition) => addition.message).find((message) => isOmissionNote(message));
    console.log(`  remembered cut: ${view?.hiddenIds.length ?? 0} messages hidden from the model; note: ${note?.text ?? "none"}`);
  } else {
    const note = state.messages.find((message) => isOmissionNote(message));
    console.log(`  note in state: ${note?.text ?? "none"}`);
  }
  if (scripted) {
    let compactions = 0;
    const requests = scripted.calls.map((call) => call.messages);
    requests.forEach((request, call) => {
      const previous = requests[call - 1];
      const keepsPrefix = previous !== undefined && previous.every((message, index) => request[index]?.id === message.id);
      if (call > 0 && !keepsPrefix) compactions += 1;
    });
    const sizes = scripted.calls.map((call) => scripted.requestTokens(call)!);
    const trigger = WINDOW.contextWindow * WINDOW.compactAt;
    console.log(`  ${scripted.calls.length} model calls, largest request ${Math.max(...sizes)} tokens (trigger ${trigger}); the prefix moved ${compactions} times`);
    const last = requests.at(-1)!;
    console.log(`  last request: ${last.length} messages (${last.map((message) => (isOmissionNote(message) ? "note" : message.type)).join(", ")})`);
  }
  return { mode, messages: state.messages, view: state[COMPACTION_VIEW_KEY] ?? null, scripted };
}

export async function main(): Promise<{ view: LangGraphRun; commit: LangGraphRun }> {
  const view = await run("view");
  const commit = await run("commit");
  return { view, commit };
}

runIfMain(module, main);
