/**
 * The rows of the agent benchmark: every strategy runs on `createAgent`
 * (from `langchain`) as middleware, with a checkpointer, the same window and
 * the same counter (`tiktokenCounter("o200k_base")`, read through one
 * memo of its counts). Peers are configured as their own docs show them,
 * given our trigger (70% of the window) and target (40%) where they take one,
 * minus the system prompt and tool schemas where they count the messages
 * only. Ours keep `compactAt`/`compactTo` at their defaults (0.7 / 0.4)
 * unless a row names another (the same on every workload).
 *
 * To add a configuration, add an entry to {@link STRATEGIES}; to change the
 * configuration the goals are judged on, change {@link RECOMMENDED}.
 */
import { RemoveMessage, trimMessages } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { ClearToolUsesEdit, contextEditingMiddleware, createMiddleware, summarizationMiddleware } from "langchain";
import type { AgentMiddleware } from "langchain";
import {
  agentCompactor,
  cacheAwareMinGain,
  createOffloadReaderTool,
  isSummaryMessage,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { AgentCompactorOptions, CompactionHookOptions, Compactor, TokenCounter } from "../../src";
import { agentCompactionMiddleware, compactionMiddleware } from "../../src/integrations/middleware";
import type { AgentCompactionMiddlewareOptions } from "../../src/integrations/middleware";
import type { ScriptedSummarizer } from "./summarizer";

/** What every strategy is given. */
export interface StrategyContext {
  summarizer: ScriptedSummarizer;
  /** The bench's counter: `tiktokenCounter("o200k_base")`'s counts, remembered per message. */
  counter: TokenCounter;
  /** The same counter, typed as synchronous (it is). */
  syncCounter: (messages: BaseMessage[]) => number;
  contextWindow: number;
  /** Our defaults, given to the peers as their trigger and target. */
  compactAt: number;
  compactTo: number;
  /** Tokens of the system prompt. */
  systemTokens: number;
  /** Tokens of the tool schemas: the workload's tools plus `extra`. */
  schemaTokens: (extra: readonly StructuredToolInterface[]) => number;
}

/** How a strategy plugs into `createAgent`. */
export interface StrategySetup {
  middleware: AgentMiddleware[];
  /** Tools the strategy adds (the offload reader). */
  extraTools?: StructuredToolInterface[];
}

/** One row. */
export interface Strategy {
  key: string;
  label: string;
  kind: "baseline" | "peer" | "ours" | "lever";
  /** Also run against the hidden-window provider (peers, the baseline and the recommended row; levers are skipped to keep the run short). */
  hidden?: boolean;
  /** Its colour in the chart. */
  color: string;
  setup: (context: StrategyContext) => StrategySetup;
}

/** The configuration the goals are judged on. */
export const RECOMMENDED = "ours-agent";

/** Hook options a row may set beside the compactor (the same on every workload). */
type HookLevers = Pick<CompactionHookOptions, "compactAt" | "compactTo" | "minGainTokens">;

/** Ours on `createAgent`, defaults for everything but the compactor (and the hook levers a row names). */
function ours(context: StrategyContext, compactor: Compactor | readonly Compactor[], extraTools: StructuredToolInterface[] = [], levers: HookLevers = {}): StrategySetup {
  const middleware = compactionMiddleware({ contextWindow: context.contextWindow, tokenCounter: context.counter, compactor, ...levers });
  return { middleware: [middleware as unknown as AgentMiddleware], extraTools };
}

/** `agentCompactor` with the bench's summarizer and `overrides`, under hook `levers`. */
function agent(context: StrategyContext, overrides: Omit<AgentCompactorOptions, "model"> = {}, levers: HookLevers = {}, extraTools: StructuredToolInterface[] = []): StrategySetup {
  return ours(context, agentCompactor({ model: context.summarizer, ...overrides }), extraTools, levers);
}

const OFFLOAD_NAMESPACE = ["bench", "agents", "tool_results"];

/** The recommended line, `agentCompactionMiddleware` with a store, plus `extra` options (the lever rows). */
function recommended(context: StrategyContext, extra: Partial<AgentCompactionMiddlewareOptions> = {}): StrategySetup {
  const middleware = agentCompactionMiddleware({ model: context.summarizer, contextWindow: context.contextWindow, tokenCounter: context.counter, store: new InMemoryStore(), ...extra });
  return { middleware: [middleware as unknown as AgentMiddleware] };
}

export const STRATEGIES: Strategy[] = [
  {
    key: "none",
    hidden: true,
    label: "no compaction",
    kind: "baseline",
    color: "#d62728",
    setup: () => ({ middleware: [] }),
  },
  {
    key: "trim",
    hidden: true,
    label: "trimMessages (beforeModel middleware)",
    kind: "peer",
    color: "#e6a700",
    setup: (context) => {
      // The docs' pattern for createAgent (short-term memory, "Trim messages"): a beforeModel middleware that replaces
      // the state's messages with the trimmed ones; the trimming is `trimMessages` as its own docs show it for chat
      // history, capped at our trigger level minus the system prompt and tools, which it does not see.
      const maxTokens = Math.floor(context.contextWindow * context.compactAt) - context.systemTokens - context.schemaTokens([]);
      const middleware = createMiddleware({
        name: "TrimMessages",
        beforeModel: async (state) => {
          const messages = state.messages;
          const trimmed = await trimMessages(messages, { maxTokens, strategy: "last", tokenCounter: context.syncCounter, startOn: "human", endOn: ["human", "tool"] });
          if (trimmed.length === messages.length) return undefined;
          return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...trimmed] };
        },
      });
      return { middleware: [middleware as unknown as AgentMiddleware] };
    },
  },
  {
    key: "lc-summarization",
    hidden: true,
    label: "LangChain summarizationMiddleware",
    kind: "peer",
    color: "#ff7f0e",
    setup: (context) => {
      // It counts the state's messages only: its thresholds leave room for the prompt and the tools.
      const overhead = context.systemTokens + context.schemaTokens([]);
      const middleware = summarizationMiddleware({
        model: context.summarizer,
        trigger: { tokens: Math.floor(context.contextWindow * context.compactAt) - overhead },
        keep: { tokens: Math.floor(context.contextWindow * context.compactTo) - overhead },
        tokenCounter: context.counter,
      });
      return { middleware: [middleware as unknown as AgentMiddleware] };
    },
  },
  {
    key: "lc-context-editing",
    hidden: true,
    label: "LangChain contextEditingMiddleware (ClearToolUsesEdit)",
    kind: "peer",
    color: "#1f77b4",
    setup: (context) => {
      // `tokenCountMethod: "model"` counts the system prompt too (our counter, through the model); not the tools.
      // `keep` stays at the documented default (the 3 newest results): it counts results, not a size to reach.
      const middleware = contextEditingMiddleware({
        edits: [new ClearToolUsesEdit({ trigger: { tokens: Math.floor(context.contextWindow * context.compactAt) - context.schemaTokens([]) }, keep: { messages: 3 } })],
        tokenCountMethod: "model",
      });
      return { middleware: [middleware as unknown as AgentMiddleware] };
    },
  },
  {
    key: "ours-sum-window",
    label: "ours: summarization → sliding window (summaries protected)",
    kind: "ours",
    color: "#bcbd22",
    setup: (context) => ours(context, [new SummarizationCompactor({ model: context.summarizer }), new SlidingWindowCompactor({ protect: isSummaryMessage })]),
  },
  // Levers, one at a time on top of summarization → window with the conversation-mode summary call; the recommended
  // row is the combination of offloading first and compactTo 0.3.
  {
    key: "lever-conversation",
    label: "lever: summary call resends the conversation (cached prefix)",
    kind: "lever",
    color: "#17becf",
    setup: (context) => agent(context, { summaryPrompt: "conversation" }),
  },
  {
    key: "lever-deeper",
    label: "lever: + fewer, deeper compactions (compactTo 0.25, no offloading)",
    kind: "lever",
    color: "#7f7f7f",
    setup: (context) => agent(context, {}, { compactTo: 0.25 }),
  },
  {
    key: "lever-offload-first",
    label: "lever: + offloading before summarization (compactTo 0.4)",
    kind: "lever",
    color: "#98df8a",
    setup: (context) => {
      const store = new InMemoryStore();
      const reader = createOffloadReaderTool({ store, namespace: OFFLOAD_NAMESPACE });
      return agent(context, { before: [new ToolResultOffloadCompactor({ store, namespace: OFFLOAD_NAMESPACE })] }, {}, [reader]);
    },
  },
  {
    key: "lever-prune-first",
    label: "lever: + pruning before summarization (compactTo 0.4)",
    kind: "lever",
    color: "#c5b0d5",
    setup: (context) => agent(context, { before: [new ToolResultPruningCompactor()] }),
  },
  // Levers on top of the recommended line, one change each.
  {
    key: "lever-clear-inputs",
    label: "lever: recommended + old tool-call inputs over 200 tokens cleared first (clearToolInputs)",
    kind: "lever",
    color: "#aec7e8",
    // Pruning that clears inputs only: its results threshold is out of reach, so no result is pruned.
    setup: (context) => recommended(context, { summarization: { before: [new ToolResultPruningCompactor({ minTokens: 10_000_000, clearToolInputs: { minTokens: 200 } })] } }),
  },
  {
    key: "lever-min-gain",
    label: "lever: recommended + minGainTokens priced by cacheAwareMinGain (Anthropic prices, 20 calls to the next compaction)",
    kind: "lever",
    color: "#ffbb78",
    setup: (context) =>
      recommended(context, {
        minGainTokens: cacheAwareMinGain({
          contextTokens: Math.floor(context.contextWindow * context.compactAt),
          cacheWriteMultiplier: 1.25,
          cacheReadMultiplier: 0.1,
          expectedCallsBeforeNextCompaction: 20,
          unchangedPrefixTokens: context.systemTokens + context.schemaTokens([]),
        }),
      }),
  },
  {
    key: "ours-agent",
    label: "ours: agentCompactionMiddleware({ model, contextWindow, store }) (recommended)",
    kind: "ours",
    hidden: true,
    color: "#e377c2",
    // The one line the README recommends: agentCompactor with offloading to the store, compactTo 0.3, and the reader
    // tool, which the middleware registers on the agent itself.
    setup: (context) => recommended(context),
  },
];

/** The strategy of `key`. */
export function strategyOf(key: string): Strategy {
  const strategy = STRATEGIES.find((entry) => entry.key === key);
  if (strategy === undefined) throw new RangeError(`no strategy ${JSON.stringify(key)}; known: ${STRATEGIES.map((s) => s.key).join(", ")}`);
  return strategy;
}
