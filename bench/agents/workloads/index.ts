/** The workloads of the agent benchmark, by key. */
import type { Workload, WorkloadKey, WorkloadOptions } from "../workload";
import { analystWorkload } from "./analyst";
import { codingWorkload } from "./coding";
import { researchWorkload } from "./research";
import { supportWorkload } from "./support";

export const WORKLOAD_KEYS: readonly WorkloadKey[] = ["coding", "research", "support", "analyst"];

/** The workload `key` of `seed`. */
export function workloadOf(key: WorkloadKey, seed: number, options: WorkloadOptions = {}): Workload {
  switch (key) {
    case "coding":
      return codingWorkload(seed, options);
    case "research":
      return researchWorkload(seed, options);
    case "support":
      return supportWorkload(seed, options);
    case "analyst":
      return analystWorkload(seed, options);
    default:
      throw new RangeError(`no workload ${JSON.stringify(key)}; known: ${WORKLOAD_KEYS.join(", ")}`);
  }
}
