import { describeValue } from "../errors";

/** Throws a `TypeError` naming the value unless an integration's on/off option is a boolean. */
export function assertRuntimeFlag(name: string, value: unknown): asserts value is boolean {
  if (typeof value !== "boolean") throw new TypeError(`\`${name}\` must be true or false, got ${describeValue(value)}`);
}
