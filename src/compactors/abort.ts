import { describeValue } from "../errors";
import type { CompactOptions } from "./compactor";

/** Throws a `TypeError` unless `options` is `undefined` or `{ signal?: AbortSignal }`. */
export function assertCompactOptions(options: unknown): asserts options is CompactOptions | undefined {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`compaction options must be an object, got ${describeValue(options)}`);
  }
  const { signal } = options as { signal?: unknown };
  if (signal === undefined) return;
  const candidate = signal as Partial<AbortSignal> | null;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.aborted !== "boolean" || typeof candidate.addEventListener !== "function") {
    throw new TypeError(`\`signal\` must be an AbortSignal, got ${describeValue(signal)}`);
  }
}

/**
 * The signal of `options` when they are valid, else `undefined`: for work
 * that runs before the options are checked (a long list's layout, which is
 * checked first so that its errors come first) and that a signal should stop.
 */
export function signalOf(options: unknown): AbortSignal | undefined {
  try {
    assertCompactOptions(options);
  } catch {
    return undefined;
  }
  return options?.signal;
}

/** Rejects with the signal's reason once it is aborted (checked between the steps of a compaction). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

/**
 * `work`, abandoned as soon as `signal` aborts: the returned promise then
 * rejects with the signal's reason, whether or not `work` itself listens.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
