/**
 * `npm run bench`: this compactor against `trimMessages` and against one
 * plain counting pass, on synthetic agent conversations of 500 to 100,000
 * messages, then what each approach keeps on 900 over-budget histories.
 *
 * Every measurement runs in its own child process (see `worker.ts`) so its
 * peak memory is its own. Progress goes to stderr, the tables to stdout;
 * `npm run bench -- --write` also writes them into BENCHMARKS.md.
 *
 * Then the time-slice and long-text measurements (`bench/slices.ts`): the longest stall of the
 * event loop during long compactions, with time slices and in one go, and
 * `tiktokenCounter` on 1 MB texts against js-tiktoken; `npm run bench --
 * --slices` prints only those.
 *
 * Then the agent-run benchmark (`bench/agents/`): every strategy, ours and
 * the peers, through `createAgent` on workloads written apart from the
 * library, bills all in, which writes its own section of BENCHMARKS.md and
 * its chart. `npm run bench -- --runs` (or `--agents`, the same) runs only
 * that; `--quick` makes it short.
 */
import { runChild } from "./measure";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { AGENTS_SECTION_START, currentAgentsSection, runAgentBench } from "./agents/main";
import { runBeforeAfter } from "./before-after";
import { runDevicesBench } from "./devices";
import { compareQuality } from "./quality";
import type { QualityReport, QualityTally } from "./quality";
import type { SliceRow, TextRow } from "./slices";
import type { CounterName, FloorResult, OursResult, StagesResult, TrimResult, WorkerOutput, WorkerTask } from "./worker";

const BUDGET = 20_000;
const SEED = 1;
const QUALITY_HISTORIES = 900;
const QUALITY_SEED = 42;

interface SizePlan {
  size: number;
  counter: CounterName;
  floorRuns: number;
  oursRuns: number;
  /** `trimMessages` runs at most this long; the rest of its work is extrapolated. */
  trimCapSeconds: number;
  /** Runs of the compaction-family measurement  at this size; 0: not measured here. */
  stagesRuns: number;
}

const PLAN: SizePlan[] = [
  { size: 500, counter: "tiktoken", floorRuns: 5, oursRuns: 9, trimCapSeconds: 150, stagesRuns: 0 },
  { size: 2_500, counter: "tiktoken", floorRuns: 3, oursRuns: 7, trimCapSeconds: 60, stagesRuns: 3 },
  { size: 10_000, counter: "tiktoken", floorRuns: 2, oursRuns: 5, trimCapSeconds: 30, stagesRuns: 0 },
  { size: 100_000, counter: "approximate", floorRuns: 5, oursRuns: 9, trimCapSeconds: 20, stagesRuns: 5 },
];

function runWorker(task: WorkerTask): Promise<WorkerOutput> {
  return runChild<WorkerOutput>(join(__dirname, "worker.ts"), [JSON.stringify(task)], { label: `worker ${JSON.stringify(task)}` });
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)}`;
const ratio = (value: number) => (value >= 100 ? `${value.toFixed(0)}×` : value >= 10 ? `${value.toFixed(1)}×` : `${value.toFixed(2)}×`);
const percent = (value: number) => `${(value * 100).toFixed(value < 0.1 ? 2 : 1)}%`;

interface Row {
  plan: SizePlan;
  floor: WorkerOutput & { result: FloorResult };
  ours: WorkerOutput & { result: OursResult };
  trim: WorkerOutput & { result: TrimResult };
  stages: (WorkerOutput & { result: StagesResult }) | null;
}

/** The speed rows of the pipeline for agents and the pruning stage, each cold, beside what they are held to. */
function stagesTable(rows: Row[]): string {
  const lines = [
    "| messages | counter | floor: one pass ms | sliding window cold ms | pruning → sliding window cold ms | pipeline / window | pruning alone cold ms | pruning / floor | results pruned | messages counted: window / pipeline | with reports: window / pipeline cold ms | pipeline / window, with reports |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
  ];
  for (const { plan, stages } of rows) {
    if (stages === null) continue;
    const s = stages.result;
    lines.push(
      `| ${plan.size.toLocaleString("en-US")} | ${plan.counter === "tiktoken" ? "tiktoken o200k" : "approximate"} | ${ms(s.floorMs)} | ${ms(s.windowColdMs)} | ${ms(s.pipelineColdMs)} | ${ratio(s.pipelineColdMs / s.windowColdMs)} | ${ms(s.pruningColdMs)} | ${ratio(s.pruningColdMs / s.floorMs)} | ${s.pruned.toLocaleString("en-US")} | ${s.countedWindow.toLocaleString("en-US")} / ${s.countedPipeline.toLocaleString("en-US")} | ${ms(s.windowReportColdMs)} / ${ms(s.pipelineReportColdMs)} | ${ratio(s.pipelineReportColdMs / s.windowReportColdMs)} |`,
    );
  }
  return lines.join("\n");
}

function speedTable(rows: Row[]): string {
  // The floor beside ours is the pass timed alternately with ours in one process; the separate floor process is in the detail table.
  const lines = [
    "| messages | counter | floor: one pass ms | ours cold ms | warm (a) compacted + 1 step ms | warm (b) full history + 1 step ms | trimMessages ms | trimMessages / ours cold | ours cold / floor | warm (a) / cold | warm (b) / cold |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const { plan, ours, trim } of rows) {
    const o = ours.result;
    const t = trim.result;
    const trimCell = t.extrapolated ? `≈${ms(t.ms)} (est.¹)` : ms(t.ms);
    const trimRatio = t.extrapolated ? `≈${ratio(t.ms / o.coldMs)}` : ratio(t.ms / o.coldMs);
    lines.push(
      `| ${plan.size.toLocaleString("en-US")} | ${plan.counter === "tiktoken" ? "tiktoken o200k" : "approximate"} | ${ms(o.interleavedFloorMs)} | ${ms(o.coldMs)} | ${ms(o.warmCompactedMs)} | ${ms(o.warmFullMs)} | ${trimCell} | ${trimRatio} | ${ratio(o.coldMs / o.interleavedFloorMs)} | ${percent(o.warmCompactedMs / o.coldMs)} | ${percent(o.warmFullMs / o.coldMs)} |`,
    );
  }
  return lines.join("\n");
}

function detailTable(rows: Row[]): string {
  const lines = [
    "| messages | tokens in history | floor process: one pass / per-message calls ms | messages counted: cold / warm (a) / warm (b) | kept (ours / trimMessages) | counting the new step alone ms | trimMessages counter calls (message counts) | trimMessages measured | peak RSS MB: floor / ours / trimMessages | input heap MB | cache of every message's count (after compactWithReport) |",
    "|---:|---:|---|---|---|---:|---|---|---|---:|---:|",
  ];
  for (const { plan, floor, ours, trim } of rows) {
    const o = ours.result;
    const t = trim.result;
    const measured = t.extrapolated
      ? `${t.callsDone} of ${t.callsTotal} calls in ${(t.elapsedMs / 1000).toFixed(0)} s`
      : `all, ${(t.elapsedMs / 1000).toFixed(1)} s${t.extrapolationCheckMs === undefined ? "" : ` (the first quarter extrapolated to ${(t.extrapolationCheckMs / 1000).toFixed(1)} s)`}`;
    lines.push(
      `| ${plan.size.toLocaleString("en-US")} | ${floor.result.totalTokens.toLocaleString("en-US")} | ${ms(floor.result.listPassMs)} / ${ms(floor.result.perMessageMs)} | ${o.countedCold} / ${o.countedWarmCompacted} / ${o.countedWarmFull} | ${o.keptCount} / ${t.keptCount < 0 ? "–" : t.keptCount} | ${ms(o.newStepCountMs)} | ${t.callsTotal.toLocaleString("en-US")} (${t.messageCountsTotal.toLocaleString("en-US")}) | ${measured} | ${mb(floor.peakRssBytes)} / ${mb(ours.peakRssBytes)} / ${mb(trim.peakRssBytes)} | ${mb(ours.inputHeapBytes)} | ${(o.retainedBytes / 2 ** 20).toFixed(1)} MB (${Math.round(o.retainedBytes / plan.size)} B/message) |`,
    );
  }
  return lines.join("\n");
}

function qualityTable(report: QualityReport): string {
  const share = (tally: QualityTally, key: keyof QualityTally) => `${tally[key]} (${percent(tally[key] / tally.results)})`;
  const row = (label: string, tally: QualityTally) =>
    `| ${label} | ${tally.results} | ${share(tally, "keepsTask")} | ${share(tally, "valid")} | ${share(tally, "beyondSystem")} | ${tally.broken} | ${tally.onlySystem} |`;
  return [
    "| approach | histories | keep the current task | valid for providers | anything besides the system prompt | broken (`[undefined]`) | only the system prompt |",
    "|---|---:|---:|---:|---:|---:|---:|",
    row("ours, all", report.ours),
    row("trimMessages, all", report.trim),
    row("ours, task alone over budget", report.oursTaskOver),
    row("trimMessages, task alone over budget", report.trimTaskOver),
  ].join("\n");
}

/** the longest stall of the event loop during long compactions, with time slices and in one go. */
function slicesTable(rows: SliceRow[]): string {
  const lines = [
    "| work | runs | sliced: total ms | sliced: longest stall ms, median / worst | in one go: total ms | in one go: longest stall ms | total, sliced / in one go |",
    "|---|---:|---:|---|---:|---:|---:|",
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.work} | ${row.runs} | ${ms(row.slicedMs)} | ${ms(row.slicedStallMs)} / ${ms(row.slicedWorstStallMs)} | ${ms(row.oneGoMs)} | ${ms(row.oneGoStallMs)} | ${ratio(row.slicedMs / row.oneGoMs)} |`,
    );
  }
  return lines.join("\n");
}

/** long texts by tiktokenCounter against js-tiktoken's own encode. */
function textsTable(rows: TextRow[]): string {
  const lines = ["| text | tiktokenCounter ms | js-tiktoken encode ms | ours / encode | error vs exact |", "|---|---:|---:|---:|---:|"];
  for (const row of rows) {
    lines.push(`| ${row.text} | ${ms(row.oursMs)} | ${ms(row.encodeMs)} | ${ratio(row.oursMs / row.encodeMs)} | ${(row.error * 100).toFixed(2)}% |`);
  }
  return lines.join("\n");
}

/** The targets for long work, each with what this run measured. */
function issue31Targets(slices: SliceRow[], texts: TextRow[]): string {
  const check = (met: boolean) => (met ? "met" : "**missed**");
  const lines = ["Targets for long work (from this run):", ""];
  for (const row of slices) {
    const total = row.slicedMs / row.oneGoMs;
    lines.push(
      `- ${row.work}: longest stall under 50 ms: ${ms(row.slicedWorstStallMs)} ms at worst (${ms(row.oneGoStallMs)} ms in one go), ${check(row.slicedWorstStallMs < 50)}; total within 1.2× of one go: ${ratio(total)}, ${check(total <= 1.2)}.`,
    );
  }
  for (const row of texts) {
    const speed = row.oursMs / row.encodeMs;
    lines.push(`- ${row.text}: at most 0.2× js-tiktoken's encode time: ${ratio(speed)}, ${check(speed <= 0.2)}; within 3% of exact: ${(row.error * 100).toFixed(2)}%, ${check(Math.abs(row.error) <= 0.03)}.`);
  }
  return lines.join("\n");
}

/** the stalls of long compactions and the long texts, each measured in a process of its own. */
async function issue31Sections(): Promise<string> {
  const base = { size: 0, counter: "approximate" as const, budget: BUDGET, runs: 0, seed: SEED };
  process.stderr.write("long compactions in time slices\n");
  const slices = (await runWorker({ ...base, task: "slices" })).result as SliceRow[];
  process.stderr.write("long texts\n");
  const texts = (await runWorker({ ...base, task: "texts" })).result as TextRow[];
  return [
    "Long compactions in time slices: each run from nothing remembered (a new cache, a new store), with time slices (the default) and with slicing off (`setSliceMs(Infinity)`: everything in one go, as before slices), in turn in one process; the longest stall is the longest gap between two turns of a 1 ms timer:",
    "",
    slicesTable(slices),
    "",
    "Long texts by `tiktokenCounter(\"o200k_base\")` (medians of 3 counts, the memory of text pieces emptied before each) against one `encode` of js-tiktoken with the same ranks:",
    "",
    textsTable(texts),
    "",
    issue31Targets(slices, texts),
  ].join("\n");
}

/** The speed targets, each with the ratio this run measured. */
function targetsSection(rows: Row[]): string {
  const at = (size: number) => rows.find((row) => row.plan.size === size);
  const lines = ["Targets (ratios from this run):", ""];
  const check = (met: boolean) => (met ? "met" : "**missed**");
  const r2500 = at(2_500);
  if (r2500) {
    const value = r2500.trim.result.ms / r2500.ours.result.coldMs;
    lines.push(`- 2,500 messages, at least 100× faster than trimMessages: ${r2500.trim.result.extrapolated ? "≈" : ""}${ratio(value)}${r2500.trim.result.extrapolated ? " (trimMessages extrapolated)" : ""}, ${check(value >= 100)}.`);
  }
  const tiktokenRows = rows.filter((row) => row.plan.counter === "tiktoken");
  const worstCold = Math.max(...tiktokenRows.map((row) => row.ours.result.coldMs / row.ours.result.interleavedFloorMs));
  lines.push(`- cold within 1.3× of one plain counting pass (tiktoken sizes): at most ${ratio(worstCold)}, ${check(worstCold <= 1.3)}.`);
  const r10k = at(10_000);
  if (r10k) {
    const o = r10k.ours.result;
    const a = o.warmCompactedMs / o.coldMs;
    const b = o.warmFullMs / o.coldMs;
    lines.push(
      `- 10,000 messages, warm under 2% of cold: (a) compacted + 1 step ${percent(a)}, ${check(a < 0.02)}; (b) full history + 1 step ${percent(b)}, ${check(b < 0.02)}. ` +
        `Counting the new step alone takes ${ms(o.newStepCountMs)} ms, ${percent(o.newStepCountMs / o.coldMs)} of cold.`,
    );
  }
  // Incremental layout: a view-mode call (full history + 1 step) about as cheap as a compacted one.
  for (const size of [10_000, 100_000]) {
    const row = at(size);
    if (!row) continue;
    const o = row.ours.result;
    const value = o.warmFullMs / o.warmCompactedMs;
    lines.push(`- ${size.toLocaleString("en-US")} messages, warm (b) full history + 1 step within 2× of warm (a) compacted + 1 step: ${ratio(value)} (${ms(o.warmFullMs)} vs ${ms(o.warmCompactedMs)} ms), ${check(value <= 2)}.`);
  }
  const r100k = at(100_000);
  if (r100k) {
    const value = r100k.ours.result.coldMs / r100k.ours.result.interleavedFloorMs;
    lines.push(`- 100,000 messages with approximateTokenCounter, cold within 1.5× of one pass: ${ratio(value)}, ${check(value <= 1.5)}.`);
  }
  // Issue 10, the compaction family.
  const pipelineRow = at(2_500)?.stages;
  if (pipelineRow) {
    const s = pipelineRow.result;
    const value = s.pipelineColdMs / s.windowColdMs;
    lines.push(`- 2,500 messages, pruning → sliding window within 2× of the sliding window's cold time (tiktoken o200k): ${ratio(value)} (${ms(s.pipelineColdMs)} vs ${ms(s.windowColdMs)} ms), ${check(value <= 2)}.`);
    const reported = s.pipelineReportColdMs / s.windowReportColdMs;
    lines.push(`- The same with \`compactWithReport\` (what the integrations call): ${ratio(reported)} (${ms(s.pipelineReportColdMs)} vs ${ms(s.windowReportColdMs)} ms), ${check(reported <= 2)}.`);
  }
  const pruningRow = r100k?.stages;
  if (pruningRow) {
    const s = pruningRow.result;
    const value = s.pruningColdMs / s.floorMs;
    lines.push(`- 100,000 messages with approximateTokenCounter, ToolResultPruningCompactor within 3× of one pass: ${ratio(value)} (${ms(s.pruningColdMs)} vs ${ms(s.floorMs)} ms), ${check(value <= 3)}.`);
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  // `--runs` (or `--agents`): only the agent-run benchmark (bench/agents/), which writes its own section of BENCHMARKS.md with `--write`.
  if (process.argv.includes("--runs") || process.argv.includes("--agents")) {
    // Development runs: `--only=key,key` (strategies), `--seeds=1,2`.
    const listArg = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3).split(",");
    const only = listArg("only");
    const seeds = listArg("seeds")?.map(Number);
    await runAgentBench({ quick: process.argv.includes("--quick"), write: process.argv.includes("--write"), ...(only ? { only } : {}), ...(seeds ? { seeds } : {}) });
    return;
  }
  // `--before-after [ref]`: this checkout's speed against an earlier commit's, in one run (bench/before-after.ts).
  const beforeAfter = process.argv.indexOf("--before-after");
  if (beforeAfter >= 0) {
    const ref = process.argv[beforeAfter + 1];
    const table = await runBeforeAfter(ref === undefined || ref.startsWith("--") ? undefined : ref);
    process.stdout.write(`${table}\n`);
    if (process.argv.includes("--write")) {
      const path = join(__dirname, "..", "BENCHMARKS.md");
      writeFileSync(path, withBeforeAfterSection(readFileSync(path, "utf8"), `## Against an earlier commit\n\n\`npm run bench -- --before-after\`, ${new Date().toISOString()}.\n\n${table}`));
      process.stderr.write(`wrote ${path} (before/after section)\n`);
    }
    return;
  }
  // `--devices`: only the speed devices against their plain versions (bench/devices.ts), printed.
  if (process.argv.includes("--devices")) return void process.stdout.write(`${await runDevicesBench(process.argv.includes("--quick"))}\n`);
  // `--slices`: only issue 31's sections (printed, not written).
  if (process.argv.includes("--slices")) {
    process.stdout.write(`${await issue31Sections()}\n`);
    return;
  }
  const started = Date.now();
  const rows: Row[] = [];
  for (const plan of PLAN) {
    const base = { size: plan.size, counter: plan.counter, budget: BUDGET, seed: SEED };
    process.stderr.write(`${plan.size} messages, ${plan.counter} counter\n`);
    const floor = (await runWorker({ ...base, task: "floor", runs: plan.floorRuns })) as Row["floor"];
    const ours = (await runWorker({ ...base, task: "ours", runs: plan.oursRuns })) as Row["ours"];
    const trim = (await runWorker({ ...base, task: "trim", runs: 1, capSeconds: plan.trimCapSeconds })) as Row["trim"];
    const stages = plan.stagesRuns > 0 ? ((await runWorker({ ...base, task: "stages", runs: plan.stagesRuns })) as NonNullable<Row["stages"]>) : null;
    rows.push({ plan, floor, ours, trim, stages });
  }
  const issue31 = await issue31Sections();
  process.stderr.write(`quality: ${QUALITY_HISTORIES} over-budget histories\n`);
  const quality = await compareQuality(QUALITY_HISTORIES, QUALITY_SEED, (done) => process.stderr.write(`  ${done} histories\n`));

  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Node ${process.version}, ${process.platform}/${process.arch}`;
  const output = [
    `Date: ${new Date().toISOString()}. Machine: ${machine}. Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    "",
    `Speed (budget ${BUDGET.toLocaleString("en-US")} tokens, medians of repeated runs; ¹ est. = run cut off and extrapolated, see below):`,
    "",
    speedTable(rows),
    "",
    detailTable(rows),
    "",
    "The compaction family , each cold (a fresh cache, nothing remembered), timed in turn with one plain counting pass in one process:",
    "",
    stagesTable(rows),
    "",
    targetsSection(rows),
    "",
    issue31,
    "",
    `Quality on ${quality.histories} over-budget agent histories of 6 to 120 messages (budgets 3% to 93% of the history; in ${quality.taskAloneOver} the current task alone exceeds the budget), both with ${quality.counter}, seed ${quality.seed}:`,
    "",
    qualityTable(quality),
  ].join("\n");
  process.stdout.write(`${output}\n`);
  if (process.argv.includes("--write")) {
    const path = join(__dirname, "..", "BENCHMARKS.md");
    // The agent-run section is written by its own bench: kept as it is here, then rewritten by it below.
    const agents = currentAgentsSection();
    // So is the before/after section (`--before-after --write`).
    const beforeAfterSection = existsSync(path) ? markedSection(readFileSync(path, "utf8"), BEFORE_AFTER_START, BEFORE_AFTER_END) : "";
    const kept = [beforeAfterSection, agents].filter((section) => section !== "").map((section) => `\n${section}\n`).join("");
    writeFileSync(path, `${BENCHMARKS_HEADER}\n${output}\n\n${BENCHMARKS_NOTES}\n${kept}`);
    process.stderr.write(`wrote ${path}\n`);
  }
  await runAgentBench({ write: process.argv.includes("--write") });
}

/** Markers of the before/after section of BENCHMARKS.md. */
const BEFORE_AFTER_START = "<!-- before-after:start -->";
const BEFORE_AFTER_END = "<!-- before-after:end -->";

/** The section between `start` and `end` in `document`, markers included ("" when there is none). */
function markedSection(document: string, start: string, end: string): string {
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  return from >= 0 && to > from ? document.slice(from, to + end.length) : "";
}

/** `document` with its before/after section replaced by `section`, or the section put before the agent runs'. */
function withBeforeAfterSection(document: string, section: string): string {
  const block = `${BEFORE_AFTER_START}\n${section.trim()}\n${BEFORE_AFTER_END}`;
  const current = markedSection(document, BEFORE_AFTER_START, BEFORE_AFTER_END);
  if (current !== "") return document.replace(current, () => block);
  const agents = document.indexOf(AGENTS_SECTION_START);
  return agents >= 0 ? `${document.slice(0, agents)}${block}\n\n${document.slice(agents)}` : `${document.trimEnd()}\n\n${block}\n`;
}

const BENCHMARKS_HEADER = `# Benchmarks

Produced by \`npm run bench -- --write\` (the tables below are what that run printed).
`;

const BENCHMARKS_NOTES = `## How to read this

- **Conversations** (\`bench/conversations.ts\`, seed ${SEED}): a system prompt of about 2,000 characters, finished turns of 2 to
  12 steps, each step an AI message with 1 to 4 parallel tool calls and their results, and a current task cut off mid-work.
  Tool outputs: 70% of 100 to 900 characters, 28% of 0.9 to 3 KB, 2% of 8 to 30 KB (file dumps, base64, minified JSON).
  About 1,000 characters (300 tokens) per message on average.
- **Budget**: ${BUDGET.toLocaleString("en-US")} tokens for every approach. Counter: \`tiktokenCounter("o200k_base")\` (js-tiktoken
  with the ranks it ships) up to 10,000 messages, \`approximateTokenCounter\` for the 100,000-message row.
- **floor**: the counter called once over the whole list (\`counter(messages)\`), which counts every message exactly once.
  In the speed table it is timed alternately with the cold runs in the same process, so the ratio "ours cold / floor" is
  taken under the same load; the detail table adds a separate floor process's timing of the same pass and of the counter
  called once per message (\`counter([message])\` for each message).
- **ours cold**: \`new SlidingWindowCompactor({ cache: new TokenCountCache() }).compact(messages, budget, counter)\`, a fresh
  cache each run. The code is JIT-warmed on another conversation first, so "cold" means a cold count cache.
  Counting is lazy and newest first: only the messages the rules read are counted (the column "messages counted").
- **warm (a)**: the compacted result of a cold run, plus one new step (an AI message with two tool calls and their results),
  compacted again with the same cache: an agent that keeps the compacted list as its state.
  **warm (b)**: the *full* history plus one new step, with the cache of a cold run over the history: a view-mode agent
  whose state keeps everything and compacts only what it sends. Each warm run appends a different new step.
- **trimMessages**: \`trimMessages(messages, { strategy: "last", includeSystem: true, startOn: "human", maxTokens, tokenCounter })\`
  from @langchain/core with the same counter. It calls the counter on ever shorter prefixes, so its work is known in
  advance from the per-message counts ("counter calls (message counts)"). ¹ Where a run would take more than a few
  minutes it is stopped after its time cap and the rest is extrapolated by the tokens the remaining calls count, at the
  rate measured so far. At 500 messages the full run is measured, and the same extrapolation from its first quarter is
  printed beside it as a check of the method.
- **The compaction family**: at 2,500 messages (tiktoken) and 100,000 (approximate), in one process and in
  turn, one counting pass, \`SlidingWindowCompactor.compact\`, \`new CompactionPipeline([new ToolResultPruningCompactor(),
  new SlidingWindowCompactor()]).compact\` and \`ToolResultPruningCompactor.compact\`, each cold (a fresh cache shared by
  its stages, nothing remembered); medians of 3 and 5 runs. "Messages counted" is what each hands the counter.
- **Timings** are medians of repeated runs (5 to 9 cold runs, each beside a plain pass, and as many warm runs; 2 to 5 passes in the floor process; one trimMessages run), each after a
  forced GC, on a 2-core machine shared with other jobs: expect noise of tens of percent between runs.
- **Memory**: each measurement runs in its own child process; "peak RSS" is that process's maximum resident set (input
  conversation included), "input heap" the heap holding the conversation; the last column is the heap a cache holds once it
  has the count of every message (after \`compactWithReport\`, which counts them all), measured after a GC: O(number of
  messages), no message is copied.
- **Time slices and long texts** (\`bench/slices.ts\`): each long compaction runs from nothing remembered, in
  turn with time slices (the default, \`SLICE_MS\` = 10 ms) and with slicing off (\`setSliceMs(Infinity)\`, the work in
  one go as before slices), in one process. A timer asks every millisecond when it last ran; the longest gap between two
  of its turns (or from the last one to the end of the work) is the longest stall of the event loop, which includes
  garbage collection and the machine's other jobs. The texts are counted by \`tiktokenCounter("o200k_base")\`
  (which samples texts of 65,536 characters and more, \`src/counting/sampled-length.ts\`) and encoded once by js-tiktoken
  with the same ranks; the error is against that encoding.
- **Quality** (\`bench/quality.ts\`): random histories from the same generator, kept only when over budget. "Valid for
  providers": every tool call has its result and every result its call; a broken result counts as invalid.

## What bounds the ratios

- **Cold is far below one counting pass** because counting is lazy: a 20,000-token budget is filled by the newest few
  dozen messages, so a cold compaction counts 16 to 107 messages whatever the history's length (column "messages
  counted"). A warm run's floor is counting the new step once; the rest is a layout over the kept list, so "warm under
  2% of cold" is bounded by (tokens of one new step) / (budget), not by the compactor.
- **Warm (b)** (full history + 1 step) counts only the new step too, and the layout is remembered per conversation
  and extended; what is left in proportion to the history is one identity comparison per message (is this still the
  list seen last?).
- **100,000 messages with the estimate**: the estimate is a few field reads per message, so one counting pass and one
  layout pass cost the same order; a list never seen needs the layout in full (a tool result may answer a call
  anywhere).
- **Pruning → sliding window** decides only the tool results the window can keep (\`src/compactors/rewrites-then-window.ts\`),
  returning the same list as the two stages in turn; it reads further back than the window alone (pruned results are
  small, so more history fits) and builds the replacements it keeps, hence more than the window's cost.
- **Pruning alone** counts every message once (it must know whether the target is reached) and builds a replacement
  \`ToolMessage\` for each result it prunes (about 30,000 at 100,000 messages), half of whose cost is \`@langchain/core\`'s
  constructor.
- **Against b5c250d** (the before/after table): the one definition of exchanges, read in every provider shape,
  made cold compactions of very long histories slower; counting calls in place and growing pruning's trailing
  batch from ids took back part of it. What is left is in the layout (\`addOwner\`, \`readFacts\`) and the count
  cache's writes, whose earlier devices (typed-array lists, the id hash table, sparse counts) the devices audit
  removed on measurements taken under a load average of 10-15.
`;

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
