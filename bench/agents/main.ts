/**
 * `npm run bench -- --agents`: every strategy on four agent workloads
 * written apart from the library's design (a coding agent, a research
 * agent, a support chat, a data analyst agent), several seeds each, through `createAgent`,
 * offline; then the same runs against a provider whose real window is
 * smaller than the configured one. Prints the section; with `--write` also
 * writes it into BENCHMARKS.md (between its own markers) and the chart
 * beside it. `--quick`: one seed, shorter workloads.
 */
import { runChild } from "../measure";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { AgentRunResult } from "./harness";
import { ANTHROPIC, OPENAI, OPENAI_OLDER } from "./pricing";
import { differenceTable, goals, goalsSection, hiddenTable, isValid, leverTable, resultsTable, totals } from "./report";
import type { StrategyRuns } from "./report";
import { RECOMMENDED, STRATEGIES, strategyOf } from "./strategies";
import type { AgentWorkerTask } from "./worker";
import type { WorkloadKey } from "./workload";
import { WORKLOAD_KEYS, workloadOf } from "./workloads";

/** Markers of this bench's section in BENCHMARKS.md. */
export const AGENTS_SECTION_START = "<!-- agent-runs:start -->";
export const AGENTS_SECTION_END = "<!-- agent-runs:end -->";

const ROOT = join(__dirname, "..", "..");
const BENCHMARKS_PATH = join(ROOT, "BENCHMARKS.md");
export const AGENTS_CHART_FILE = "BENCHMARKS-agents.svg";

/** The seeds of a full run, and of `--quick`. */
export const AGENT_SEEDS = [1, 2, 3];
export const QUICK_SEEDS = [1];
/**
 * The hidden-window provider's real window, as fractions of the configured one: above every strategy's trigger
 * (0.7), and below it (a counter that underestimates the provider's count by two thirds, as reported for
 * tool_use blocks and CJK text).
 */
export const HIDDEN_WINDOW_FRACTIONS = [0.85, 0.6];
/** Children run at once (the machine has 2 cores). */
const PARALLEL = 2;

const TITLES: Record<WorkloadKey, string> = { coding: "Coding agent", research: "Research agent", support: "Support chat", analyst: "Data analyst agent" };

function progress(text: string): void {
  process.stderr.write(`  ${text}\n`);
}

/** Replaces (or appends) this bench's section of `document`. */
export function withAgentsSection(document: string, section: string): string {
  const block = `${AGENTS_SECTION_START}\n${section.trim()}\n${AGENTS_SECTION_END}`;
  const start = document.indexOf(AGENTS_SECTION_START);
  const end = document.indexOf(AGENTS_SECTION_END);
  if (start >= 0 && end > start) return `${document.slice(0, start)}${block}${document.slice(end + AGENTS_SECTION_END.length)}`;
  return `${document.trimEnd()}\n\n${block}\n`;
}

/** This bench's section as BENCHMARKS.md has it now, markers included ("" when there is none). */
export function currentAgentsSection(): string {
  if (!existsSync(BENCHMARKS_PATH)) return "";
  const document = readFileSync(BENCHMARKS_PATH, "utf8");
  const start = document.indexOf(AGENTS_SECTION_START);
  const end = document.indexOf(AGENTS_SECTION_END);
  return start >= 0 && end > start ? document.slice(start, end + AGENTS_SECTION_END.length) : "";
}

function runWorker(task: AgentWorkerTask): Promise<AgentRunResult[]> {
  return runChild<AgentRunResult[]>(join(__dirname, "worker.ts"), [JSON.stringify(task)], { label: `agent worker ${JSON.stringify(task)}`, exposeGc: false });
}

async function chart(results: readonly AgentRunResult[], seed: number): Promise<string> {
  // Vega is an ES module only: loaded at run time, so the CommonJS bench and tests never require it.
  const { renderAgentChart } = (await import("./chart.mjs")) as typeof import("./chart.mjs");
  const charted = STRATEGIES.filter((strategy) => strategy.kind !== "lever");
  const bills = results
    .filter((run) => run.seed === seed && strategyOf(run.strategy).kind !== "lever")
    .flatMap((run) => {
      const strategy = strategyOf(run.strategy);
      return run.cumulativeAnthropic.map((bill, index) => ({ workload: TITLES[run.workload as WorkloadKey], strategy: strategy.label, kind: strategy.kind, call: index + 1, bill }));
    });
  const outcomes = charted.map((strategy) => {
    const t = totals(results.filter((run) => run.strategy === strategy.key));
    return { strategy: strategy.label, kind: strategy.kind, bill: t.bills.anthropic.allIn, answered: t.answered };
  });
  return renderAgentChart(bills, outcomes, { seed, workloads: WORKLOAD_KEYS.map((key) => TITLES[key]), strategies: charted.map((s) => ({ label: s.label, color: s.color })) });
}

const byStrategy = (runs: readonly AgentRunResult[]): StrategyRuns[] => STRATEGIES.map((strategy) => ({ strategy, runs: runs.filter((run) => run.strategy === strategy.key) }));

/** Per workload: the cheapest valid row (Anthropic-style), and the rows answering the most questions. */
function observations(runs: readonly AgentRunResult[]): string {
  const lines: string[] = [];
  for (const key of WORKLOAD_KEYS) {
    const rows = byStrategy(runs.filter((run) => run.workload === key))
      .filter((entry) => entry.runs.length > 0)
      .map((entry) => ({ entry, t: totals(entry.runs) }));
    if (rows.length === 0) continue;
    const valid = rows.filter((x) => isValid(x.t)).sort((a, b) => a.t.bills.anthropic.allIn - b.t.bills.anthropic.allIn);
    const most = Math.max(...rows.map((x) => x.t.answered));
    const best = rows.filter((x) => x.t.answered === most).map((x) => x.entry.strategy.label);
    const cheapest = valid[0];
    lines.push(
      `- ${TITLES[key]}: cheapest valid row (Anthropic-style all-in) ${cheapest ? `${cheapest.entry.strategy.label}, ${Math.round(cheapest.t.bills.anthropic.allIn / 1000)}k, ${cheapest.t.answered} of ${cheapest.t.answerable} questions` : "none"}; most questions answered (${most}): ${best.join("; ")}.`,
    );
  }
  return lines.join("\n");
}

/** Options of {@link runAgentBench}. */
export interface AgentBenchOptions {
  quick?: boolean;
  write?: boolean;
  /** Only these strategies (by key; development runs). Default all. */
  only?: readonly string[];
  /** These seeds instead of the default ones (development runs). */
  seeds?: readonly number[];
}

/** Runs the agent benchmark; returns the Markdown section. */
export async function runAgentBench(options: AgentBenchOptions = {}): Promise<string> {
  const started = Date.now();
  const quick = options.quick ?? false;
  const seeds = [...(options.seeds ?? (quick ? QUICK_SEEDS : AGENT_SEEDS))];
  const strategies = options.only === undefined ? STRATEGIES : options.only.map(strategyOf);
  process.stderr.write(`agent runs: ${WORKLOAD_KEYS.length} workloads × ${seeds.length} seeds × ${strategies.length} strategies${quick ? " (quick)" : ""}, then the hidden-window runs\n`);

  // One child per strategy and workload (its normal runs, then its hidden-window runs), PARALLEL at a time; the
  // longest first, so that the two lanes end together.
  const tasks: { task: AgentWorkerTask; runs: AgentRunResult[] }[] = [];
  for (const workload of WORKLOAD_KEYS) {
    for (const strategy of strategies) {
      tasks.push({ task: { strategy: strategy.key, workload, seeds, hiddenSeeds: seeds.slice(0, 1), quick, hiddenWindowFractions: strategy.hidden === true ? HIDDEN_WINDOW_FRACTIONS : [] }, runs: [] });
    }
  }
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
        entry.runs = await runWorker(entry.task);
      }
    }),
  );
  const normal = tasks.flatMap((entry) => entry.runs.filter((run) => run.hiddenWindowFraction === null));
  const hiddenRuns = (fraction: number) => tasks.flatMap((entry) => entry.runs.filter((run) => run.hiddenWindowFraction === fraction));

  const workloadTitles = WORKLOAD_KEYS.map((key) => ({ key, title: TITLES[key] }));
  const perWorkload = WORKLOAD_KEYS.map((key) => ({ key, title: TITLES[key], results: byStrategy(normal.filter((run) => run.workload === key)) }));
  const pooled = byStrategy(normal);
  const goalList = [...goals(pooled, "pooled"), ...perWorkload.flatMap((w) => goals(w.results, w.title))];
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Node ${process.version}`;
  const recommended = strategyOf(RECOMMENDED);
  const section = [
    "## Agent runs written apart from the library: bill and quality per strategy",
    "",
    `Produced by \`npm run bench -- --runs${quick ? " --quick" : ""}\`. Date: ${new Date().toISOString()}. Machine: ${machine}. Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.` +
      (quick ? " **Quick run: one seed, shortened workloads; not the numbers to quote.**" : ""),
    "",
    `Four agents written apart from the library's design (\`bench/agents/\`; the older self-written run benchmark, \`bench/runs/\`, was retired: its model replayed a script whatever it was sent, so lost context cost nothing), ${seeds.length} seed${seeds.length > 1 ? "s" : ""} each, every strategy through \`createAgent\` with a checkpointer and the same counter. ` +
      "The scripted agent model decides each call from what it is sent: it fetches again what it needs and can no longer see, so lost context costs calls and the bill shows it (see the method below). " +
      `Recommended configuration (★): ${recommended.label}. Levers: rows marked "lever", one change each. ✓: a peer that stayed valid (0 over the window, 0 invalid, no failed run). Bills are in thousands of token-equivalents (an uncached input token = 1), summed over the runs.`,
    "",
    `![Cumulative all-in bill per strategy and workload, and bill against questions answered](${AGENTS_CHART_FILE})`,
    "",
    `### All workloads and seeds (sums)`,
    "",
    resultsTable(pooled),
    "",
    "### Goals for the recommended configuration",
    "",
    goalsSection(goalList),
    "",
    "### Levers, one row each (the same settings on every workload)",
    "",
    leverTable(pooled),
    "",
    "Where the recommended configuration's Anthropic-style bill goes, against the cheapest valid peer there:",
    "",
    differenceTable(perWorkload),
    "",
    observations(normal),
    "",
    ...perWorkload.flatMap((w) => [`### ${w.title}`, "", resultsTable(w.results), ""]),
    "### Hidden window: the provider's real window is smaller than the configured one",
    "",
    `The first seed's runs of the peers, the baseline and the recommended row against a scripted provider whose real window is a fraction of the one every strategy is configured with (to keep the whole run short, one seed). A request over it is refused with the error \`ChatAnthropic\` throws for Anthropic's "prompt is too long" (a \`ContextOverflowError\`, built offline through the real class), and a run whose invocation throws has failed. Ours recovers through the middleware's \`recoverOverflow\` (on by default): it compacts harder, calibrated by the token count the error reports, and sends the request once more. Refused requests are not billed.`,
    "",
    ...HIDDEN_WINDOW_FRACTIONS.flatMap((fraction) => [`Real window ${Math.round(fraction * 100)}% of the configured one:`, "", hiddenTable(byStrategy(hiddenRuns(fraction)), workloadTitles), ""]),
    methodNotes(seeds, quick),
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (options.write) {
    writeFileSync(join(ROOT, AGENTS_CHART_FILE), await chart(normal, seeds[0]!));
    progress(`wrote ${AGENTS_CHART_FILE}`);
    const document = existsSync(BENCHMARKS_PATH) ? readFileSync(BENCHMARKS_PATH, "utf8") : "# Benchmarks\n";
    writeFileSync(BENCHMARKS_PATH, withAgentsSection(document, section));
    progress("wrote BENCHMARKS.md (agent-runs section)");
  }
  return section;
}

function methodNotes(seeds: readonly number[], quick: boolean): string {
  const sample = (key: WorkloadKey) => workloadOf(key, seeds[0]!, { quick });
  const coding = sample("coding");
  const research = sample("research");
  const support = sample("support");
  const analyst = sample("analyst");
  const questions = (w: ReturnType<typeof sample>) => w.turns.filter((turn) => turn.question !== undefined).length;
  return `### Method

- **Workloads** (\`bench/agents/workloads/\`), each built from its seed; tools answer from their arguments and the run's world
  (the same call in the same state returns the same text).
  - *Coding agent* (window ${coding.contextWindow.toLocaleString("en-US")}): ${coding.turns.length - questions(coding)} requests; in each the agent greps,
    reads up to three files of 4-40 KB, runs a test project (logs of 10-60 KB holding two failure lines with error codes),
    writes two fixed files back whole (\`write_file\`: the tool-call input is the whole file, so outputs are large), and
    reruns the project. A file the agent wrote in the request before is not read again: its own write shows it.
  - *Research agent* (window ${research.contextWindow.toLocaleString("en-US")}): ${research.turns.length - questions(research)} topics; five rounds of 2-4 parallel
    \`web_search\` calls (results of 2-8 KB), two \`fetch_page\` calls (6-15 KB), then five \`write_section\` calls, each
    citing 2-4 specific results (the comparison section cites the topic before); the introduction needs a project code the
    user gave once, at the start.
  - *Support chat* (window ${support.contextWindow.toLocaleString("en-US")}): ${support.turns.length} user turns. The customer states an account number,
    two order numbers, a postcode, a pickup point and a loyalty card in the first turns; later turns ask about stock
    (\`check_stock\`), policies, order status (\`lookup_order\`, needs the order number), replacements (order number and
    postcode), a pickup change.
  - *Data analyst agent* (window ${analyst.contextWindow.toLocaleString("en-US")}): ${analyst.turns.length - questions(analyst)} requests of one quarterly review against a
    warehouse. Much of what it needs comes from the user: finance's monthly targets (a CSV of about 7 KB), a loader's log (7-13 KB)
    and a CRM export (4-12 KB) are pasted into user messages, which no tool-result edit can clear; later queries and the report
    need their rows, and when they are out of view the agent asks the user to paste them again. Before each \`run_sql\` it
    needs the definition line of every column the query uses (\`describe_table\`: 40-130 columns, 4-12 KB, read once per
    table, so losing it costs a second describe); results run from six-row aggregates of a few hundred bytes to breakdowns and
    top-N lists of up to 25 KB; \`load_csv\`, \`save_chart\` (Vega-Lite, data inline) and \`write_report\` take inputs of
    2-12 KB. Follow-ups build on figures found turns before (Q3 revenue per region against Q4, against targets, in the
    report); a figure out of view is queried again.
  - *Questions* (${questions(coding)}, ${questions(research)}, ${questions(support)} and ${questions(analyst)} per run): a user turn asks for a planted fact — an error code from an
    earlier test log, a source id behind a finding, the ticket or branch or reviewer the user named, a postcode, an order or
    tracking number, the result id behind a figure, a chart id, or the budget version, loader run or CRM export id the user
    pasted with their data. The support chat asks for what was last mentioned at least 20 turns before.
- **The agent's model** (\`agent-model.ts\`) works through a fixed plan per user turn, one step per call, and decides each
  call from the request it received. Before a step it checks that each piece of information the step needs is visible
  in the request text (all messages, summaries and placeholders, and the string arguments of its own earlier tool calls):
  a file's current content-hash line (its last line, so an offload preview does not show it), a failure's error code, a
  finding's source id, a fact the user stated. For each missing piece it calls the reader tool with the key when the
  request shows an offloaded copy of a result that held it (reading the whole result), else the tool that produced it
  again (after a pruned placeholder, a \`[cleared]\` result or nothing at all); a fact only the user knows it asks for,
  ending the turn — the user repeats it in a turn of its own, and the plan goes on. It answers a question from what it is
  sent and never fetches for one. It does not redo steps (its place in the plan is its own state) and gives up a turn
  after 25 calls (step cap) or after asking the user twice. Every call reports \`usage_metadata\` as a provider would.
- **Summary model** (\`summarizer.ts\`), shared by ours and LangChain's \`summarizationMiddleware\`: a one-line narrative, then
  each identifier of its input, in order, with the line around it (at most 300 characters), until its output limit
  (\`maxTokens\`, 1,024 unless the caller rebuilds it with another, as ours does through \`lc_kwargs\`).
- **Strategies** (\`strategies.ts\`; add a row there), all on \`createAgent\` with a \`MemorySaver\`, the same window and
  \`tiktokenCounter("o200k_base")\`: no compaction; \`trimMessages\` in a \`beforeModel\` middleware that replaces the state
  with the trimmed messages (the createAgent pattern of LangChain's short-term-memory docs; \`strategy: "last"\`,
  \`startOn: "human"\`, \`endOn: ["human", "tool"]\`, \`maxTokens\` = 70% of the window minus system prompt and tools);
  \`summarizationMiddleware\` (\`trigger\`/\`keep\` tokens at 70%/40% minus system prompt and tools, other options at their
  defaults, so it hands the summarizer only the last 4,000 tokens of what it replaces); \`contextEditingMiddleware\` with
  \`ClearToolUsesEdit\` (trigger at 70% minus tools, \`tokenCountMethod: "model"\`, which counts the system prompt, \`keep\`
  at its default of 3 results); ours through \`compactionMiddleware\` (view mode, \`recoverOverflow\` on, its default), at
  \`compactAt\` 0.7 and \`compactTo\` 0.4 unless the row says otherwise. The levers are rows, each with the same settings
  on every workload: the summary call that resends the conversation (\`summaryPrompt: "conversation"\`, the default of
  \`agentCompactor\`; the summary model binds the agent's tools, so the call reads the agent's cached prefix), deeper
  compactions, pruning or offloading before summarizing; on top of the recommended line, clearing old tool-call inputs
  (\`clearToolInputs\`, results left alone) and a \`minGainTokens\` priced by \`cacheAwareMinGain\`. The recommended row is the README's one line,
  \`agentCompactionMiddleware({ model, contextWindow, store })\`: \`agentCompactor\` offloading to the store, \`compactTo: 0.3\`,
  and the offload reader tool, which the middleware registers on the agent.
- **Measured** (\`call-log.ts\`): every model call, agent and summary, as it is made. Over the window: agent requests
  (messages plus tool schemas) above the configured window; the scripted provider answered them anyway. Invalid: the run
  benchmark's provider checks (\`bench/agents/validity.ts\`: ordering rules, then \`@langchain/openai\`'s and
  \`@langchain/anthropic\`'s converters). Answerable: the fact reached the agent (a user message or a tool result) in an
  earlier turn of that run; answered: the fact was in the request that answered.
- **Bill** (\`pricing.ts\`): each request serialized in provider order (tool schemas, then messages) and compared a whole
  message at a time with every earlier request of the run, agent and summary calls alike (a summary call that sent the
  conversation's prefix would read the cache); cache lifetime is ignored. ${ANTHROPIC.label}: the shared prefix (at least
  ${ANTHROPIC.minCachedTokens.toLocaleString("en-US")} tokens) at ${ANTHROPIC.cacheRead}, the rest of a cacheable request written at ${ANTHROPIC.cacheWrite}, output at ${ANTHROPIC.output}.
  ${OPENAI.label}: the shared prefix from ${OPENAI.minCachedTokens.toLocaleString("en-US")} tokens in steps of ${OPENAI.cacheStep} at ${OPENAI.cacheRead}, the rest at 1, output at
  ${OPENAI.output}; ${OPENAI_OLDER.label}: the same at ${OPENAI_OLDER.cacheRead}. All in = agent input + summary input + every output; input only
  leaves the outputs out. Anthropic's real cache hits only at breakpoints written by earlier requests; the "any earlier
  prefix" rule used here is looser, and favours strategies that edit mid-conversation (context editing, compaction).
- **Hidden window**: the provider's real window is ${HIDDEN_WINDOW_FRACTIONS.map((f) => `${Math.round(f * 100)}%`).join(" or ")} of the configured one; over it, the scripted provider throws what
  \`ChatAnthropic\` throws for a 400 "prompt is too long" (built offline through the real class with a stub \`fetch\`).
- **Goals** (recommended configuration, pooled and per workload): 0 over the window, 0 invalid, no failed run; at least
  as many questions answered as every peer; all-in bill no more than the cheapest valid peer under each price model.
- **What bounds a miss of the bill**: each goal line breaks the difference down (agent input, summary input, output).
  A summary call of ours resends the model's last request, read from the cache: under a price model whose cached
  input costs 0.5 it pays half the conversation per call, where LangChain's \`summarizationMiddleware\` sends the last
  4,000 tokens of what it replaces (and answers fewer questions); context editing makes no summary call at all, so
  where it stays inside the window its bill has no summary input or output to match, and what it saves on them
  is bounded by what its agent pays to fetch cleared results again.
- **Not measured here**: real model behaviour (the agent and summary models are scripted), cache lifetimes, latency.
  Clearing old reasoning (\`clearThinking\`) has no row: the scripted agent writes no reasoning blocks. Levers
  measured while choosing the recommended row and left out to keep the run short (one seed, same workloads):
  summaries held to 512 tokens cost more (more summary calls), \`compactAt\` 0.85 (peers left at 0.7) was no
  cheaper than offloading with \`compactTo\` 0.3; a summary call that resends only the shortest earlier request
  holding the stretch (instead of the latest) billed less here (coding, cached 0.5: summary input 70k against 100k
  on seed 1) but was not adopted: on Anthropic that request's cache entry may have expired (five minutes), which
  this model does not see.
`;
}
