/**
 * The run benchmark's chart: request tokens per model call (the saw-tooth
 * of each strategy) and the cumulative billed input under price model A,
 * drawn with Vega-Lite and rendered to SVG by Vega in Node (no browser, no
 * canvas). An ES module because Vega ships only as one.
 */
import * as vega from "vega";
import { compile } from "vega-lite";
import type { TopLevelSpec } from "vega-lite";

/** One point of one strategy's line. */
export interface ChartPoint {
  strategy: string;
  kind: string;
  call: number;
  tokens: number;
  billedA: number;
}

/** Options of {@link renderRunsChart}. */
export interface ChartOptions {
  contextWindow: number;
  seed: number;
  /** The tokens axis is cut here (the no-compaction line keeps rising; it is clipped). */
  tokensAxisMax: number;
  /** Strategy labels in legend order, and their colours. */
  strategies: { label: string; color: string }[];
}

/** The chart as SVG text. */
export async function renderRunsChart(points: ChartPoint[], options: ChartOptions): Promise<string> {
  const color = {
    field: "strategy",
    type: "nominal",
    title: "strategy",
    scale: { domain: options.strategies.map((s) => s.label), range: options.strategies.map((s) => s.color) },
    legend: { orient: "bottom", columns: 2, labelLimit: 0, symbolStrokeWidth: 3 },
  } as const;
  const dash = {
    field: "kind",
    type: "nominal",
    title: "kind",
    scale: { domain: ["ours", "peer", "baseline"], range: [[1, 0], [6, 3], [2, 2]] },
    legend: { orient: "bottom" },
  } as const;
  const width = 820;
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `Scripted agent run, seed ${options.seed}: ${points.reduce((max, p) => Math.max(max, p.call), 0)} model calls, ${options.contextWindow.toLocaleString("en-US")}-token window`, fontSize: 15 },
    data: { values: points },
    config: { font: "DejaVu Sans, Arial, sans-serif", view: { stroke: "#ddd" }, axis: { labelFontSize: 11, titleFontSize: 12 } },
    vconcat: [
      {
        width,
        height: 300,
        title: "Request tokens per model call (the line above the window is clipped)",
        layer: [
          {
            mark: { type: "line", clip: true, strokeWidth: 1.6 },
            encoding: {
              x: { field: "call", type: "quantitative", title: "model call" },
              y: { field: "tokens", type: "quantitative", title: "request tokens", scale: { domain: [0, options.tokensAxisMax] } },
              color,
              strokeDash: dash,
            },
          },
          {
            data: { values: [{ window: options.contextWindow, label: "context window" }] },
            layer: [
              { mark: { type: "rule", color: "#c00", strokeWidth: 1.5 }, encoding: { y: { field: "window", type: "quantitative" } } },
              { mark: { type: "text", align: "left", dx: 4, dy: -6, color: "#c00" }, encoding: { y: { field: "window", type: "quantitative" }, x: { datum: 0, type: "quantitative" }, text: { field: "label" } } },
            ],
          },
        ],
      },
      {
        width,
        height: 260,
        title: "Cumulative billed input, price model A (cache write 1.25, cache read 0.1)",
        mark: { type: "line", strokeWidth: 1.6 },
        encoding: {
          x: { field: "call", type: "quantitative", title: "model call" },
          y: { field: "billedA", type: "quantitative", title: "billed input (token-equivalents)" },
          color,
          strokeDash: dash,
        },
      },
    ],
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  return view.toSVG();
}
