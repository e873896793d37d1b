import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { CompactionGraphAnnotation } from "../../src/integrations/langgraph";
import type { CompactionNode } from "../../src/integrations/langgraph";
import type { ScriptedChatModel } from "../../src/testing";


/** The two real tools of the graph tests' archive agent. */
export const lookup = tool(async ({ topic }: { topic: string }) => `Archive records on ${topic}: ${"record line with dates and places; ".repeat(12)}`, {
  name: "lookup",
  description: "Looks a topic up in the archive.",
  schema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
});

export const weather = tool(async ({ city }: { city: string }) => `${city}: mild, 18°C`, {
  name: "weather",
  description: "Current weather in a city.",
  schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
});

export const tools = [lookup, weather];

/** A window small enough that a few turns need compaction. */
export const CONTEXT_WINDOW = 1_600;

/** Messages per user turn: human, AI with 2 parallel calls, 2 results, AI with 1 call, its result, the answer. */
export const TURN_MESSAGES = 7;

/**
 * The custom `StateGraph` of the graph tests: a compaction node before the
 * model node, a real `ToolNode`, and a loop back through the compaction node
 * after the tools. In `"view"` mode the model reads `llmInputMessages`
 * (state from `CompactionGraphAnnotation`); in `"commit"` mode it reads the
 * compacted `messages` of a plain `MessagesAnnotation` state. Returned
 * untyped: each suite casts it to the slice of the compiled graph it uses.
 */
export function archiveGraph(
  mode: "view" | "commit",
  node: CompactionNode,
  model: ScriptedChatModel,
  compile: { checkpointer: BaseCheckpointSaver; interruptBefore?: "tools"[] },
): unknown {
  const bound = model.bindTools(tools);
  const toolNode = new ToolNode(tools);
  if (mode === "view") {
    return new StateGraph(CompactionGraphAnnotation)
      .addNode("compact", node)
      .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.llmInputMessages)] }))
      .addNode("tools", toolNode)
      .addEdge(START, "compact")
      .addEdge("compact", "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "compact")
      .compile(compile);
  }
  return new StateGraph(MessagesAnnotation)
    .addNode("compact", node)
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", toolNode)
    .addEdge(START, "compact")
    .addEdge("compact", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "compact")
    .compile(compile);
}
