/**
 * Runs one strategy through one scripted agent run, offline, on the real
 * integrations (`createAgent` with middleware, or `createReactAgent` with a
 * pre-model hook, both with a checkpointer), and measures every request the
 * model received.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod/v4";
import { tiktokenCounter } from "../../src";
import { CompactionAnnotation } from "../../src/integrations/langgraph";
import { CpuMeter } from "./cpu-meter";
import { billedInput, compareRequests, cumulativeBilled, MessageTokens, PRICE_A, PRICE_B } from "./metrics";
import type { RequestStep } from "./metrics";
import { requestText, ScriptedRunModel, ScriptedSummarizer } from "./models";
import { factsIn, RUN_TOOLS, runScript } from "./script";
import type { RunScript, RunScriptOptions } from "./script";
import type { Strategy, StrategyContext } from "./strategies";
import { providerProblem } from "./validity";

/** The bench's window and hysteresis. */
export interface RunSettings extends RunScriptOptions {
  contextWindow?: number;
  compactAt?: number;
  compactTo?: number;
}

/** What one strategy did on one run. */
export interface RunResult {
  strategy: string;
  seed: number;
  calls: number;
  steps: RequestStep[];
  /** Requests whose tokens exceed the window, and the first model call (from 1) that did. */
  overWindow: number;
  firstOverWindow: number | null;
  /** Requests a provider would reject, with the first reason. */
  invalid: number;
  firstProblem: string | null;
  peakTokens: number;
  prefixBreaks: number;
  compactions: number | null;
  billedA: number;
  billedB: number;
  cumulativeA: number[];
  inputTokens: number;
  summaryCalls: number;
  factsPlanted: number;
  /** Planted facts the last request shows (as the model reported them, checked against the request). */
  factsVisible: string[];
  /** Visible facts plus those in offloaded results the last request references, read back through the reader tool. */
  factsReadable: string[];
  /** CPU milliseconds inside the strategy's hooks, the summarizer's own time excluded. */
  compactionCpuMs: number;
  wallMs: number;
}

/** The run's tools: each returns its scripted output, looked up by the `ref` argument. */
function runTools(script: RunScript): StructuredToolInterface[] {
  return RUN_TOOLS.map((name) =>
    tool(async ({ ref }: { query: string; ref: string }) => script.results.get(ref) ?? `no scripted result for ${ref}`, {
      name,
      description: `The ${name.replace("_", " ")} tool of the operations agent.`,
      schema: z.object({ query: z.string().describe("What to look for"), ref: z.string().describe("The request reference") }),
    }),
  );
}

/** Runs `strategy` on the run of `seed`. */
export async function runStrategy(strategy: Strategy, seed: number, settings: RunSettings = {}): Promise<RunResult> {
  const { contextWindow = 32_000, compactAt = 0.7, compactTo = 0.4, ...scriptOptions } = settings;
  const started = performance.now();
  const script = runScript(seed, scriptOptions);
  const tokens = new MessageTokens(tiktokenCounter("o200k_base"));
  const counter = tokens.asCounter();
  const model = new ScriptedRunModel(script, counter);
  const summarizer = new ScriptedSummarizer({ counter });
  const tools = runTools(script);
  const meter = new CpuMeter();
  const context: StrategyContext = {
    model,
    summarizer,
    counter,
    syncCounter: (messages) => tokens.total(messages),
    contextWindow,
    compactAt,
    compactTo,
    tools,
    systemPrompt: script.systemPrompt,
    systemTokens: tokens.total([new SystemMessage(script.systemPrompt)]),
    schemaTokens: (extra) => tokens.schemas(JSON.stringify([...tools, ...extra].map((t) => convertToOpenAITool(t)))),
    meter,
  };
  const setup = strategy.setup(context);
  const allTools = [...tools, ...(setup.extraTools ?? [])];
  const checkpointer = new MemorySaver();
  const config = { configurable: { thread_id: `runs-${strategy.key}-${seed}` }, recursionLimit: 10_000 };

  let invoke: (input: { messages: BaseMessage[] }) => Promise<unknown>;
  if (setup.integration === "createAgent") {
    const agent = createAgent({ model, tools: allTools, systemPrompt: script.systemPrompt, middleware: setup.middleware as never, checkpointer });
    invoke = (input) => agent.invoke(input as never, config as never);
  } else {
    const agent = createReactAgent({
      llm: model,
      tools: allTools,
      prompt: script.systemPrompt,
      checkpointer,
      ...(setup.compactionState ? { stateSchema: CompactionAnnotation } : {}),
      ...(setup.preModelHook ? { preModelHook: setup.preModelHook as never } : {}),
    });
    invoke = (input) => agent.invoke(input, config as never);
  }
  for (const turn of script.turns) await invoke({ messages: [new HumanMessage(turn.user)] });

  const requests = model.requests;
  if (requests.length !== script.calls) throw new Error(`${strategy.key} seed ${seed}: ${requests.length} model calls, the script has ${script.calls}`);
  const steps: RequestStep[] = [];
  let overWindow = 0;
  let firstOverWindow: number | null = null;
  let invalid = 0;
  let firstProblem: string | null = null;
  requests.forEach((request, index) => {
    const step = compareRequests(tokens, index === 0 ? null : requests[index - 1]!, request);
    steps.push(step);
    if (step.tokens > contextWindow) {
      overWindow += 1;
      firstOverWindow ??= index + 1;
    }
    const problem = providerProblem(request.messages);
    if (problem !== null) {
      invalid += 1;
      firstProblem ??= `call ${index + 1}: ${problem}`;
    }
  });

  const last = requests.at(-1)!;
  const visible = factsIn(requestText(last.messages), script.facts);
  // The model's last answer lists what it saw; it must agree with the harness's own scan.
  const answer = model.lastAnswer ?? "";
  const reported = /Facts visible: (.*)$/m.exec(answer)?.[1] ?? "";
  const reportedIds = reported === "none" ? [] : reported.split(", ").filter((id) => id !== "");
  if (reportedIds.join(",") !== visible.join(",")) throw new Error(`the model reported facts ${reported}, the request shows ${visible.join(", ")}`);
  const readableTexts = setup.readable ? await setup.readable(last.messages) : [];
  const readable = factsIn([requestText(last.messages), ...readableTexts].join("\n"), script.facts);

  return {
    strategy: strategy.key,
    seed,
    calls: requests.length,
    steps,
    overWindow,
    firstOverWindow,
    invalid,
    firstProblem,
    peakTokens: Math.max(...steps.map((step) => step.tokens)),
    prefixBreaks: steps.filter((step) => step.prefixBreak).length,
    compactions: setup.compactionsIn ? setup.compactionsIn(requests) : setup.compactions(),
    billedA: billedInput(steps, PRICE_A),
    billedB: billedInput(steps, PRICE_B),
    cumulativeA: cumulativeBilled(steps, PRICE_A),
    inputTokens: steps.reduce((sum, step) => sum + step.tokens, 0),
    summaryCalls: summarizer.calls,
    // A fact planted in the last answer is not in any request.
    factsPlanted: script.facts.filter((fact) => fact.call < script.calls - 1).length,
    factsVisible: visible,
    factsReadable: readable,
    compactionCpuMs: Math.max(0, meter.micros - summarizer.cpuMicros) / 1000,
    wallMs: performance.now() - started,
  };
}
