/**
 * Runs one strategy on one workload, offline: `createAgent` with the
 * strategy's middleware and a `MemorySaver` checkpointer, one thread, one
 * `invoke` per user turn (plus one per answer the user gives when the model
 * asked for a fact again). Every model call, agent and summary, is measured
 * as it is made (see `call-log.ts`); the result is what the report reads.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { tiktokenCounter } from "../../src";
import { MessageTokens } from "./message-tokens";
import { DecidingAgentModel } from "./agent-model";
import type { QuestionResult, RefetchCounts } from "./agent-model";
import { CallLog } from "./call-log";
import type { CallRecord } from "./call-log";
import { idsIn } from "./facts";
import type { OverflowProvider } from "./overflow";
import { ANTHROPIC, billOf, inputCost, outputCost, PRICE_MODELS } from "./pricing";
import type { Bill, PriceModel } from "./pricing";
import type { Strategy, StrategyContext } from "./strategies";
import { ScriptedSummarizer } from "./summarizer";
import type { Workload } from "./workload";

/** Options of {@link runAgentWorkload}. */
export interface AgentRunOptions {
  /** Model calls one user turn may take. Default 25. */
  stepCap?: number;
  /** The provider refuses requests over this fraction of the configured window (the hidden-window run). */
  hiddenWindowFraction?: number;
  /** Whose overflow error the hidden-window provider throws. Default `"anthropic"`. */
  provider?: OverflowProvider;
  /** Keep every request on the log (tests). */
  keepRequests?: boolean;
}

/** Why a run stopped early: its agent invocation threw. */
export interface RunFailure {
  invocation: number;
  /** Agent calls made before it, the refused one included. */
  agentCall: number;
  error: string;
  /** The error is `@langchain/core`'s `ContextOverflowError`. */
  overflow: boolean;
}

/** What one strategy did on one workload and seed. */
export interface AgentRunResult {
  strategy: string;
  workload: string;
  seed: number;
  /** The hidden-window provider's real window as a fraction of the configured one, or `null` for a normal run. */
  hiddenWindowFraction: number | null;
  failed: RunFailure | null;
  invocations: number;
  agentCalls: number;
  summaryCalls: number;
  /** Agent requests the hidden-window provider refused (not billed). */
  refused: number;
  /** Agent requests above the configured window (the provider answered anyway unless the run is the hidden-window one). */
  overWindow: number;
  /** Agent requests a provider would reject as malformed, and the first reason. */
  invalid: number;
  firstProblem: string | null;
  peakTokens: number;
  cappedTurns: number;
  gaveUpTurns: number;
  refetches: RefetchCounts;
  questions: { asked: number; answerable: number; answered: number };
  /** Question by question (the report's detail and the tests). */
  questionDetail: (QuestionResult & { answerable: boolean })[];
  tokens: { agentInput: number; summaryInput: number; agentOutput: number; summaryOutput: number };
  bills: Record<PriceModel["key"], Bill>;
  /** All-in bill under the Anthropic-style model after each call (agent and summary), for the chart. */
  cumulativeAnthropic: number[];
  wallMs: number;
}

/** A run's result with its call log and model (tests read them). */
export interface AgentRun {
  result: AgentRunResult;
  log: CallLog;
  model: DecidingAgentModel;
}

/** Runs `strategy` on `workload`. */
export async function runAgentWorkload(strategy: Strategy, workload: Workload, options: AgentRunOptions = {}): Promise<AgentRun> {
  const started = performance.now();
  const tokens = new MessageTokens(tiktokenCounter("o200k_base"));
  const log = new CallLog(tokens, { keepRequests: options.keepRequests ?? false });
  const world = workload.createWorld();
  const hidden = options.hiddenWindowFraction !== undefined;

  // When each planted fact first reached the agent (a user message or a tool result), by invocation.
  const plantedAt = new Map<string, number>();
  const known = new Set(workload.facts.map((fact) => fact.id));
  const plant = (text: string) => {
    for (const id of idsIn(text)) if (known.has(id) && !plantedAt.has(id)) plantedAt.set(id, log.invocation);
  };

  const tools: StructuredToolInterface[] = workload.tools.map((def) =>
    tool(
      async (args: Record<string, unknown>) => {
        const output = world.run(def.name, args);
        plant(output);
        return output;
      },
      { name: def.name, description: def.description, schema: def.schema },
    ),
  );
  const model = new DecidingAgentModel({
    workload,
    world,
    log,
    ...(options.stepCap === undefined ? {} : { stepCap: options.stepCap }),
    ...(hidden ? { hiddenWindow: { tokens: Math.floor(workload.contextWindow * options.hiddenWindowFraction!), provider: options.provider ?? "anthropic" } } : {}),
  });
  const summarizer = new ScriptedSummarizer({ log });
  const context: StrategyContext = {
    summarizer,
    counter: tokens.asCounter(),
    syncCounter: (messages) => tokens.total(messages),
    contextWindow: workload.contextWindow,
    compactAt: 0.7,
    compactTo: 0.4,
    systemTokens: tokens.of(new SystemMessage(workload.systemPrompt)),
    schemaTokens: (extra) => tokens.schemas(JSON.stringify([...tools, ...extra].map((t) => convertToOpenAITool(t)))),
  };
  const setup = strategy.setup(context);
  const agent = createAgent({
    model,
    tools: [...tools, ...(setup.extraTools ?? [])],
    systemPrompt: workload.systemPrompt,
    middleware: setup.middleware as never,
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: `agents-${strategy.key}-${workload.key}-${workload.seed}` }, recursionLimit: 10_000 };
  const invoke = async (text: string) => {
    plant(text);
    await agent.invoke({ messages: [new HumanMessage(text)] } as never, config as never);
    log.invocation += 1;
  };

  let failed: RunFailure | null = null;
  try {
    for (const [index, turn] of workload.turns.entries()) {
      world.beginTurn(index);
      model.beginInvocation(index);
      await invoke(turn.user);
      // The model asked the user for a fact it lost: the user answers, and the same turn goes on.
      while (model.pendingAsk !== null) {
        const answer = model.pendingAsk;
        model.beginInvocation(index);
        await invoke(answer);
      }
    }
  } catch (error) {
    const err = error as Error;
    failed = {
      invocation: log.invocation,
      agentCall: log.calls.filter((call) => call.kind === "agent").length,
      error: `${err.name}: ${err.message.split("\n")[0]}`,
      overflow: (error as { name?: unknown }).name === "ContextOverflowError",
    };
  }

  const result = measure(strategy, workload, log, model, plantedAt, failed, options.hiddenWindowFraction ?? null);
  result.wallMs = performance.now() - started;
  return { result, log, model };
}

function measure(
  strategy: Strategy,
  workload: Workload,
  log: CallLog,
  model: DecidingAgentModel,
  plantedAt: ReadonlyMap<string, number>,
  failed: RunFailure | null,
  hiddenWindowFraction: number | null,
): AgentRunResult {
  const billed = log.calls.filter((call) => !call.rejected);
  const agent = billed.filter((call) => call.kind === "agent");
  const summary = billed.filter((call) => call.kind === "summary");
  const problems = agent.filter((call) => call.problem !== null);
  const sum = (calls: readonly CallRecord[], field: "inputTokens" | "outputTokens") => calls.reduce((total, call) => total + call[field], 0);
  const bills = Object.fromEntries(PRICE_MODELS.map((price) => [price.key, billOf(price, billed)])) as Record<PriceModel["key"], Bill>;
  const cumulativeAnthropic: number[] = [];
  let running = 0;
  for (const call of billed) {
    running += inputCost(ANTHROPIC, call) + outputCost(ANTHROPIC, call);
    cumulativeAnthropic.push(running);
  }
  const questionDetail = model.questions.map((q) => {
    const at = plantedAt.get(q.fact);
    return { ...q, answerable: at !== undefined && at < q.invocation };
  });
  return {
    strategy: strategy.key,
    workload: workload.key,
    seed: workload.seed,
    hiddenWindowFraction,
    failed,
    invocations: log.invocation + (failed === null ? 0 : 1),
    agentCalls: log.calls.filter((call) => call.kind === "agent").length,
    summaryCalls: summary.length,
    refused: log.calls.filter((call) => call.rejected).length,
    overWindow: agent.filter((call) => call.inputTokens > workload.contextWindow).length,
    invalid: problems.length,
    firstProblem: problems[0]?.problem ?? null,
    peakTokens: agent.reduce((max, call) => Math.max(max, call.inputTokens), 0),
    cappedTurns: model.cappedTurns,
    gaveUpTurns: model.gaveUpTurns,
    refetches: { ...model.refetches },
    questions: {
      asked: questionDetail.length,
      answerable: questionDetail.filter((q) => q.answerable).length,
      answered: questionDetail.filter((q) => q.answered).length,
    },
    questionDetail,
    tokens: { agentInput: sum(agent, "inputTokens"), summaryInput: sum(summary, "inputTokens"), agentOutput: sum(agent, "outputTokens"), summaryOutput: sum(summary, "outputTokens") },
    bills,
    cumulativeAnthropic,
    wallMs: 0,
  };
}
