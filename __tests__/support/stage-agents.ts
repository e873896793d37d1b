/**
 * Real agents for the stage-in-graph tests: `createReactAgent` with the
 * compaction node as its pre-model hook, and `createAgent` with the
 * compaction middleware, both over a `MemorySaver`, a real tool whose
 * results are large, and a scripted model that records every request and
 * reports usage as a provider would. The compactor is wrapped so each test
 * knows when a compaction ran, on what, and what it reported.
 */
import { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import type { StateSnapshot } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import {
  approximateTokenCounter,
  CompactionPipeline,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { CompactionReport, CompactOptions, Compactor, TokenCounterLike } from "../../src";
import { CompactionAnnotation, createCompactionNode } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { ScriptedChatModel } from "../../src/testing";
import { ScriptedSummaryModel } from "./summary-model";

export const PROMPT = "You are an on-call assistant. Read the logs before answering.";
export const CONTEXT_WINDOW = 4_000;
export const COMPACT_AT = 0.7;
export const COMPACT_TO = 0.4;

/** What the log tool returns for `file`: about 300 tokens, different for every file. */
export function logText(file: string): string {
  const lines = Array.from({ length: 24 }, (_, line) => `${file}:${line} ERROR upstream timeout after 30s`);
  return `${file}\n${lines.join("\n")}`;
}

export const readLog = tool(async ({ file }: { file: string }) => logText(file), {
  name: "read_log",
  description: "Reads a log file.",
  schema: z.object({ file: z.string().describe("The log file") }),
});

/**
 * Per task: reads two logs, one after the other, then answers. The reply is
 * decided by the last message alone (a task, or the result of which read),
 * so what compaction did to older messages cannot change the script.
 */
export function agentModel(idPrefix = "scripted"): ScriptedChatModel {
  return new ScriptedChatModel({
    usage: approximateTokenCounter,
    idPrefix,
    reply: (messages, call) => {
      const last = messages.at(-1)!;
      const task = [...messages].reverse().find((m) => HumanMessage.isInstance(m) && m.text.startsWith("Task "))?.text.match(/^Task (\d+)/)?.[1] ?? "?";
      if (last.type === "human") return { content: "", tool_calls: [{ id: `t${task}-c${call}-p0`, name: "read_log", args: { file: `deploy-${task}-a.log` }, type: "tool_call" }] };
      const callId = (last as { tool_call_id?: string }).tool_call_id ?? "";
      if (callId.endsWith("-p0")) return { content: "", tool_calls: [{ id: `t${task}-c${call}-p1`, name: "read_log", args: { file: `deploy-${task}-b.log` }, type: "tool_call" }] };
      return `Task ${task}: both logs show upstream timeouts.`;
    },
  });
}

/** A summary model that always answers with a short summary naming its call. */
export function summaryModel(): ScriptedSummaryModel {
  return new ScriptedSummaryModel((call) => `## Objective\n- find why deploys fail (summary ${call})\n## Work completed\n- logs read: upstream timeouts`);
}

export type StageName = "pruning" | "summarization" | "offloading";

/** The `strategy` of the messages each pipeline's first stage writes. */
export const STRATEGY: Record<StageName, string> = {
  pruning: "tool_result_pruning",
  summarization: "summarization",
  offloading: "tool_result_offloading",
};

export interface StageKit {
  stages: Compactor[];
  summaries: ScriptedSummaryModel | null;
  store: InMemoryStore | null;
}

/** Each pipeline of the tests: its first stage, then the sliding window as the last resort. */
export function stageKit(name: StageName): StageKit {
  if (name === "pruning") return { stages: [new ToolResultPruningCompactor(), new SlidingWindowCompactor()], summaries: null, store: null };
  if (name === "summarization") {
    const summaries = summaryModel();
    return { stages: [new SummarizationCompactor({ model: summaries, maxSummaryTokens: 150 }), new SlidingWindowCompactor()], summaries, store: null };
  }
  const store = new InMemoryStore();
  return { stages: [new ToolResultOffloadCompactor({ store }), new SlidingWindowCompactor()], summaries: null, store };
}

/** One compaction the hook ran: the model call it came before, its input and its report. */
export interface RecordedCompaction {
  beforeCall: number;
  input: BaseMessage[];
  report: CompactionReport;
}

/** A pipeline of `stages` that records every compaction it computes (applied or not: the hook decides). */
export class RecordingCompactor implements Compactor {
  readonly records: RecordedCompaction[] = [];
  private readonly pipeline: CompactionPipeline;
  constructor(stages: Compactor[], private readonly model: ScriptedChatModel) {
    this.pipeline = new CompactionPipeline(stages);
  }
  async compact(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    return (await this.compactWithReport(messages, target, counter, options)).messages;
  }
  async compactWithReport(messages: BaseMessage[], target: number, counter?: TokenCounterLike, options?: CompactOptions) {
    const report = await this.pipeline.compactWithReport(messages, target, counter, options);
    if (report.messages !== null) this.records.push({ beforeCall: this.model.calls.length, input: [...messages], report });
    return report;
  }
}

export type Integration = "createReactAgent" | "createReactAgent+CompactionAnnotation" | "createAgent";

interface Thread {
  configurable: { thread_id: string };
}

/** The slice of a compiled graph the tests use. */
export interface AgentGraph {
  invoke(input: { messages: BaseMessage[] }, config: Thread): Promise<unknown>;
  getState(config: Thread): Promise<StateSnapshot>;
  getStateHistory(config: Thread): AsyncIterableIterator<StateSnapshot>;
}

export interface AgentOptions {
  mode: "view" | "commit";
  compactor: Compactor | Compactor[];
  minGainTokens?: number;
}

/** A real agent of `integration` compacting with `options`, on a fresh `MemorySaver`. */
export function buildAgent(integration: Integration, model: ScriptedChatModel, options: AgentOptions): AgentGraph {
  const checkpointer = new MemorySaver();
  const trigger = { contextWindow: CONTEXT_WINDOW, compactAt: COMPACT_AT, compactTo: COMPACT_TO, mode: options.mode, compactor: options.compactor, minGainTokens: options.minGainTokens ?? 0 };
  if (integration === "createAgent") {
    const agent = createAgent({ model, tools: [readLog], systemPrompt: PROMPT, middleware: [compactionMiddleware(trigger)], checkpointer });
    return agent.graph as unknown as AgentGraph;
  }
  const preModelHook = createCompactionNode({ ...trigger, tools: [readLog], systemMessage: PROMPT });
  if (integration === "createReactAgent") {
    return createReactAgent({ llm: model, tools: [readLog], prompt: PROMPT, preModelHook, checkpointer }) as unknown as AgentGraph;
  }
  return createReactAgent({ llm: model, tools: [readLog], prompt: PROMPT, stateSchema: CompactionAnnotation, preModelHook, checkpointer }) as unknown as AgentGraph;
}

/** Runs tasks `from` .. `from + count - 1` on one thread. */
export async function runTasks(agent: AgentGraph, thread: string, from: number, count: number): Promise<void> {
  for (let task = from; task < from + count; task += 1) {
    await agent.invoke({ messages: [new HumanMessage({ content: `Task ${task}: why did deploy ${task} fail?`, id: `task-${task}` })] }, { configurable: { thread_id: thread } });
  }
}

/** The messages of every checkpoint of the thread, oldest first. */
export async function checkpointMessages(agent: AgentGraph, thread: string): Promise<BaseMessage[][]> {
  const found: BaseMessage[][] = [];
  for await (const snapshot of agent.getStateHistory({ configurable: { thread_id: thread } })) {
    found.push(((snapshot.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[]);
  }
  return found.reverse();
}

/** The compaction metadata a message carries, or `null`. */
export function compactionOf(message: BaseMessage): Record<string, unknown> | null {
  const value = (message.response_metadata as Record<string, unknown> | undefined)?.compaction;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
}

/** A message as the model reads it and as a checkpoint keeps it: kind, id, content, compaction metadata. */
export function messageKey(message: BaseMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  return JSON.stringify([message.type, message.id ?? null, content, compactionOf(message)]);
}

/** The same, without the id: what a message says, wherever it is kept. */
export function contentKey(message: BaseMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  return JSON.stringify([message.type, content, compactionOf(message)]);
}

export function isPrefixOf(shorter: readonly string[], longer: readonly string[]): boolean {
  return shorter.length <= longer.length && shorter.every((key, index) => longer[index] === key);
}
