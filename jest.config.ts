import type { Config } from "jest";

const config: Config = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json", diagnostics: { warnOnly: false } }],
  },
  // Server and graph tests open real connections; a generous timeout keeps a slow shared machine from flaking.
  testTimeout: 120_000,
  // Two cores: more workers only contend.
  maxWorkers: 2,
};

export default config;
