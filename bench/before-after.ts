/**
 * `npm run bench -- --before-after [ref]`: the speed of this checkout against
 * an earlier commit (by default the last one before the restructuring of
 * `src/`), in one run, so a restructuring that keeps every behaviour can show
 * it kept the speed too.
 *
 * The earlier commit is checked out into a temporary git worktree that
 * shares this checkout's `node_modules`; both trees' own `bench/worker.ts`
 * then measure the same tasks (the same seeded histories, the same counter
 * and budget), alternating before and after, so drift of a shared machine
 * lands on both. Each cell is the median over the rounds of after ÷ before,
 * and the spread of the before/before ratios between rounds says how much of
 * a difference is noise.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, runChild } from "./measure";
import type { CounterName, OursResult, StagesResult, WorkerOutput, WorkerTask } from "./worker";

/** The last commit before `src/` was restructured (one name per concept, rules beside their engines). */
export const BEFORE_RESTRUCTURING = "b5c250d";

const ROUNDS = 3;
const BUDGET = 20_000;

interface Case {
  size: number;
  counter: CounterName;
  runs: number;
}

const CASES: Case[] = [
  { size: 2_500, counter: "tiktoken", runs: 5 },
  { size: 10_000, counter: "tiktoken", runs: 3 },
  { size: 100_000, counter: "approximate", runs: 5 },
];

/** What is compared, read from a worker's result. */
const OURS_METRICS: [string, (r: OursResult) => number][] = [
  ["sliding window, cold", (r) => r.coldMs],
  ["compacted + 1 step", (r) => r.warmCompactedMs],
  ["full history + 1 step", (r) => r.warmFullMs],
];
const STAGES_METRICS: [string, (r: StagesResult) => number][] = [
  ["pruning → window, cold", (r) => r.pipelineColdMs],
  ["pruning alone, cold", (r) => r.pruningColdMs],
  ["window with report, cold", (r) => r.windowReportColdMs],
];

function runWorker(root: string, task: WorkerTask): Promise<WorkerOutput> {
  return runChild<WorkerOutput>(join(root, "bench", "worker.ts"), [JSON.stringify(task)], { label: `worker in ${root} ${JSON.stringify(task)}`, cwd: root, stderr: "ignore" });
}

/** A worktree of `ref` beside this checkout, sharing its `node_modules`; removed by the returned function. */
function worktreeOf(root: string, ref: string): { dir: string; remove: () => void } {
  const dir = join(mkdtempSync(join(tmpdir(), "lcc-before-")), "tree");
  execFileSync("git", ["worktree", "add", "--detach", dir, ref], { cwd: root, stdio: "ignore" });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return {
    dir,
    remove: () => {
      execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" });
      rmSync(join(dir, ".."), { recursive: true, force: true });
    },
  };
}

const ratio = (value: number) => `${value.toFixed(2)}×`;

/** Runs the comparison and returns its table (markdown). */
export async function runBeforeAfter(ref = BEFORE_RESTRUCTURING): Promise<string> {
  const root = join(__dirname, "..");
  const before = worktreeOf(root, ref);
  const commit = (dir: string) => execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();
  const lines = [
    `Speed after ÷ before: this checkout (${commit(root)}) against ${ref} (${commit(before.dir)}), ` +
      `${ROUNDS} rounds alternating the two, medians within each worker; below 1 is faster now. "noise" is the largest ` +
      "spread of before ÷ before between rounds of that case.",
    "",
    "| messages | counter | what | after ÷ before | noise |",
    "|---:|---|---|---:|---:|",
  ];
  try {
    for (const c of CASES) {
      const task = (kind: "ours" | "stages"): WorkerTask => ({ task: kind, size: c.size, counter: c.counter, budget: BUDGET, runs: c.runs, seed: 1 });
      const rounds: { before: [OursResult, StagesResult]; after: [OursResult, StagesResult] }[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        process.stderr.write(`before/after: ${c.size} messages, round ${round + 1} of ${ROUNDS}\n`);
        // Alternate which tree goes first, so a slow spell of the machine does not fall on one side only.
        const order = round % 2 === 0 ? [before.dir, root] : [root, before.dir];
        const results = new Map<string, [OursResult, StagesResult]>();
        for (const dir of order) {
          const ours = (await runWorker(dir, task("ours"))).result as OursResult;
          const stages = (await runWorker(dir, task("stages"))).result as StagesResult;
          results.set(dir, [ours, stages]);
        }
        rounds.push({ before: results.get(before.dir)!, after: results.get(root)! });
      }
      const rowsOf = <R>(metrics: [string, (r: R) => number][], pick: (pair: [OursResult, StagesResult]) => R) => {
        for (const [label, read] of metrics) {
          const ratios = rounds.map((r) => read(pick(r.after)) / read(pick(r.before)));
          const befores = rounds.map((r) => read(pick(r.before)));
          const noise = Math.max(...befores) / Math.min(...befores);
          lines.push(`| ${c.size.toLocaleString("en-US")} | ${c.counter} | ${label} | ${ratio(median(ratios))} | ${ratio(noise)} |`);
        }
      };
      rowsOf(OURS_METRICS, (pair) => pair[0]);
      rowsOf(STAGES_METRICS, (pair) => pair[1]);
    }
  } finally {
    before.remove();
  }
  return lines.join("\n");
}
