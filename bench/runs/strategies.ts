/**
 * The strategies the run benchmark compares, each set up on the same run,
 * window and counter. Peers are configured as their documentation shows,
 * with the same trigger and target as ours (compact at 70% of the window,
 * down to 40%), both minus what the request spends on the system prompt and
 * tool schemas where the peer counts only the messages.
 */
import { trimMessages } from "@langchain/core/messages";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { ClearToolUsesEdit, contextEditingMiddleware, summarizationMiddleware } from "langchain";
import type { AgentMiddleware } from "langchain";
import {
  CompactionPipeline,
  createOffloadReaderTool,
  isSummaryMessage,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { Compactor, TokenCounter } from "../../src";
import { createCompactionNode } from "../../src/integrations/compaction-node";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { CpuMeter, timedMiddleware } from "./cpu-meter";
import type { RecordedRequest, ScriptedRunModel, ScriptedSummarizer } from "./models";

/** What every strategy is given. */
export interface StrategyContext {
  model: ScriptedRunModel;
  summarizer: ScriptedSummarizer;
  /** The bench's counter, `tiktokenCounter("o200k_base")`, reading remembered counts. */
  counter: TokenCounter;
  /** The same counter, typed as synchronous (it is). */
  syncCounter: (messages: BaseMessage[]) => number;
  contextWindow: number;
  compactAt: number;
  compactTo: number;
  /** The run's tools (bound to the model on every request). */
  tools: StructuredToolInterface[];
  systemPrompt: string;
  /** Tokens the system prompt takes. */
  systemTokens: number;
  /** Tokens the tool schemas take (of the run's tools plus the strategy's own). */
  schemaTokens: (extraTools: readonly StructuredToolInterface[]) => number;
  meter: CpuMeter;
}

/** A pre-model hook for `createReactAgent`: returns what the model is sent. */
export type PreModelHook = (state: { messages: BaseMessage[] }) => Promise<Record<string, unknown>>;

/** How a strategy runs: on `createAgent` with middleware, or on `createReactAgent` with a pre-model hook. */
export type StrategySetup = {
  /** Tools the strategy adds (the offload reader). */
  extraTools?: StructuredToolInterface[];
  /** Compactions done (a stage or pipeline that changed the list), when the strategy can tell. */
  compactions: () => number | null;
  /** Compactions read from the recorded requests instead, for a strategy that does not tell. */
  compactionsIn?: (requests: readonly RecordedRequest[]) => number;
  /** Texts the agent could read back through the offload reader tool, from what its last request shows. */
  readable?: (lastRequest: readonly BaseMessage[]) => Promise<string[]>;
} & (
  | { integration: "createAgent"; middleware: AgentMiddleware[] }
  | { integration: "createReactAgent"; preModelHook?: PreModelHook; compactionState: boolean }
);

/** One strategy of the comparison. */
export interface Strategy {
  key: string;
  label: string;
  kind: "baseline" | "peer" | "ours";
  /** Its line's colour in the chart. */
  color: string;
  setup: (context: StrategyContext) => StrategySetup;
}

/** Counts the compactions a compactor (or pipeline) makes, by wrapping its `compactWithReport` on the instance. */
function counted<C extends Compactor>(compactor: C): { compactor: C; count: () => number } {
  let compactions = 0;
  const original = compactor.compactWithReport.bind(compactor);
  Object.defineProperty(compactor, "compactWithReport", {
    configurable: true,
    value: async (...args: Parameters<Compactor["compactWithReport"]>) => {
      const report = await original(...args);
      if (report.messages !== null) compactions += 1;
      return report;
    },
  });
  return { compactor, count: () => compactions };
}

function oursOnCreateAgent(context: StrategyContext, compactor: Compactor, extraTools: StructuredToolInterface[] = []): StrategySetup {
  const tally = counted(compactor);
  const middleware = compactionMiddleware({
    contextWindow: context.contextWindow,
    compactAt: context.compactAt,
    compactTo: context.compactTo,
    tokenCounter: context.counter,
    compactor: tally.compactor,
  });
  return { integration: "createAgent", middleware: [timedMiddleware(middleware, context.meter)], extraTools, compactions: tally.count };
}

/** Ours: the pipeline `[...stages, new SlidingWindowCompactor()]` on `createAgent`. */
function pipelineOf(stages: Compactor[]): Compactor {
  return new CompactionPipeline([...stages, new SlidingWindowCompactor()]);
}

const OFFLOAD_NAMESPACE = ["bench", "runs", "tool_results"];

// ---------------------------------------------------------------------------

export const STRATEGIES: Strategy[] = [
  {
    key: "none",
    color: "#d62728",
    label: "no compaction",
    kind: "baseline",
    setup: () => ({ integration: "createAgent", middleware: [], compactions: () => 0 }),
  },
  {
    key: "trim",
    color: "#e6a700",
    label: "trimMessages (pre-model hook)",
    kind: "peer",
    setup: (context) => {
      let compactions = 0;
      // As LangGraph's docs show it for agents, capped at our trigger level minus the prompt and tools.
      const maxTokens = Math.floor(context.contextWindow * context.compactAt) - context.systemTokens - context.schemaTokens([]);
      const preModelHook: PreModelHook = (state) =>
        context.meter.time(async () => {
          const trimmed = await trimMessages(state.messages, {
            maxTokens,
            strategy: "last",
            tokenCounter: context.syncCounter,
            startOn: "human",
            endOn: ["human", "tool"],
          });
          if (trimmed.length < state.messages.length) compactions += 1;
          return { llmInputMessages: trimmed };
        });
      return { integration: "createReactAgent", preModelHook, compactionState: false, compactions: () => compactions };
    },
  },
  {
    key: "lc-summarization",
    color: "#ff7f0e",
    label: "LangChain summarizationMiddleware",
    kind: "peer",
    setup: (context) => {
      // It counts the state's messages only: its thresholds leave room for the prompt and the tools.
      const overhead = context.systemTokens + context.schemaTokens([]);
      const middleware = summarizationMiddleware({
        model: context.summarizer,
        trigger: { tokens: Math.floor(context.contextWindow * context.compactAt) - overhead },
        keep: { tokens: Math.floor(context.contextWindow * context.compactTo) - overhead },
        tokenCounter: context.counter,
      });
      return {
        integration: "createAgent",
        middleware: [timedMiddleware(middleware as AgentMiddleware, context.meter)],
        compactions: () => context.summarizer.calls,
      };
    },
  },
  {
    key: "lc-context-editing",
    color: "#1f77b4",
    label: "LangChain contextEditingMiddleware (ClearToolUsesEdit)",
    kind: "peer",
    setup: (context) => {
      // `tokenCountMethod: "model"` counts the system prompt too (with our counter, through the model); not the tools.
      const middleware = contextEditingMiddleware({
        edits: [
          new ClearToolUsesEdit({
            trigger: { tokens: Math.floor(context.contextWindow * context.compactAt) - context.schemaTokens([]) },
            keep: { messages: 3 },
          }),
        ],
        tokenCountMethod: "model",
      });
      return {
        integration: "createAgent",
        middleware: [timedMiddleware(middleware as AgentMiddleware, context.meter)],
        compactions: () => null,
        compactionsIn: requestsClearingMore,
      };
    },
  },
  {
    key: "ours-sw-agent",
    color: "#2ca02c",
    label: "ours: sliding window (createAgent middleware)",
    kind: "ours",
    setup: (context) => oursOnCreateAgent(context, new SlidingWindowCompactor()),
  },
  {
    key: "ours-sw-react",
    color: "#98df8a",
    label: "ours: sliding window (createReactAgent node)",
    kind: "ours",
    setup: (context) => {
      const tally = counted(new SlidingWindowCompactor());
      const node = createCompactionNode({
        contextWindow: context.contextWindow,
        compactAt: context.compactAt,
        compactTo: context.compactTo,
        tokenCounter: context.counter,
        compactor: tally.compactor,
        tools: context.tools,
        systemMessage: context.systemPrompt,
      });
      const preModelHook: PreModelHook = (state) => context.meter.time(() => node(state) as Promise<Record<string, unknown>>);
      return { integration: "createReactAgent", preModelHook, compactionState: true, compactions: tally.count };
    },
  },
  {
    key: "ours-prune-sw",
    color: "#9467bd",
    label: "ours: pruning → sliding window",
    kind: "ours",
    setup: (context) => oursOnCreateAgent(context, pipelineOf([new ToolResultPruningCompactor()])),
  },
  {
    key: "ours-prune-sum-sw",
    color: "#17becf",
    label: "ours: pruning → summarization → sliding window",
    kind: "ours",
    setup: (context) =>
      oursOnCreateAgent(
        context,
        pipelineOf([new ToolResultPruningCompactor(), new SummarizationCompactor({ model: context.summarizer })]),
      ),
  },
  {
    key: "ours-prune-sum-sw-protected",
    color: "#e377c2",
    label: "ours: pruning → summarization → sliding window (summaries protected)",
    kind: "ours",
    setup: (context) => {
      // The same pipeline, with the sliding window told never to drop a summary (`protect`, issue 10): otherwise,
      // as the last resort, it drops the oldest history first, and the summaries are the oldest history.
      const window = new SlidingWindowCompactor({ protect: isSummaryMessage });
      return oursOnCreateAgent(
        context,
        new CompactionPipeline([new ToolResultPruningCompactor(), new SummarizationCompactor({ model: context.summarizer }), window]),
      );
    },
  },
  {
    key: "ours-sum-sw-protected",
    color: "#bcbd22",
    label: "ours: summarization → sliding window (summaries protected)",
    kind: "ours",
    setup: (context) => {
      // Summaries without pruning first: the kept history is the window's, with the early facts in the summaries.
      const window = new SlidingWindowCompactor({ protect: isSummaryMessage });
      return oursOnCreateAgent(context, new CompactionPipeline([new SummarizationCompactor({ model: context.summarizer }), window]));
    },
  },
  {
    key: "ours-offload-sw",
    color: "#8c564b",
    label: "ours: offloading → sliding window",
    kind: "ours",
    setup: (context) => {
      const store = new InMemoryStore();
      const reader = createOffloadReaderTool({ store, namespace: OFFLOAD_NAMESPACE });
      const offload = new ToolResultOffloadCompactor({ store, namespace: OFFLOAD_NAMESPACE });
      const setup = oursOnCreateAgent(context, pipelineOf([offload]), [reader]);
      return { ...setup, readable: (messages) => readBack(reader, messages) };
    },
  },
];

/** Requests in which `ClearToolUsesEdit` cleared a tool result the previous request still showed in full. */
function requestsClearingMore(requests: readonly RecordedRequest[]): number {
  const cleared = (request: RecordedRequest) =>
    new Set(
      request.messages
        .filter((m) => (m.response_metadata as { context_editing?: { cleared?: boolean } } | undefined)?.context_editing?.cleared === true)
        .map((m) => (m as ToolMessage).tool_call_id),
    );
  let count = 0;
  let before = new Set<string>();
  for (const request of requests) {
    const now = cleared(request);
    if ([...now].some((id) => !before.has(id))) count += 1;
    before = now;
  }
  return count;
}

/** Reads back, through the reader tool, every offloaded result whose reference the request shows. */
async function readBack(reader: StructuredToolInterface, messages: readonly BaseMessage[]): Promise<string[]> {
  const texts: string[] = [];
  for (const message of messages) {
    const compaction = (message.response_metadata as { compaction?: { strategy?: string; key?: string } } | undefined)?.compaction;
    if (compaction?.strategy !== "tool_result_offloading" || typeof compaction.key !== "string") continue;
    const text = await reader.invoke({ key: compaction.key });
    texts.push(typeof text === "string" ? text : JSON.stringify(text));
  }
  return texts;
}
