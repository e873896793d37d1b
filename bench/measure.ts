/** Timing and memory helpers for the benchmark's child processes. */

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
