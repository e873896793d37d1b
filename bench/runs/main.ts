/**
 * `npm run bench -- --runs`: every strategy on the same scripted agent runs
 * (3 seeds × 150 model calls, 32,000-token window), through the real
 * integrations, offline. Prints the table and the goals, and writes them
 * into BENCHMARKS.md (its own section) with a chart beside it.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { RunResult, RunSettings } from "./harness";
import { PRICE_A, PRICE_B } from "./metrics";
import { detailTable, findings, goals, goalsSection, runsTable } from "./report";
import type { StrategyRuns } from "./report";
import { STRATEGIES } from "./strategies";
import type { RunsWorkerTask } from "./worker";

export const RUN_SEEDS = [1, 2, 3];
export const RUN_SETTINGS: Required<RunSettings> = { contextWindow: 32_000, compactAt: 0.7, compactTo: 0.4, turns: 5, callsPerTurn: 30 };

/** Markers of the run section in BENCHMARKS.md; everything outside them belongs to the rest of the bench. */
export const RUNS_SECTION_START = "<!-- runs-benchmark:start -->";
export const RUNS_SECTION_END = "<!-- runs-benchmark:end -->";

const ROOT = join(__dirname, "..", "..");
export const BENCHMARKS_PATH = join(ROOT, "BENCHMARKS.md");
export const CHART_FILE = "BENCHMARKS-runs.svg";

function progress(text: string): void {
  process.stderr.write(`  ${text}\n`);
}

/** Replaces (or appends) the run section of `document`. */
export function withRunsSection(document: string, section: string): string {
  const block = `${RUNS_SECTION_START}\n${section.trim()}\n${RUNS_SECTION_END}`;
  const start = document.indexOf(RUNS_SECTION_START);
  const end = document.indexOf(RUNS_SECTION_END);
  if (start >= 0 && end > start) return `${document.slice(0, start)}${block}${document.slice(end + RUNS_SECTION_END.length)}`;
  return `${document.trimEnd()}\n\n${block}\n`;
}

/** The run section currently in BENCHMARKS.md, markers included (empty when there is none). */
export function currentRunsSection(): string {
  if (!existsSync(BENCHMARKS_PATH)) return "";
  const document = readFileSync(BENCHMARKS_PATH, "utf8");
  const start = document.indexOf(RUNS_SECTION_START);
  const end = document.indexOf(RUNS_SECTION_END);
  return start >= 0 && end > start ? document.slice(start, end + RUNS_SECTION_END.length) : "";
}

async function chart(results: StrategyRuns[], seed: number): Promise<string> {
  // Vega is an ES module only: loaded here, at run time, so the CommonJS bench and tests never require it.
  const { renderRunsChart } = (await import("./chart.mjs")) as typeof import("./chart.mjs");
  const points = results.flatMap(({ strategy, runs }) => {
    const run = runs.find((r) => r.seed === seed);
    if (!run) return [];
    return run.steps.map((step, index) => ({ strategy: strategy.label, kind: strategy.kind, call: index + 1, tokens: step.tokens, billedA: run.cumulativeA[index]! }));
  });
  return renderRunsChart(points, { contextWindow: RUN_SETTINGS.contextWindow, seed, tokensAxisMax: Math.round(RUN_SETTINGS.contextWindow * 1.5),
    strategies: results.filter((entry) => entry.runs.length > 0).map(({ strategy }) => ({ label: strategy.label, color: strategy.color })),
  });
}

/** Strategies measured at once, each in its own process (the machine has 2 cores). */
const PARALLEL = 2;

function runWorker(task: RunsWorkerTask): Promise<RunResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, join(__dirname, "worker.ts"), JSON.stringify(task)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`run worker for ${task.strategy} exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").at(-1)!) as RunResult[]);
    });
  });
}

/** Runs the whole run benchmark; returns the Markdown section it wrote. */
export async function runRunsBench(): Promise<string> {
  const started = Date.now();
  process.stderr.write(`agent runs: ${RUN_SEEDS.length} seeds × ${RUN_SETTINGS.turns * RUN_SETTINGS.callsPerTurn} model calls, window ${RUN_SETTINGS.contextWindow}\n`);
  const results: StrategyRuns[] = STRATEGIES.map((strategy) => ({ strategy, runs: [] }));

  // Each strategy in its own process (warm-up run, then every seed), PARALLEL at a time, results in table order.
  const queue = [...results];
  const workers = Array.from({ length: Math.min(PARALLEL, queue.length) }, async () => {
    for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
      progress(`${entry.strategy.label}: started`);
      entry.runs = await runWorker({ strategy: entry.strategy.key, seeds: RUN_SEEDS, settings: RUN_SETTINGS });
    }
  });
  await Promise.all(workers);

  const svg = await chart(results, RUN_SEEDS[0]!);
  writeFileSync(join(ROOT, CHART_FILE), svg);
  progress(`wrote ${CHART_FILE}`);

  const goalList = goals(results);
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Node ${process.version}`;
  const section = [
    "## Agent runs: cost and quality per strategy",
    "",
    `Produced by \`npm run bench -- --runs\` (also part of the full \`npm run bench\`). Date: ${new Date().toISOString()}. Machine: ${machine}. Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    "",
    `${RUN_SEEDS.length} scripted agent runs (seeds ${RUN_SEEDS.join(", ")}) of ${RUN_SETTINGS.turns * RUN_SETTINGS.callsPerTurn} model calls each (${RUN_SETTINGS.turns} user turns of ${RUN_SETTINGS.callsPerTurn}), the same runs for every strategy; context window ${RUN_SETTINGS.contextWindow.toLocaleString("en-US")} tokens, counter \`tiktokenCounter("o200k_base")\`. Counts are totals over the runs, costs and CPU are means per run.`,
    "",
    `![Request tokens per call and cumulative billed input per strategy, seed ${RUN_SEEDS[0]}](${CHART_FILE})`,
    "",
    runsTable(results),
    "",
    "Goals:",
    "",
    goalsSection(goalList),
    "",
    "What bounds the results:",
    "",
    findings(results),
    "",
    "Per run:",
    "",
    detailTable(results),
    "",
    RUNS_NOTES,
  ].join("\n");
  process.stdout.write(`${section}\n`);
  const document = existsSync(BENCHMARKS_PATH) ? readFileSync(BENCHMARKS_PATH, "utf8") : "# Benchmarks\n";
  writeFileSync(BENCHMARKS_PATH, withRunsSection(document, section));
  progress(`wrote BENCHMARKS.md (run section)`);
  return section;
}

const RUNS_NOTES = `### How to read the run table

- **The runs** (\`bench/runs/script.ts\`): a system prompt of about 2,000 characters and seven tools; each user turn takes
  ${RUN_SETTINGS.callsPerTurn} model calls, all but the last with 1 to 4 parallel tool calls, the last a text answer. Tool results come
  from the bench's size mix (70% of 100 to 900 characters, 28% of 0.9 to 3 KB, 2% of 8 to 30 KB). The scripted model
  (\`bench/runs/models.ts\`) answers from the script whatever it is sent, so every strategy replays the same run; it records
  every request exactly as received (messages and bound tools) and reports \`usage_metadata\` as a provider would.
- **Facts**: 12 identifiers per run (36 in all): 4 in the user's messages (turns 1 to 3), 4 in tool results of the first turn,
  4 in the AI's own messages (first two turns). The model's last call lists those its request shows; the harness checks that
  list against its own scan. "Readable" adds the facts in offloaded results whose reference the last request shows, read
  back through \`createOffloadReaderTool\`.
- **Integrations**: \`createAgent\` (from \`langchain\`) with middleware, or \`createReactAgent\` with a pre-model hook, each
  with a \`MemorySaver\` checkpointer, one thread per run, one \`invoke\` per user turn.
- **Same trigger and target for everyone**: compact at 70% of the window, down to 40%. Ours counts the system prompt and
  tool schemas itself (\`compactionMiddleware\` / \`createCompactionNode\` defaults, view mode). Peers that count only the
  messages get thresholds lowered by that overhead: \`trimMessages\` (\`strategy: "last", startOn: "human",
  endOn: ["human", "tool"]\`, as LangGraph's docs show it) with \`maxTokens\` = 70% of the window minus overhead;
  \`summarizationMiddleware\` with \`trigger: { tokens }\` at 70% and \`keep: { tokens }\` at 40% minus overhead (its other
  options default, so it summarizes at most the last 4,000 tokens of what it replaces: \`trimTokensToSummarize\`);
  \`contextEditingMiddleware\` with \`ClearToolUsesEdit({ trigger: { tokens }, keep: { messages: 3 } })\` and
  \`tokenCountMethod: "model"\` (our counter, through the scripted model). Every strategy counts with the same tiktoken counts.
- **Summaries** come from one scripted summarizer (\`ScriptedSummarizer\`) shared by ours and LangChain's: it keeps, in order
  and once each, the lines of its input that hold an identifier, up to 1,024 tokens.
- **Over the window**: request tokens (messages plus tool schemas) above ${RUN_SETTINGS.contextWindow.toLocaleString("en-US")}. The scripted model
  answers anyway, so a strategy's later requests are still measured; a real provider would have refused these.
- **Provider-invalid**: a strict ordering check (system prompt only first, a user message first after it, every tool call
  answered right after its AI message, no stray result), then the request converted offline by \`@langchain/openai\`
  (Chat Completions and Responses) and \`@langchain/anthropic\`, with each format's pairing rules checked on the payload.
- **Prefix break**: a request whose message list does not start with the previous request's. "Compactions" are the
  compactions a strategy applied (ours: reports with a result; \`trimMessages\`: calls where it dropped something;
  summarization: summaries made; context editing: requests in which it cleared a result the previous request showed).
- **Billed input** per request, from the longest common prefix (tool schemas, then whole messages, in tokens) with the
  previous request. ${PRICE_A.name}: ${PRICE_A.description}. ${PRICE_B.name}: ${PRICE_B.description}. "Input tokens, no cache" is every
  request at the uncached price 1.0. Reported in thousands of token-equivalents per run.
- **Compaction CPU**: \`process.cpuUsage()\` inside the strategy's hooks (\`beforeModel\`, \`wrapModelCall\` without the model
  call, or the pre-model node), the summarizer's own time excluded. Each strategy runs in its own process, two at a time,
  after a short warm-up run.
`;
