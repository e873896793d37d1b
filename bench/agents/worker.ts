/**
 * One strategy on one workload, every seed, in a process of its own: the
 * normal runs, then the hidden-window runs when asked. Prints the results as
 * one JSON line on stdout; progress goes to stderr.
 */
import { runAgentWorkload } from "./harness";
import type { AgentRunResult } from "./harness";
import { strategyOf } from "./strategies";
import type { WorkloadKey } from "./workload";
import { workloadOf } from "./workloads";

/** What the parent asks for. */
export interface AgentWorkerTask {
  strategy: string;
  workload: WorkloadKey;
  seeds: number[];
  /** The seeds of the hidden-window runs. Default `seeds`. */
  hiddenSeeds?: number[];
  quick: boolean;
  /** Then the hidden-window runs, one set per fraction: the provider refuses requests over that fraction of the window. */
  hiddenWindowFractions: number[];
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? "") as AgentWorkerTask;
  const strategy = strategyOf(task.strategy);
  const results: AgentRunResult[] = [];
  const variants = [undefined, ...task.hiddenWindowFractions];
  const seedsOf = (fraction: number | undefined) => (fraction === undefined ? task.seeds : (task.hiddenSeeds ?? task.seeds));
  for (const [seed, hidden] of variants.flatMap((fraction) => seedsOf(fraction).map((seed) => [seed, fraction] as const))) {
    const workload = workloadOf(task.workload, seed, { quick: task.quick });
    const { result } = await runAgentWorkload(strategy, workload, hidden === undefined ? {} : { hiddenWindowFraction: hidden });
    results.push(result);
    const bill = Math.round(result.bills.anthropic.allIn / 1000);
    process.stderr.write(
      `    ${hidden === undefined ? "" : `[hidden window ${hidden}] `}${task.workload} seed ${seed} ${strategy.label}: ${result.failed === null ? "" : `FAILED at call ${result.failed.agentCall} (${result.failed.error.slice(0, 80)}), `}` +
        `${result.agentCalls}+${result.summaryCalls} calls, over ${result.overWindow}, invalid ${result.invalid}, questions ${result.questions.answered}/${result.questions.answerable}, all-in A ${bill}k, ${(result.wallMs / 1000).toFixed(1)} s\n`,
    );
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
