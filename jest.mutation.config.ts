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
 * So the scores measure the deterministic tests, which pin each rule; `all` keeps the properties.
 */
const SETS: Record<string, readonly string[]> = {
  messages: ["messages/*", "compactors/sliding-window", "compactors/sliding-window.rules", "compactors/shared-rules", "integrations/view-window*", "errors"],
  counting: ["counting/*", "compactors/sliding-window", "compactors/compaction-hook", "errors"],
  compactors: ["compactors/*", "messages/shapes", "integrations/view-window", "errors"],
  integrations: ["integrations/*", "compactors/compaction-hook", "errors"],
};

const ALL = ["**/*.test.ts"];
/** Never kept: the packed package and the examples (built code), the bench harnesses, and the property suites in a named set. */
const NEVER = ["/node_modules/", "/__tests__/package/", "/__tests__/examples/", "/__tests__/bench/"];
const PROPERTIES = "\\.properties\\.test\\.ts$";

/**
 * Stryker's jest runner loads every test file of the set for every mutant (it filters tests by name, not files),
 * so a run over one or two source files is fastest with the few suites that state their rules: MUTATION_TESTS may
 * also be a comma-separated list of test files (paths under __tests__ without `.test.ts`, globs allowed), e.g.
 * `MUTATION_TESTS=compactors/sliding-window,compactors/sliding-window.rules`.
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
  testPathIgnorePatterns: scope in SETS ? [...NEVER, PROPERTIES] : NEVER,
  // Absolute paths: Stryker reads `testEnvironment` before jest expands <rootDir>.
  // Each mutant run loads only the test files that hold one of its covering tests (scripts/mutation/).
  testEnvironment: join(__dirname, "scripts/mutation/recording-environment.cjs"),
  testSequencer: join(__dirname, "scripts/mutation/covering-files-sequencer.cjs"),
};

export default config;
