/**
 * compactMessages in LCEL chains: piped straight into a model, and inside
 * `RunnablePassthrough.assign` feeding a prompt's `MessagesPlaceholder`.
 * Offline with a scripted model that reports what it was sent; with
 * OPENAI_API_KEY set, the chains run on ChatOpenAI.
 *
 *   npx tsx examples/lcel.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda, RunnablePassthrough } from "@langchain/core/runnables";
import { RunCollectorCallbackHandler } from "@langchain/core/tracers/run_collector";
import { compactMessages, isOmissionNote, tiktokenCounter } from "../src";
import type { TokenCounter } from "../src";
import { ScriptedChatModel } from "../src/testing";
import type * as OpenAI from "@langchain/openai";
import { runIfMain } from "./support/run-if-main";

/** A long chat about travel plans: 30 exchanges, then a new question. */
export function chatHistory(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = 0; turn < 30; turn += 1) {
    messages.push(new HumanMessage(`Day ${turn + 1} of the trip: where should we go, and what should we eat there?`));
    messages.push(new AIMessage(`On day ${turn + 1}, visit the old town in the morning, ${"walk by the river, see the market, ".repeat(4)}and try the local stew.`));
  }
  messages.push(new HumanMessage("Which of those days would you skip if it rains?"));
  return messages;
}

async function model(): Promise<{ model: BaseChatModel; scripted: ScriptedChatModel | null }> {
  if (process.env.OPENAI_API_KEY) {
    // \`require\`, typed from this CommonJS file's own view of the package: an \`import()\` here would see the
    // package's ES-module types, whose \`@langchain/core\` classes are not the CommonJS ones imported above.
    const { ChatOpenAI } = require("@langchain/openai") as typeof OpenAI;
    return { model: new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 }), scripted: null };
  }
  const scripted = new ScriptedChatModel({
    reply: (messages) => `(scripted) I was sent ${messages.length} messages; I would skip day 3.`,
  });
  return { model: scripted, scripted };
}

async function summarize(label: string, sent: BaseMessage[] | undefined, counter: TokenCounter): Promise<void> {
  if (!sent) return;
  const note = sent.find((message) => isOmissionNote(message));
  console.log(`${label}: the model was sent ${sent.length} messages, ${await counter(sent)} tokens`);
  if (note) console.log(`  note: ${note.text}`);
}

/** The token targets of the three forms, and the second one's note. */
export const PIPE_TARGET = 600;
export const PROMPT_TARGET = 400;
export const FUNCTION_TARGET = 200;
export const PROMPT_NOTE = "[{num_removed} older messages of this chat are not shown.]";

/** What the example did, for a reader (or a test) to look at: the lists themselves, not a description of them. */
export interface LcelExampleResult {
  history: BaseMessage[];
  /** What the model was sent by each chain; null when a real model ran (nothing recorded). */
  piped: BaseMessage[] | null;
  prompted: BaseMessage[] | null;
  /** The child runs of the piped chain's trace, by name. */
  traced: string[];
  /** The function form at FUNCTION_TARGET, and its result for a target the history fits. */
  compacted: BaseMessage[];
  unchanged: BaseMessage[];
}

export async function main(): Promise<LcelExampleResult> {
  const history = chatHistory();
  const counter = tiktokenCounter("o200k_base");
  console.log(`history: ${history.length} messages, ${await counter(history)} tokens`);

  // 1. Piped straight into the model, traced under the run name "compactMessages".
  const first = await model();
  const collector = new RunCollectorCallbackHandler();
  const chain = compactMessages({ targetTokens: PIPE_TARGET, tokenCounter: counter }).pipe(first.model);
  const reply = await chain.invoke(history, { callbacks: [collector] });
  await summarize("pipe", first.scripted?.calls[0]?.messages, counter);
  const traced = collector.tracedRuns[0]?.child_runs?.map((run) => run.name) ?? [];
  console.log(`  trace: ${traced.join(" -> ")}`);
  console.log(`  reply: ${reply.text}`);

  // 2. Inside RunnablePassthrough.assign, so a prompt's MessagesPlaceholder gets the compacted history.
  const second = await model();
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "You are a {role}. Answer in one sentence."],
    new MessagesPlaceholder("history"),
  ]);
  const withPrompt = RunnablePassthrough.assign({
    history: RunnableLambda.from((input: { history: BaseMessage[] }) => input.history).pipe(
      compactMessages({ targetTokens: PROMPT_TARGET, tokenCounter: counter, omissionNote: PROMPT_NOTE }),
    ),
  })
    .pipe(prompt)
    .pipe(second.model);
  const answer = await withPrompt.invoke({ role: "travel planner", history });
  await summarize("prompt", second.scripted?.calls[0]?.messages, counter);
  console.log(`  reply: ${answer.text}`);

  // 3. The function form, for code that is not a chain.
  const compacted = await compactMessages(history, { targetTokens: FUNCTION_TARGET, tokenCounter: counter });
  const unchanged = await compactMessages(history, { targetTokens: 1e6 });
  console.log(`function: ${history.length} -> ${compacted.length} messages; unchanged input returns itself: ${unchanged === history}`);
  return {
    history,
    piped: first.scripted?.calls[0]?.messages ?? null,
    prompted: second.scripted?.calls[0]?.messages ?? null,
    traced,
    compacted,
    unchanged,
  };
}

runIfMain(module, main);
