/**
 * Runs tasks one after another, in the order they were given; a task that
 * fails does not stop the ones behind it.
 */
export class SerialLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Settles once every task given so far has settled (never rejects). */
  drained(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}

/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts:
 * the caller stops waiting even for work that never settles (which is
 * abandoned; its eventual result is ignored).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
