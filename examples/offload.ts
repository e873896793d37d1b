/**
 * Offloading, offline: an agent fetches large incident reports; once the
 * context grows, older reports are moved to a LangGraph store (here an
 * `InMemoryStore`) and the model sees a short reference with a preview. Asked
 * later for a detail that only the full report holds, the agent reads it back
 * with the reader tool. A scripted model stands in for the chat model and
 * records every request.
 *
 *   npx tsx examples/offload.ts
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import { createOffloadReaderTool, OFFLOAD_READER_TOOL_NAME, SlidingWindowCompactor, ToolResultOffloadCompactor } from "../src";
import { compactionMiddleware } from "../src/integrations/middleware";
import { ScriptedChatModel } from "../src/testing";

/** The context window the agent runs in: small, so that a few reports need compaction. */
export const CONTEXT_WINDOW = 4_000;
export const INCIDENTS = 8;

/** An incident report: a header, then many lines; its error code appears only deep inside. */
export function incidentReport(id: number): string {
  const lines = Array.from({ length: 30 }, (_, line) =>
    line === 12 ? `line ${line}: root cause: error code E${4000 + id} from db-${id}` : `line ${line}: retrying request ${id}-${line}, still waiting`,
  );
  return `INC-${id} incident report\n${lines.join("\n")}`;
}

const fetchIncident = tool(async ({ id }: { id: number }) => incidentReport(id), {
  name: "fetch_incident",
  description: "Fetches an incident report by number.",
  schema: z.object({ id: z.number().describe("The incident number") }),
});

/** The key of the offloaded result whose preview shows `INC-<id>`, read from the reference text as a model would. */
function offloadedKeyOf(messages: readonly BaseMessage[], id: number): string | undefined {
  for (const message of messages) {
    if (message.type !== "tool" || !message.text.includes(OFFLOAD_READER_TOOL_NAME) || !message.text.includes(`INC-${id} `)) continue;
    return /key "([^"]+)"/.exec(message.text)?.[1];
  }
  return undefined;
}

/**
 * Fetches the report a task names and acknowledges it; asked for an error
 * code, it answers from the report in context, or reads the report back
 * first when only its reference is left.
 */
function scriptedModel(): ScriptedChatModel {
  return new ScriptedChatModel({
    reply: (messages, call) => {
      const last = messages.at(-1)!;
      const task = [...messages].reverse().find((m) => m.type === "human" && /^(Fetch|What)/.test(m.text))!;
      const id = Number(/incident (\d+)/.exec(task.text)?.[1]);
      if (task.text.startsWith("Fetch")) {
        if (last.type === "tool") return `Incident ${id} fetched.`;
        return { content: "", tool_calls: [{ id: `fetch-${call}`, name: "fetch_incident", args: { id }}] };
      }
      const code = messages.map((m) => (m.type === "tool" ? new RegExp(`E${4000 + id}`).exec(m.text)?.[0] : undefined)).find(Boolean);
      if (code !== undefined) return `Incident ${id} failed with error code ${code}.`;
      const key = offloadedKeyOf(messages, id);
      if (key === undefined) return `I cannot find incident ${id} any more.`;
      return { content: "", tool_calls: [{ id: `read-${call}`, name: OFFLOAD_READER_TOOL_NAME, args: { key, offset: 0, length: 600 }}] };
    },
  });
}

export interface OffloadExample {
  model: ScriptedChatModel;
  store: InMemoryStore;
  /** The thread's state at the end (view mode: every original result is still there). */
  history: BaseMessage[];
  /** The reader tool's result, as the agent received it. */
  readBack: ToolMessage | undefined;
  /** The agent's last answer. */
  answer: string;
}

export async function main(): Promise<OffloadExample> {
  const store = new InMemoryStore();
  const reader = createOffloadReaderTool({ store });
  const model = scriptedModel();
  const agent = createAgent({
    model,
    tools: [fetchIncident, reader],
    systemPrompt: "You are an incident analyst. Fetch reports with fetch_incident; read moved reports back with the reader tool.",
    middleware: [
      compactionMiddleware({
        contextWindow: CONTEXT_WINDOW,
        compactor: [new ToolResultOffloadCompactor({ store }), new SlidingWindowCompactor()],
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "incidents" } };
  for (let id = 0; id < INCIDENTS; id += 1) await agent.invoke({ messages: [new HumanMessage(`Fetch incident ${id}.`)] }, config);
  await agent.invoke({ messages: [new HumanMessage("What was the error code of incident 0?")] }, config);

  const history = ((await agent.graph.getState(config)).values as { messages: BaseMessage[] }).messages;
  const readBack = history.find((m): m is ToolMessage => m.type === "tool" && (m as ToolMessage).name === OFFLOAD_READER_TOOL_NAME);
  const answer = history.at(-1)!.text;
  console.log(`${model.calls.length} model calls; largest request ${Math.max(...model.calls.map((c) => model.requestTokens(c)!))} tokens of ${CONTEXT_WINDOW}`);
  console.log(`read back: ${readBack?.text.split("\n")[0] ?? "(nothing)"}`);
  console.log(`answer: ${answer}`);
  return { model, store, history, readBack, answer };
}

if (require.main === module) void main();
