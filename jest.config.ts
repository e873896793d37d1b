import type { Config } from "jest";

const config: Config = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  transform: {
    // tsconfig.json resolves modules as Node does (`nodenext`: subpath exports such as
    // `@langchain/langgraph/prebuilt` have types); ts-jest still type-checks with it and emits CommonJS, as the
    // package is `"type": "commonjs"`. Its notice 151002 (a hybrid module kind outside isolatedModules) is about
    // emitting ES-module files, which this project has none of, so it is silenced.
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json", diagnostics: { warnOnly: false, ignoreCodes: [151002] } }],
  },
  // About twice what the slowest test without its own timeout took in two measured runs on this 2-core machine
  // shared with three other jobs (20 s: the random-rules agreement; the PostgreSQL writers 16 s; most under 5 s):
  // a test that slows down several-fold fails here instead of passing quietly. The few that need longer say so themselves, with
  // their measured time: the property suites (90 s per test), the long-run counting property, the checkpointer
  // fault injection, the consumers' tsc and README programs (120 s each), and the consumers' install (600 s).
  testTimeout: 45_000,
  // Two cores: more workers only contend.
  maxWorkers: 2,
};

export default config;
