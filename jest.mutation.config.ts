import { join } from "node:path";
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
 * 85 s together, for `src/messages`), and the fast-check property suites: a surviving mutant runs every covering
 * test in full, and at FC_RUNS=100 those suites made one mutant cost ~10 s (1,100 mutants of `src/messages` ≈ 2 h).
 * So the scores measure the deterministic tests, which issue 12 asks to pin each rule; `all` keeps the properties.
 */
const SETS: Record<string, readonly string[]> = {
  messages: [
    "compactor", "rules.direct", "shapes", "bad-input", "view-window", "compactors/shared-rules", "rules/*",
  ],
  counting: ["counting", "cache", "compactor", "bad-input", "hook", "rules/*"],
  compactors: [
    "compactor", "rules.direct", "shapes", "bad-input", "hook", "view-window", "compactors/pipeline",
    "compactors/shared-rules", "compactors/summarization", "compactors/tool-result-offload", "compactors/tool-result-pruning",
    "rules/*",
  ],
  integrations: ["integrations/*", "rules.direct", "view-window", "hook", "rules/*"],
};

const ALL = ["**/*.test.ts"];
const NEVER = ["/node_modules/", "/__tests__/consumers/", "/__tests__/examples\\.", "/__tests__/runs-bench\\.", "/__tests__/dual-package\\."];

/**
 * Stryker's jest runner loads every test file of the set for every mutant (it filters tests by name, not files),
 * so a run over one or two source files is fastest with the few suites that state their rules: MUTATION_TESTS may
 * also be a comma-separated list of test files (paths under __tests__ without `.test.ts`), e.g.
 * `MUTATION_TESTS=compactor,rules.direct`.
 */
const scope = process.env.MUTATION_TESTS ?? "all";
const names = scope === "all" ? null : scope in SETS ? SETS[scope]! : scope.split(",").map((name) => name.trim());
if (names !== null && names.some((name) => name === "" || name.includes(".."))) {
  throw new Error(`MUTATION_TESTS must be all, one of ${Object.keys(SETS).join(", ")}, or a list of test files, not ${scope}`);
}

const config: Config = {
  ...base,
  // Transpile only (tsconfig.mutation.json: isolated modules, emitted as CommonJS): the tests are type-checked by
  // `npm test` and `tsc`, and Stryker's TypeScript checker rejects a mutant that does not compile before any test
  // runs; ts-jest's own type check made loading the three suites of one run 33 s instead of 10 s.
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.mutation.json", diagnostics: false }] },
  testMatch: names === null ? ALL : names.map((name) => `<rootDir>/__tests__/${name}.test.ts`),
  testPathIgnorePatterns: NEVER,
  // Absolute paths: Stryker reads `testEnvironment` before jest expands <rootDir>.
  // Each mutant run loads only the test files that hold one of its covering tests (scripts/mutation/).
  testEnvironment: join(__dirname, "scripts/mutation/recording-environment.cjs"),
  testSequencer: join(__dirname, "scripts/mutation/covering-files-sequencer.cjs"),
};

export default config;
