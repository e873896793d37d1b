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
  // Server and graph tests open real connections; a generous timeout keeps a slow shared machine from flaking.
  testTimeout: 120_000,
  // Two cores: more workers only contend.
  maxWorkers: 2,
};

export default config;
