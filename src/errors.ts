/**
 * Errors of this library. Bad arguments get the standard `TypeError` or
 * `RangeError` with a message that names the bad value; a counter that fails
 * is wrapped in {@link TokenCounterError}, which keeps the original as `cause`.
 */

/** A token counter threw while counting a message. */
export class TokenCounterError extends Error {
  override readonly name = "TokenCounterError";
  constructor(
    message: string,
    /** Index, in the list being compacted, of the message the counter failed on. */
    readonly index: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A short, safe rendering of a bad value for an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const ctor = (value as { constructor?: { name?: string } }).constructor?.name;
  return ctor && ctor !== "Object" ? `${/^[aeiou]/i.test(ctor) ? "an" : "a"} ${ctor}` : "an object";
}

/** Throws unless `value` is a whole number of at least `min`. */
export function assertWholeNumber(name: string, value: unknown, min = 0): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new RangeError(`\`${name}\` must be a whole number of at least ${min}, got ${describeValue(value)}`);
  }
}

/** Throws unless `value` is a finite number of at least 0. */
export function assertTokenBudget(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`\`${name}\` must be a finite number of tokens of at least 0, got ${describeValue(value)}`);
  }
}
