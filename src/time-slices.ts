/**
 * Long work in slices.
 *
 * Compacting a long history is synchronous work: counting 100,000 messages,
 * laying them out, serializing them for a store's compare. Done in one go it
 * holds the event loop for seconds, so nothing else runs meanwhile (other
 * conversations' requests, the timer of `compactionTimeoutMs`, a listener
 * that aborts a signal), and an abort is seen only once the work is done.
 * So long work checks {@link sliceUsedUp} as it goes and, once a slice of
 * {@link SLICE_MS} is used up, awaits {@link nextSlice}: a macrotask
 * (`setImmediate`; a microtask would let nothing else run), after which the
 * signal is checked and the work goes on, or stops with the signal's reason.
 *
 * One clock serves the process: a slice is measured from the last time any
 * slicing work resumed, and every task waiting for the next slice resumes in
 * the same macrotask, so two compactions running at once share a slice
 * rather than taking one each in a row.
 *
 * A slice ends only where the work checks the clock, so how far past
 * {@link SLICE_MS} a slice runs depends on the largest unit of work between
 * two checks: a message counted, a window of a long text, a few hundred
 * messages serialized.
 */

/** The time a slice of work may take before it yields to the event loop, unless {@link setSliceMs} says otherwise. */
export const SLICE_MS = 10;

const now = (): number => performance.now();
// `setImmediate` runs after pending I/O and timers; where there is none (a browser), a zero timeout.
const schedule: (callback: () => void) => void =
  typeof setImmediate === "function" ? (callback) => void setImmediate(callback) : (callback) => void setTimeout(callback, 0);

let sliceMs = SLICE_MS;
let sliceStart = now();
let sliceNumber = 0;
let waiting: Promise<void> | null = null;

/** Whether the running slice has lasted its time ({@link SLICE_MS}). */
export function sliceUsedUp(): boolean {
  return now() - sliceStart >= sliceMs;
}

/** How many slices began so far: work that must make progress in each slice compares it with the one it last saw. */
export function currentSlice(): number {
  return sliceNumber;
}

/**
 * Resolves in a later macrotask, at the start of a new slice; rejects with
 * `signal`'s reason when it was aborted meanwhile.
 */
export function nextSlice(signal?: AbortSignal): Promise<void> {
  waiting ??= new Promise<void>((resolve) =>
    schedule(() => {
      waiting = null;
      sliceStart = now();
      sliceNumber += 1;
      resolve();
    }),
  );
  if (signal === undefined) return waiting;
  return waiting.then(() => {
    if (signal.aborted) throw signal.reason;
  });
}

/**
 * Sets how long a slice lasts, and returns what it was: `Infinity` turns
 * slicing off (nothing yields, the work runs in one go as it did before
 * slices), `0` yields at every check. For benchmarks that measure what
 * slicing costs, and tests that compare results with and without it.
 */
export function setSliceMs(ms: number): number {
  const before = sliceMs;
  sliceMs = ms;
  sliceStart = now();
  return before;
}

/** Runs `steps` to the end at once. */
export function runToEnd<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs `steps` (work that pauses at each `yield`) in the running slice, and
 * returns its value when it ends there; otherwise a promise of it, going on in
 * later slices (and rejecting with `signal`'s reason once that aborts).
 */
export function runInSlices<T>(steps: Generator<void, T, void>, signal?: AbortSignal): T | Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (sliceUsedUp()) return continueInSlices(steps, signal);
  }
}

async function continueInSlices<T>(steps: Generator<void, T, void>, signal: AbortSignal | undefined): Promise<T> {
  for (;;) {
    await nextSlice(signal);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      if (sliceUsedUp()) break;
    }
  }
}

/** `items.map(map)`, reading the clock every 64 items and awaiting the next slice when this one is used up. */
export async function mapInSlices<T, U>(items: readonly T[], map: (item: T) => U, signal?: AbortSignal): Promise<U[]> {
  const mapped: U[] = [];
  for (let index = 0; index < items.length; index += 1) {
    mapped.push(map(items[index]!));
    if ((index & 63) === 63 && sliceUsedUp()) await nextSlice(signal);
  }
  return mapped;
}
