/**
 * The run benchmark's tables and goals, from the results of every strategy
 * on every seed.
 */
import type { RunResult } from "./harness";
import type { Strategy } from "./strategies";

/** One strategy's results over all seeds (empty `runs` when it was not run). */
export interface StrategyRuns {
  strategy: Strategy;
  runs: RunResult[];
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: readonly number[]) => (values.length === 0 ? 0 : sum(values) / values.length);
const thousands = (value: number) => `${(value / 1000).toLocaleString("en-US", { maximumFractionDigits: 0 })}k`;
const int = (value: number) => value.toLocaleString("en-US");

/** Per-strategy aggregates used by the table and the goals. */
export interface Aggregate {
  overWindow: number;
  invalid: number;
  peak: number;
  prefixBreaks: number;
  compactions: number | null;
  billedA: number;
  billedB: number;
  inputTokens: number;
  summaryCalls: number;
  facts: number;
  readable: number;
  planted: number;
  cpuMs: number;
  /** Mean tokens outside the common prefix at a prefix break: what each break makes the provider re-read uncached. */
  freshPerBreak: number | null;
}

/** Tokens outside the common prefix, summed over the requests that broke the prefix. */
function freshAtBreaks(run: RunResult): number {
  return sum(run.steps.filter((step) => step.prefixBreak).map((step) => step.tokens - step.commonPrefixTokens));
}

export function aggregate(runs: readonly RunResult[]): Aggregate {
  const compactions = runs.map((run) => run.compactions);
  const breaks = sum(runs.map((run) => run.prefixBreaks));
  return {
    overWindow: sum(runs.map((run) => run.overWindow)),
    invalid: sum(runs.map((run) => run.invalid)),
    peak: Math.max(...runs.map((run) => run.peakTokens)),
    prefixBreaks: sum(runs.map((run) => run.prefixBreaks)),
    compactions: compactions.some((value) => value === null) ? null : sum(compactions as number[]),
    billedA: mean(runs.map((run) => run.billedA)),
    billedB: mean(runs.map((run) => run.billedB)),
    inputTokens: mean(runs.map((run) => run.inputTokens)),
    summaryCalls: sum(runs.map((run) => run.summaryCalls)),
    facts: sum(runs.map((run) => run.factsVisible.length)),
    readable: sum(runs.map((run) => run.factsReadable.length)),
    planted: sum(runs.map((run) => run.factsPlanted)),
    cpuMs: mean(runs.map((run) => run.compactionCpuMs)),
    freshPerBreak: breaks === 0 ? null : sum(runs.map(freshAtBreaks)) / breaks,
  };
}

/** The main table: one row per strategy, over all seeds. */
export function runsTable(results: readonly StrategyRuns[]): string {
  const lines = [
    "| strategy | requests over the window | provider-invalid requests | peak request tokens | prefix breaks / compactions | tokens re-sent per break | billed input A (per run) | billed input B (per run) | input tokens, no cache (per run) | summary model calls | facts visible in the final request | facts readable (offload reader) | compaction CPU ms (per run) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const { strategy, runs } of results) {
    if (runs.length === 0) {
      lines.push(`| ${strategy.label} | not run ||||||||||||`);
      continue;
    }
    const a = aggregate(runs);
    const firstOver = runs.map((run) => run.firstOverWindow).filter((value): value is number => value !== null);
    const over = a.overWindow === 0 ? "0" : `${int(a.overWindow)} (first at call ${Math.min(...firstOver)})`;
    lines.push(
      `| ${strategy.label} | ${over} | ${int(a.invalid)} | ${int(a.peak)} | ${int(a.prefixBreaks)} / ${a.compactions === null ? "–" : int(a.compactions)} | ${a.freshPerBreak === null ? "–" : int(Math.round(a.freshPerBreak))} | ${thousands(a.billedA)} | ${thousands(a.billedB)} | ${thousands(a.inputTokens)} | ${int(a.summaryCalls)} | ${a.facts} of ${a.planted} | ${a.readable} of ${a.planted} | ${a.cpuMs.toFixed(0)} |`,
    );
  }
  return lines.join("\n");
}

/** Per-seed detail: the numbers each run contributes, and the first invalid request's reason. */
export function detailTable(results: readonly StrategyRuns[]): string {
  const lines = [
    "| strategy | seed | over window | invalid (first reason) | peak | prefix breaks / compactions | billed A | billed B | facts visible | CPU ms | wall s |",
    "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const { strategy, runs } of results) {
    for (const run of runs) {
      const invalid = run.invalid === 0 ? "0" : `${run.invalid} (${run.firstProblem!.replace(/\|/g, "\\|").slice(0, 90)})`;
      lines.push(
        `| ${strategy.label} | ${run.seed} | ${run.overWindow} | ${invalid} | ${int(run.peakTokens)} | ${run.prefixBreaks} / ${run.compactions ?? "–"} | ${thousands(run.billedA)} | ${thousands(run.billedB)} | ${run.factsVisible.length} of ${run.factsPlanted} | ${run.compactionCpuMs.toFixed(0)} | ${(run.wallMs / 1000).toFixed(1)} |`,
      );
    }
  }
  return lines.join("\n");
}

/** One goal of the issue, with what this run measured. */
export interface Goal {
  text: string;
  met: boolean;
  measured: string;
}

/** The issue's goals, judged on these results. */
export function goals(results: readonly StrategyRuns[]): Goal[] {
  const ran = results.filter((entry) => entry.runs.length > 0);
  const ours = ran.filter((entry) => entry.strategy.kind === "ours");
  const peers = ran.filter((entry) => entry.strategy.kind === "peer");
  const out: Goal[] = [];

  const badRuns = ours.flatMap((entry) => entry.runs.filter((run) => run.overWindow > 0 || run.invalid > 0).map((run) => `${entry.strategy.label} seed ${run.seed}`));
  out.push({
    text: "ours has 0 over-window and 0 invalid requests on every run",
    met: badRuns.length === 0 && ours.length > 0,
    measured: badRuns.length === 0 ? `${sum(ours.map((entry) => entry.runs.length))} runs of ours, none over the window or invalid` : `failing runs: ${badRuns.join("; ")}`,
  });

  const bestPeerFacts = Math.max(...peers.map((entry) => aggregate(entry.runs).facts));
  const cheapestPeer = peers.map((entry) => ({ entry, a: aggregate(entry.runs) })).sort((x, y) => x.a.billedA - y.a.billedA)[0];
  const oursRanked = ours.map((entry) => ({ entry, a: aggregate(entry.runs) })).sort((x, y) => x.a.billedA - y.a.billedA);
  const qualifying = oursRanked.filter((x) => x.a.facts >= bestPeerFacts);
  const best = qualifying[0];
  const costGoal = best !== undefined && cheapestPeer !== undefined && best.a.billedA < cheapestPeer.a.billedA;
  const describe = (x: { entry: StrategyRuns; a: Aggregate }) => `${x.entry.strategy.label}: ${thousands(x.a.billedA)} per run, ${x.a.facts} facts`;
  out.push({
    text: "the best of ours costs less than every peer under price model A, with at least as many facts visible as the best peer",
    met: costGoal,
    measured:
      `best peer on facts: ${bestPeerFacts} of ${aggregate(peers[0]?.runs ?? []).planted}; cheapest peer under A: ${cheapestPeer ? describe(cheapestPeer) : "none"}; ` +
      (best ? `cheapest of ours with at least ${bestPeerFacts} facts: ${describe(best)}` : `no strategy of ours shows ${bestPeerFacts} facts (cheapest of ours: ${oursRanked[0] ? describe(oursRanked[0]) : "none"})`),
  });

  const breaches = ours.flatMap((entry) =>
    entry.runs.filter((run) => run.compactions === null || run.prefixBreaks > run.compactions).map((run) => `${entry.strategy.label} seed ${run.seed}: ${run.prefixBreaks} breaks, ${run.compactions} compactions`),
  );
  out.push({
    text: "prefix breaks no more than one per compaction (ours)",
    met: breaches.length === 0 && ours.length > 0,
    measured: breaches.length === 0 ? `every run of ours: breaks ≤ compactions (${sum(ours.map((e) => aggregate(e.runs).prefixBreaks))} breaks, ${sum(ours.map((e) => aggregate(e.runs).compactions ?? 0))} compactions in all)` : breaches.join("; "),
  });
  return out;
}

export function goalsSection(list: readonly Goal[]): string {
  return list.map((goal) => `- ${goal.text}: **${goal.met ? "pass" : "miss"}**. ${goal.measured}.`).join("\n");
}

/**
 * What the numbers say about each goal's margin and what bounds it, in
 * sentences built from these results (each claim is stated only where the
 * results show it).
 */
export function findings(results: readonly StrategyRuns[]): string {
  const ran = results.filter((entry) => entry.runs.length > 0).map((entry) => ({ entry, a: aggregate(entry.runs) }));
  const byKey = (key: string) => ran.find((x) => x.entry.strategy.key === key);
  const ours = ran.filter((x) => x.entry.strategy.kind === "ours").sort((x, y) => x.a.billedA - y.a.billedA);
  const peers = ran.filter((x) => x.entry.strategy.kind === "peer").sort((x, y) => x.a.billedA - y.a.billedA);
  const lines: string[] = [];
  const pct = (value: number, base: number) => `${Math.abs((value / base - 1) * 100).toFixed(1)}% ${value < base ? "below" : "above"}`;
  const cheapestPeer = peers[0];
  const bestPeerFacts = Math.max(...peers.map((x) => x.a.facts));
  if (cheapestPeer && ours[0]) {
    lines.push(
      `- **Cost under A**: the cheapest of ours, ${ours[0].entry.strategy.label}, bills ${thousands(ours[0].a.billedA)} per run, ${pct(ours[0].a.billedA, cheapestPeer.a.billedA)} the cheapest peer (${cheapestPeer.entry.strategy.label}, ${thousands(cheapestPeer.a.billedA)}), and shows ${ours[0].a.facts} of ${ours[0].a.planted} facts at the end. ` +
        "Under A the bill is mostly cache reads of the prefix (0.1 per token on every call) and the rewrite of the whole request after each compaction (1.25 per token), so it follows the average request size and the number of compactions; every strategy here compacts at the same trigger.",
    );
    for (const x of ours.filter((o) => o.a.facts >= bestPeerFacts)) {
      const fresh = (value: number | null) => (value === null ? "–" : int(Math.round(value)));
      let text =
        `  - ${x.entry.strategy.label} shows ${x.a.facts} facts (best peer: ${bestPeerFacts}) and bills ${thousands(x.a.billedA)} under A, ${pct(x.a.billedA, cheapestPeer.a.billedA)} the cheapest peer` +
        ` (under B ${thousands(x.a.billedB)}, ${pct(x.a.billedB, cheapestPeer.a.billedB)} it). It breaks the prefix ${x.a.prefixBreaks} times to the peer's ${cheapestPeer.a.prefixBreaks}; ` +
        `each break re-sends ${fresh(x.a.freshPerBreak)} tokens outside the cached prefix, the peer's ${fresh(cheapestPeer.a.freshPerBreak)}.`;
      if (x.a.freshPerBreak !== null && cheapestPeer.a.freshPerBreak !== null && x.a.freshPerBreak > cheapestPeer.a.freshPerBreak) {
        text +=
          " A stage of ours rewrites or removes the oldest messages first, near the start of the request, so nearly the whole request after it is written to the cache anew;" +
          " clearing all but the newest three results changes, after its first clearing, only the result that just left those three, near the end of the request.";
      }
      lines.push(text);
    }
  }
  const editing = byKey("lc-context-editing");
  if (editing) {
    lines.push(
      `- **Why context editing keeps facts**: it never removes a message, it only replaces old tool results with \`[cleared]\` (all but the last 3), so the user's and the AI's messages, with their facts, stay (${editing.a.facts} of ${editing.a.planted}; the tool-result facts are cleared). ` +
        `The price is that its requests never shrink below those messages: they peaked at ${int(editing.a.peak)} tokens${editing.a.overWindow > 0 ? `, ${editing.a.overWindow} requests over the window` : ""}, and a longer run fills the window with messages it has no way to remove.`,
    );
  }
  const window = byKey("ours-sw-agent");
  if (window) {
    lines.push(
      `- **Why the sliding window loses them**: it removes whole turns and steps, oldest first, and the facts were planted in the first turns: by the last request they are gone (${window.a.facts} of ${window.a.planted}).` +
        (byKey("ours-prune-sum-sw-protected")
          ? " Pipelines that prune or offload first still need the window once the kept history (AI messages, small results under `minTokens`, placeholders) passes the target; summaries keep the facts only as long as the window does not drop the summaries themselves, the oldest history (compare the row with summaries protected)."
          : ""),
    );
  }
  const summaryFirst = byKey("ours-sum-sw-protected");
  const prunedFirst = byKey("ours-prune-sum-sw-protected");
  if (summaryFirst && prunedFirst) {
    lines.push(
      `- **Pruning before summarization**: with pruning first, the oldest tool results reach the summary model as placeholders, so what they held is gone before it is summarized (${prunedFirst.a.facts} of ${prunedFirst.a.planted} facts, ${thousands(prunedFirst.a.billedA)} under A); ` +
        `summarization straight before the window (summaries protected) summarizes them whole (${summaryFirst.a.facts} of ${summaryFirst.a.planted}, ${thousands(summaryFirst.a.billedA)}). ` +
        "Pruning also keeps more, smaller messages in each request (the window then drops less), and under A the bill follows the request's size. Where a summary model is at hand, summarize first; pruning first suits agents without one.",
    );
  }
  const trim = byKey("trim");
  if (trim && trim.a.overWindow > 0) {
    lines.push(
      `- **trimMessages** with \`startOn: "human"\` cuts at the newest user message that fits; when the current turn alone exceeds \`maxTokens\` it returns no message at all, and \`createReactAgent\` then sends the whole state: ${trim.a.overWindow} requests over the window, and the facts it "keeps" (${trim.a.facts}) are those of such a full-state last request. Its prefix breaks (${trim.a.prefixBreaks}) are fewer than its trims (${trim.a.compactions ?? "–"}) because, once trimmed to the current turn, each call only appends.`,
    );
  }
  const summary = byKey("lc-summarization");
  if (summary) {
    lines.push(
      `- **summarizationMiddleware** hands the summary model only the last 4,000 tokens of what it replaces (\`trimTokensToSummarize\`'s default) and replaces the whole history with \`REMOVE_ALL_MESSAGES\`, so the early facts never reach the summarizer: ${summary.a.facts} of ${summary.a.planted}, with ${summary.a.summaryCalls} summary calls.`,
    );
  }
  return lines.join("\n");
}
