/**
 * Real agents for the agent-runtime tests (overflow recovery, dangling calls,
 * the compaction tool, events, triggers): `createAgent` with the compaction
 * middleware and `createReactAgent` with the compaction node as its
 * pre-model hook (its model wrapped by `withOverflowRecovery`), both over a
 * `MemorySaver`, with a real tool and the package's own `ScriptedChatModel`,
 * whose script can throw (an overflow, any error) on chosen calls.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import type { StateSnapshot } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, createMiddleware } from "langchain";
import { z } from "zod/v4";
import type { CompactionEventData } from "../../src";
import { CompactionAnnotation, createCompactionNode, withOverflowRecovery } from "../../src/integrations/langgraph";
import type { CompactionNodeOptions } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import type { CompactionMiddlewareOptions } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";
import type { ScriptedReply } from "../../src/testing";

export const SYSTEM_PROMPT = "You are a weather assistant. Answer briefly and cite the tool output.";
export const CONTEXT_WINDOW = 4_000;

/** About 160 tokens per result, different for every city. */
export const weather = tool(async ({ city }: { city: string }) => `${city}: ${"sunny, 24 degrees, light wind from the west; ".repeat(14)}`, {
  name: "weather",
  description: "The weather forecast for a city.",
  schema: z.object({ city: z.string().describe("The city") }),
});

/** Decides, per model call, whether the call throws (return the error) or answers by the script (return undefined). */
export type Fault = (call: number, messages: BaseMessage[]) => unknown;

/**
 * Per question: one weather call, then an answer. `script` may override a
 * reply (a call of another tool, ...); `fault` may make a call throw.
 */
export function weatherModel(
  options: { fault?: Fault; script?: (messages: BaseMessage[], call: number) => ScriptedReply | undefined; usage?: (messages: BaseMessage[]) => number } = {},
): ScriptedChatModel {
  return new ScriptedChatModel({
    ...(options.usage === undefined ? {} : { usage: options.usage }),
    reply: (messages, call) => {
      const error = options.fault?.(call, messages);
      if (error !== undefined) throw error;
      const scripted = options.script?.(messages, call);
      if (scripted !== undefined) return scripted;
      const last = messages.at(-1)!;
      if (last.type === "tool") return `Noted (answer ${call}).`;
      return { content: "", tool_calls: [{ name: "weather", args: { city: `City${call}` } }] };
    },
  });
}

interface Thread {
  configurable: { thread_id: string };
  callbacks?: unknown[];
  signal?: AbortSignal;
}

/** The slice of a compiled graph the tests use. */
export interface AgentGraph {
  invoke(input: unknown, config: Thread): Promise<{ messages: BaseMessage[] }>;
  getState(config: Thread): Promise<StateSnapshot>;
  streamEvents(input: unknown, config: Thread & { version: "v2" }): AsyncIterable<{ event: string; name: string; data: unknown; run_id: string }>;
}

export type Integration = "middleware" | "node";

/** A `createAgent` agent with the compaction middleware of `options`, on a fresh MemorySaver. */
export function middlewareAgent(
  model: ScriptedChatModel,
  options: Partial<CompactionMiddlewareOptions>,
  extraTools: StructuredToolInterface[] = [],
  otherMiddleware: ReturnType<typeof createMiddleware>[] = [],
) {
  const middleware = compactionMiddleware({ contextWindow: CONTEXT_WINDOW, ...options });
  const agent = createAgent({ model, tools: [weather, ...extraTools], systemPrompt: SYSTEM_PROMPT, middleware: [middleware, ...otherMiddleware], checkpointer: new MemorySaver() });
  return { agent: agent.graph as unknown as AgentGraph, middleware };
}

/** A `createReactAgent` graph with the compaction node of `options` as its pre-model hook, its model recovering from overflows. */
export function nodeAgent(
  model: ScriptedChatModel,
  options: Partial<CompactionNodeOptions>,
  extraTools: StructuredToolInterface[] = [],
  toolNodeOptions?: { handleToolErrors: boolean },
  annotation = false,
) {
  const tools = [weather, ...extraTools];
  const node = createCompactionNode({ contextWindow: CONTEXT_WINDOW, tools, ...options });
  const agent = createReactAgent({
    llm: withOverflowRecovery(model, node),
    tools: toolNodeOptions === undefined ? tools : new ToolNode(tools, toolNodeOptions),
    preModelHook: node,
    // With CompactionAnnotation, view mode remembers its cut in the state rather than reading createReactAgent's channel.
    ...(annotation ? { stateSchema: CompactionAnnotation } : {}),
    checkpointer: new MemorySaver(),
  });
  return { agent: agent as unknown as AgentGraph, node };
}

/** A custom event as a callback handler received it. */
export interface HeardEvent {
  name: string;
  data: CompactionEventData;
}

/** A callback handler recording the custom events of a run. */
export function eventListener(): { handler: { handleCustomEvent(name: string, data: unknown): void }; events: HeardEvent[] } {
  const events: HeardEvent[] = [];
  return { events, handler: { handleCustomEvent: (name, data) => void events.push({ name, data: data as CompactionEventData }) } };
}

export const thread = (id: string, extra: Partial<Thread> = {}): Thread => ({ configurable: { thread_id: id }, ...extra });

/** Asks `count` weather questions on one thread, one invocation each. */
export async function ask(agent: AgentGraph, id: string, count: number, from = 0): Promise<void> {
  for (let question = from; question < from + count; question += 1) {
    await agent.invoke({ messages: [new HumanMessage({ content: `What is the weather in place ${question}?`, id: `q-${id}-${question}` })] }, thread(id));
  }
}

/** A question for `invoke`. */
export const question = (text: string, id?: string) => ({ messages: [new HumanMessage(id === undefined ? text : { content: text, id })] });
