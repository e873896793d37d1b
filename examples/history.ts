/**
 * CompactingChatMessageHistory with RunnableWithMessageHistory: a chat whose
 * stored history grows past its budget. In "commit" mode the store is
 * rewritten to the compacted conversation and the removed messages go to an
 * archive callback first. Runs on InMemoryChatMessageHistory, so it needs no
 * server; offline with a scripted model, or on ChatOpenAI when
 * OPENAI_API_KEY is set.
 *
 *   npx tsx examples/history.ts
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { approximateTokenCounter, CompactingChatMessageHistory, omissionNoteMetadata, isOmissionNote } from "../src";
import { ScriptedChatModel } from "../src/testing";
import type * as OpenAI from "@langchain/openai";
import { runIfMain } from "./support/run-if-main";

async function chatModel(): Promise<{ model: BaseChatModel; scripted: ScriptedChatModel | null }> {
  if (process.env.OPENAI_API_KEY) {
    // \`require\`, typed from this CommonJS file's own view of the package: an \`import()\` here would see the
    // package's ES-module types, whose \`@langchain/core\` classes are not the CommonJS ones imported above.
    const { ChatOpenAI } = require("@langchain/openai") as typeof OpenAI;
    return { model: new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 }), scripted: null };
  }
  const scripted = new ScriptedChatModel({
    reply: (messages) => `About "${messages.at(-1)!.text.slice(0, 30)}": ${"expect mild weather and a light breeze. ".repeat(3)}`,
  });
  return { model: scripted, scripted };
}

/** The budget of the stored history: compact at 600 tokens, down to 300. */
export const BUDGET = { contextWindow: 1_000, compactAt: 0.6, compactTo: 0.3 } as const;
/** The questions the example asks, in order. */
export const QUESTIONS = Array.from({ length: 14 }, (_, index) => `Question ${index}: will it rain in the hills this weekend?`);

/** What the example leaves behind: the store's messages, what the archive received, what the model was sent. */
export interface HistoryExampleResult {
  stored: BaseMessage[];
  archive: BaseMessage[];
  scripted: ScriptedChatModel | null;
}

export async function main(): Promise<HistoryExampleResult> {
  const { model, scripted } = await chatModel();
  const store = new InMemoryChatMessageHistory();
  const archive: BaseMessage[] = [];
  const history = new CompactingChatMessageHistory({
    history: store,
    ...BUDGET,
    mode: "commit",
    onEvict: (evicted) => void archive.push(...evicted.map((entry) => entry.message)),
  });

  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a brief weather assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chain = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: () => history,
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });

  for (const question of QUESTIONS) await chain.invoke({ input: question }, { configurable: { sessionId: "example" } });
  const questions = QUESTIONS.length;

  const stored = await store.getMessages();
  const note = stored.find(isOmissionNote);
  console.log(`${questions} questions asked, ${questions * 2} messages written`);
  console.log(`store holds ${stored.length} messages (${approximateTokenCounter(stored)} tokens), archive received ${archive.length}`);
  console.log(`note: ${note ? `"${note.text}" removed_messages=${omissionNoteMetadata(note)?.removed_messages}` : "none"}`);
  console.log(`nothing lost: ${stored.filter((m) => !isOmissionNote(m)).length + archive.length === questions * 2}`);
  if (scripted !== null) {
    const largest = Math.max(...scripted.calls.map((call) => approximateTokenCounter(call.messages)));
    console.log(`largest prompt sent to the model: ${largest} tokens (history trigger ${BUDGET.contextWindow * BUDGET.compactAt}, plus the system prompt and the new question)`);
  }
  return { stored, archive, scripted };
}

runIfMain(module, main);
