/**
 * The agent benchmark's tables and goals: per workload and pooled (sums
 * over workloads and seeds), the hidden-window runs, and where the
 * recommended configuration's bill differs from the cheapest valid peer's.
 */
import type { AgentRunResult } from "./harness";
import { PRICE_MODELS } from "./pricing";
import type { Bill, PriceModel } from "./pricing";
import { RECOMMENDED } from "./strategies";
import type { Strategy } from "./strategies";

/** One strategy's runs (any subset: one workload, or all). */
export interface StrategyRuns {
  strategy: Strategy;
  runs: AgentRunResult[];
}

/** Sums over a set of runs. */
export interface Totals {
  runs: number;
  failed: number;
  overWindow: number;
  invalid: number;
  agentCalls: number;
  summaryCalls: number;
  capped: number;
  gaveUp: number;
  refetchTool: number;
  refetchReader: number;
  refetchAsk: number;
  asked: number;
  answerable: number;
  answered: number;
  agentInputTokens: number;
  summaryInputTokens: number;
  outputTokens: number;
  bills: Record<PriceModel["key"], Bill>;
}

const add = (a: Bill, b: Bill): Bill => ({ agentInput: a.agentInput + b.agentInput, summaryInput: a.summaryInput + b.summaryInput, output: a.output + b.output, allIn: a.allIn + b.allIn });
const zeroBill = (): Bill => ({ agentInput: 0, summaryInput: 0, output: 0, allIn: 0 });

export function totals(runs: readonly AgentRunResult[]): Totals {
  const t: Totals = {
    runs: runs.length,
    failed: 0,
    overWindow: 0,
    invalid: 0,
    agentCalls: 0,
    summaryCalls: 0,
    capped: 0,
    gaveUp: 0,
    refetchTool: 0,
    refetchReader: 0,
    refetchAsk: 0,
    asked: 0,
    answerable: 0,
    answered: 0,
    agentInputTokens: 0,
    summaryInputTokens: 0,
    outputTokens: 0,
    bills: Object.fromEntries(PRICE_MODELS.map((p) => [p.key, zeroBill()])) as Totals["bills"],
  };
  for (const run of runs) {
    t.failed += run.failed === null ? 0 : 1;
    t.overWindow += run.overWindow;
    t.invalid += run.invalid;
    t.agentCalls += run.agentCalls;
    t.summaryCalls += run.summaryCalls;
    t.capped += run.cappedTurns;
    t.gaveUp += run.gaveUpTurns;
    t.refetchTool += run.refetches.tool;
    t.refetchReader += run.refetches.reader;
    t.refetchAsk += run.refetches.ask;
    t.asked += run.questions.asked;
    t.answerable += run.questions.answerable;
    t.answered += run.questions.answered;
    t.agentInputTokens += run.tokens.agentInput;
    t.summaryInputTokens += run.tokens.summaryInput;
    t.outputTokens += run.tokens.agentOutput + run.tokens.summaryOutput;
    for (const price of PRICE_MODELS) t.bills[price.key] = add(t.bills[price.key], run.bills[price.key]);
  }
  return t;
}

/** No request over the window, none malformed, no run that threw. */
export function isValid(t: Totals): boolean {
  return t.overWindow === 0 && t.invalid === 0 && t.failed === 0;
}

const k = (value: number) => `${(value / 1000).toLocaleString("en-US", { maximumFractionDigits: 0 })}k`;
const n = (value: number) => value.toLocaleString("en-US");

/** One table: a row per strategy over `results`' runs (already narrowed to a workload, or pooled). */
export function resultsTable(results: readonly StrategyRuns[]): string {
  const lines = [
    "| strategy | runs failed | requests over the window | invalid requests | model calls: agent + summary | turns cut: step cap / gave up | re-fetches: tool / offload reader / asked the user | questions answered / answerable | input tokens: agent + summary | output tokens | **all-in, Anthropic-style** | **all-in, OpenAI-style 0.1** | all-in, OpenAI-style 0.5 | input only, Anthropic-style | input only, OpenAI-style 0.1 |",
    "|---|---:|---:|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const { strategy, runs } of results) {
    if (runs.length === 0) continue;
    const t = totals(runs);
    const mark = strategy.key === RECOMMENDED ? " ★" : strategy.kind === "peer" && isValid(t) ? " ✓" : "";
    const input = (key: PriceModel["key"]) => k(t.bills[key].agentInput + t.bills[key].summaryInput);
    lines.push(
      `| ${strategy.label}${mark} | ${t.failed} | ${n(t.overWindow)} | ${n(t.invalid)} | ${n(t.agentCalls)} + ${n(t.summaryCalls)} | ${t.capped} / ${t.gaveUp} | ${t.refetchTool} / ${t.refetchReader} / ${t.refetchAsk} | ${t.answered} / ${t.answerable} | ${k(t.agentInputTokens)} + ${k(t.summaryInputTokens)} | ${k(t.outputTokens)} | ${k(t.bills.anthropic.allIn)} | ${k(t.bills.openai.allIn)} | ${k(t.bills["openai-older"].allIn)} | ${input("anthropic")} | ${input("openai")} |`,
    );
  }
  return lines.join("\n");
}

/** A goal and whether the recommended configuration met it. */
export interface Goal {
  scope: string;
  text: string;
  met: boolean;
  measured: string;
}

/** The goals for the recommended configuration on `results` (one workload, or pooled), labelled `scope`. */
export function goals(results: readonly StrategyRuns[], scope: string): Goal[] {
  const ran = results.filter((entry) => entry.runs.length > 0).map((entry) => ({ entry, t: totals(entry.runs) }));
  const mine = ran.find((x) => x.entry.strategy.key === RECOMMENDED);
  const peers = ran.filter((x) => x.entry.strategy.kind === "peer");
  if (mine === undefined) return [{ scope, text: `the recommended configuration (${RECOMMENDED}) ran`, met: false, measured: "it has no runs here" }];
  const out: Goal[] = [];
  const m = mine.t;
  out.push({
    scope,
    text: "0 requests over the window, 0 invalid, no failed run",
    met: isValid(m),
    measured: `${m.overWindow} over the window, ${m.invalid} invalid, ${m.failed} failed runs of ${m.runs}`,
  });
  const bestPeer = peers.reduce<{ label: string; answered: number } | null>((best, x) => (best === null || x.t.answered > best.answered ? { label: x.entry.strategy.label, answered: x.t.answered } : best), null);
  out.push({
    scope,
    text: "at least as many questions answered as every peer",
    met: bestPeer === null || m.answered >= bestPeer.answered,
    measured: `${m.answered} of ${m.answerable}; best peer ${bestPeer === null ? "none" : `${bestPeer.label}, ${bestPeer.answered}`}`,
  });
  const valid = peers.filter((x) => isValid(x.t));
  for (const price of PRICE_MODELS) {
    const cheapest = [...valid].sort((a, b) => a.t.bills[price.key].allIn - b.t.bills[price.key].allIn)[0];
    const mineBill = m.bills[price.key].allIn;
    out.push({
      scope,
      text: `all-in bill no more than the cheapest valid peer, ${price.label}`,
      met: cheapest === undefined || mineBill <= cheapest.t.bills[price.key].allIn,
      measured:
        cheapest === undefined
          ? `no peer stayed valid here (ours ${k(mineBill)})`
          : `ours ${k(mineBill)}, ${cheapest.entry.strategy.label} ${k(cheapest.t.bills[price.key].allIn)} (${((mineBill / cheapest.t.bills[price.key].allIn - 1) * 100).toFixed(1)}%)` +
            (mineBill <= cheapest.t.bills[price.key].allIn ? "" : `; ${whereItGoes(m.bills[price.key], cheapest.t.bills[price.key], m, cheapest.t)}`),
    });
  }
  return out;
}

/** What bounds a bill miss: the difference part by part, and what drove it (summary calls, re-fetches). */
function whereItGoes(mine: Bill, peer: Bill, m: Totals, p: Totals): string {
  const signed = (x: number) => `${x >= 0 ? "+" : "−"}${k(Math.abs(x))}`;
  return (
    `the difference is agent input ${signed(mine.agentInput - peer.agentInput)}, summary input ${signed(mine.summaryInput - peer.summaryInput)}, output ${signed(mine.output - peer.output)} ` +
    `(summary calls ${n(m.summaryCalls)} against ${n(p.summaryCalls)}, re-fetches ${n(m.refetchTool + m.refetchReader + m.refetchAsk)} against ${n(p.refetchTool + p.refetchReader + p.refetchAsk)}, questions ${m.answered} against ${p.answered})`
  );
}

export function goalsSection(list: readonly Goal[]): string {
  return list.map((goal) => `- ${goal.scope}: ${goal.text}: **${goal.met ? "pass" : "miss"}**. ${goal.measured}.`).join("\n");
}

/** Where the recommended configuration's Anthropic-style bill differs from the cheapest valid peer's, part by part. */
export function differenceTable(byWorkload: readonly { title: string; results: readonly StrategyRuns[] }[]): string {
  const lines = [
    "| workload | cheapest valid peer (Anthropic-style) | agent input: ours / peer | summary input: ours / peer | output: ours / peer | model calls: ours / peer | re-fetches: ours / peer |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const { title, results } of byWorkload) {
    const ran = results.filter((entry) => entry.runs.length > 0).map((entry) => ({ entry, t: totals(entry.runs) }));
    const mine = ran.find((x) => x.entry.strategy.key === RECOMMENDED);
    const peer = ran.filter((x) => x.entry.strategy.kind === "peer" && isValid(x.t)).sort((a, b) => a.t.bills.anthropic.allIn - b.t.bills.anthropic.allIn)[0];
    if (mine === undefined) continue;
    if (peer === undefined) {
      lines.push(`| ${title} | none stayed valid | – | – | – | – | – |`);
      continue;
    }
    const a = mine.t;
    const b = peer.t;
    const refetches = (t: Totals) => t.refetchTool + t.refetchReader + t.refetchAsk;
    lines.push(
      `| ${title} | ${peer.entry.strategy.label} | ${k(a.bills.anthropic.agentInput)} / ${k(b.bills.anthropic.agentInput)} | ${k(a.bills.anthropic.summaryInput)} / ${k(b.bills.anthropic.summaryInput)} | ${k(a.bills.anthropic.output)} / ${k(b.bills.anthropic.output)} | ${n(a.agentCalls + a.summaryCalls)} / ${n(b.agentCalls + b.summaryCalls)} | ${refetches(a)} / ${refetches(b)} |`,
    );
  }
  return lines.join("\n");
}

/**
 * Every row of ours (levers included), pooled: valid or not, questions, and the all-in bill under each price model
 * against the cheapest valid peer's.
 */
export function leverTable(results: readonly StrategyRuns[]): string {
  const ran = results.filter((entry) => entry.runs.length > 0).map((entry) => ({ entry, t: totals(entry.runs) }));
  const valid = ran.filter((x) => x.entry.strategy.kind === "peer" && isValid(x.t));
  const cheapest = (key: PriceModel["key"]) => [...valid].sort((a, b) => a.t.bills[key].allIn - b.t.bills[key].allIn)[0];
  const lines = [
    `| row | valid | questions answered / answerable | summary calls | ${PRICE_MODELS.map((p) => `all-in, ${p.label} (vs cheapest valid peer)`).join(" | ")} |`,
    `|---|---|---|---:|${PRICE_MODELS.map(() => "---").join("|")}|`,
  ];
  for (const { entry, t } of ran) {
    if (entry.strategy.kind !== "ours" && entry.strategy.kind !== "lever") continue;
    const cells = PRICE_MODELS.map((price) => {
      const peer = cheapest(price.key);
      const mine = t.bills[price.key].allIn;
      return peer === undefined ? k(mine) : `${k(mine)} (${signedPercent(mine / peer.t.bills[price.key].allIn - 1)})`;
    });
    lines.push(`| ${entry.strategy.label}${entry.strategy.key === RECOMMENDED ? " ★" : ""} | ${isValid(t) ? "yes" : "no"} | ${t.answered} / ${t.answerable} | ${n(t.summaryCalls)} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

const signedPercent = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x * 100).toFixed(1)}%`;

/** The hidden-window runs: failed runs per strategy and workload, with the first refused call. */
export function hiddenTable(results: readonly StrategyRuns[], workloads: readonly { key: string; title: string }[]): string {
  const lines = [
    `| strategy | ${workloads.map((w) => `${w.title}: failed runs (first refused agent call)`).join(" | ")} | all: failed runs | requests refused | questions answered / answerable | all-in, Anthropic-style |`,
    `|---|${workloads.map(() => "---").join("|")}|---:|---:|---|---:|`,
  ];
  for (const { strategy, runs } of results) {
    if (runs.length === 0) continue;
    const cells = workloads.map((w) => {
      const mine = runs.filter((run) => run.workload === w.key);
      const failed = mine.filter((run) => run.failed !== null);
      const calls = failed.map((run) => run.failed!.agentCall).sort((x, y) => x - y);
      return `${failed.length} of ${mine.length}${calls.length > 0 ? ` (${calls.join(", ")})` : ""}`;
    });
    const failed = runs.filter((run) => run.failed !== null).length;
    const t = totals(runs);
    const refused = runs.reduce((sum, run) => sum + run.refused, 0);
    lines.push(`| ${strategy.label}${strategy.key === RECOMMENDED ? " ★" : ""} | ${cells.join(" | ")} | ${failed} of ${runs.length} | ${refused} | ${t.answered} / ${t.answerable} | ${k(t.bills.anthropic.allIn)} |`);
  }
  return lines.join("\n");
}
