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
