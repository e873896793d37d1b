import type { Config } from "jest";
import base from "./jest.config";

/**
 * The jest configuration Stryker runs (see stryker.config.json and TESTING.md).
 *
 * Each mutant is re-tested by every kept test that covers it, so a run's time is roughly the covering tests' time
 * summed over the mutants: on this 2-core machine only a test set chosen per folder finishes. `MUTATION_TESTS`
 * names the set (the folder mutated); `all` keeps every suite below. Never kept: the packed-build consumers, the
 * examples, the run benchmark and dual-package (they check code outside `src/` or the builds, and take minutes).
 * The sets drop suites that reach the folder only through another one (e.g. the tiktoken and cache suites,
 * 85 s together, for `src/messages`), not suites that state its rules.
 */
const SETS: Record<string, readonly string[]> = {
  messages: [
    "compactor", "rules.direct", "shapes", "bad-input", "layout-reuse", "view-window", "properties", "rules.random",
    "compactors/shared-rules", "mutation-gaps/*",
  ],
  counting: ["counting", "cache", "compactor", "bad-input", "hook", "mutation-gaps/*"],
  compactors: [
    "compactor", "rules.direct", "shapes", "bad-input", "hook", "view-window", "properties", "rules.random", "compactors/*",
    "mutation-gaps/*",
  ],
  integrations: ["integrations/*", "rules.direct", "view-window", "hook", "mutation-gaps/*"],
};

const ALL = ["**/*.test.ts"];
const NEVER = ["/node_modules/", "/__tests__/consumers/", "/__tests__/examples\\.", "/__tests__/runs-bench\\.", "/__tests__/dual-package\\."];

const scope = process.env.MUTATION_TESTS ?? "all";
if (scope !== "all" && !(scope in SETS)) {
  throw new Error(`MUTATION_TESTS must be all or one of ${Object.keys(SETS).join(", ")}, not ${scope}`);
}

const config: Config = {
  ...base,
  testMatch: scope === "all" ? ALL : SETS[scope]!.map((name) => `<rootDir>/__tests__/${name}.test.ts`),
  testPathIgnorePatterns: NEVER,
};

export default config;
