/**
 * The agent benchmark's chart: the cumulative all-in bill (Anthropic-style)
 * of every strategy over one seed's model calls, one panel per workload,
 * and the pooled all-in bill against the questions answered. Drawn with
 * Vega-Lite and rendered to SVG by Vega in Node, as `bench/runs/chart.mts`
 * does. An ES module because Vega ships only as one.
 */
import * as vega from "vega";
import { compile } from "vega-lite";
import type { TopLevelSpec } from "vega-lite";

/** One point of one strategy's cumulative bill in one workload. */
export interface BillPoint {
  workload: string;
  strategy: string;
  kind: string;
  /** Model call (agent and summary calls, in order), from 1. */
  call: number;
  bill: number;
}

/** One strategy's pooled bill and questions answered. */
export interface OutcomePoint {
  strategy: string;
  kind: string;
  bill: number;
  answered: number;
}

export interface AgentChartOptions {
  seed: number;
  workloads: string[];
  strategies: { label: string; color: string }[];
}

export async function renderAgentChart(bills: BillPoint[], outcomes: OutcomePoint[], options: AgentChartOptions): Promise<string> {
  const color = {
    field: "strategy",
    type: "nominal",
    title: "strategy",
    scale: { domain: options.strategies.map((s) => s.label), range: options.strategies.map((s) => s.color) },
    legend: { orient: "bottom", columns: 2, labelLimit: 0, symbolStrokeWidth: 3 },
  } as const;
  const dash = { field: "kind", type: "nominal", title: "kind", scale: { domain: ["ours", "peer", "baseline"], range: [[1, 0], [6, 3], [2, 2]] }, legend: { orient: "bottom" } } as const;
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "Agent runs: what each strategy is billed, all in (agent input, summary input, outputs)", fontSize: 15 },
    config: { font: "DejaVu Sans, Arial, sans-serif", view: { stroke: "#ddd" }, axis: { labelFontSize: 11, titleFontSize: 12 } },
    vconcat: [
      {
        data: { values: bills },
        facet: { column: { field: "workload", type: "nominal", title: `Cumulative all-in bill, Anthropic-style, seed ${options.seed}`, sort: options.workloads } },
        spec: {
          width: 300,
          height: 260,
          mark: { type: "line", strokeWidth: 1.6 },
          encoding: {
            x: { field: "call", type: "quantitative", title: "model call (agent and summary)" },
            y: { field: "bill", type: "quantitative", title: "token-equivalents" },
            color,
            strokeDash: dash,
          },
        },
        resolve: { scale: { x: "independent", y: "independent" } },
      },
      {
        data: { values: outcomes },
        width: 620,
        height: 260,
        title: "All workloads and seeds: all-in bill (Anthropic-style) against questions answered",
        layer: [
          {
            mark: { type: "point", filled: true, size: 120 },
            encoding: {
              x: { field: "bill", type: "quantitative", title: "all-in bill, token-equivalents", scale: { zero: false } },
              y: { field: "answered", type: "quantitative", title: "questions answered", scale: { zero: false } },
              color,
              shape: { field: "kind", type: "nominal", title: "kind" },
            },
          },
        ],
      },
    ],
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  return view.toSVG();
}
