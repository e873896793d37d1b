/**
 * One strategy of the run benchmark in its own process: a short warm-up run,
 * then the given seeds. Prints its results as one JSON line on stdout;
 * progress goes to stderr.
 */
import { runStrategy } from "./harness";
import type { RunResult, RunSettings } from "./harness";
import { STRATEGIES } from "./strategies";

/** What the parent asks for. */
export interface RunsWorkerTask {
  strategy: string;
  seeds: number[];
  settings: RunSettings;
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? "") as RunsWorkerTask;
  const strategy = STRATEGIES.find((entry) => entry.key === task.strategy);
  if (!strategy) throw new Error(`no strategy ${task.strategy}`);
  // JIT warm-up on a short run, so that the first seed does not pay for compiling the code paths.
  await runStrategy(strategy, 99, { ...task.settings, turns: 2, callsPerTurn: 6 });
  const runs: RunResult[] = [];
  for (const seed of task.seeds) {
    const run = await runStrategy(strategy, seed, task.settings);
    runs.push(run);
    process.stderr.write(
      `  seed ${seed} ${strategy.label}: peak ${run.peakTokens}, over window ${run.overWindow}, invalid ${run.invalid}, breaks ${run.prefixBreaks}/${run.compactions ?? "–"}, ` +
        `billed A ${Math.round(run.billedA)}, facts ${run.factsVisible.length}/${run.factsPlanted}, ${(run.wallMs / 1000).toFixed(1)} s\n`,
    );
  }
  process.stdout.write(`${JSON.stringify(runs)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
