/** Timing and memory helpers for the benchmark's child processes. */
import { spawn } from "node:child_process";

/**
 * Runs `script` with `args` in a child Node process (with this process's
 * exec arguments, so TypeScript loads as here) and resolves with the JSON
 * of the last line it printed; rejects, naming `label`, when it exits
 * with an error.
 */
export function runChild<T>(script: string, args: readonly string[], options: { label: string; exposeGc?: boolean; cwd?: string; stderr?: "inherit" | "ignore" }): Promise<T> {
  const { label, exposeGc = true, cwd, stderr = "inherit" } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, ...(exposeGc ? ["--expose-gc"] : []), script, ...args], {
      ...(cwd === undefined ? {} : { cwd }),
      stdio: ["ignore", "pipe", stderr],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`${label} exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").at(-1)!) as T);
    });
  });
}

/** Runs a full garbage collection when the process was started with `--expose-gc`. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) gc();
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Milliseconds taken by `work`, measured after a garbage collection so that one run's garbage does not bill the next. */
export async function timeOnce(work: () => unknown): Promise<number> {
  collectGarbage();
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** The median of `runs` timings of `work`, each run prepared by `setup` outside the timed region. */
export async function medianTime<T>(runs: number, setup: (run: number) => T, work: (input: T) => unknown): Promise<{ median: number; runs: number[] }> {
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const input = setup(run);
    times.push(await timeOnce(() => work(input)));
  }
  return { median: median(times), runs: times };
}

/** Heap used after a full collection, in bytes. */
export function settledHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** The peak resident set size of this process so far, in bytes. */
export function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** Writes a progress line to stderr. */
export function progress(text: string): void {
  process.stderr.write(`  ${text}\n`);
}
