import { describeValue } from "../errors";
import { isCompactor } from "./compactor";
import type { Compactor } from "./compactor";
import { CompactionPipeline } from "./pipeline";
import { SlidingWindowCompactor } from "./sliding-window";

/**
 * The compactor an integration's `compactor` option names: the default
 * sliding window, an array as a pipeline, or any object with the
 * {@link Compactor} methods (recognised by its methods, never `instanceof`).
 */
export function resolveCompactor(value: unknown, optionName = "compactor"): Compactor {
  if (value === undefined) return new SlidingWindowCompactor();
  if (Array.isArray(value)) {
    value.forEach((stage, index) => {
      if (!isCompactor(stage)) {
        throw new TypeError(`\`${optionName}[${index}]\` must be a compactor (an object with compact and compactWithReport), got ${describeValue(stage)}`);
      }
    });
    return new CompactionPipeline(value as Compactor[]);
  }
  if (!isCompactor(value)) {
    throw new TypeError(
      `\`${optionName}\` must be a compactor (an object with compact and compactWithReport) or an array of them, got ${describeValue(value)}`,
    );
  }
  return value;
}

