// Which test file holds which test, for Stryker runs (see jest.mutation.config.ts and TESTING.md).
//
// Stryker's jest runner picks a mutant's covering tests by name (`testNamePattern`), so jest still loads every test
// file of the set for every mutant, even the files none of those tests are in; loading a suite (its imports of
// @langchain/core and LangGraph) costs more than most of its tests. The environment below writes down, during
// Stryker's dry run, the file of every test that ran; the sequencer then drops, for each mutant run, the files
// that hold no test the pattern names. And, as Stryker's other runners bail, a mutant run stops running tests at
// its first failure (the rest are skipped): one failing test is all a kill needs. So a mutant's verdict is the one
// jest would give with every covering test run, for less. (So Stryker's `disableBail` option, which asks for every
// covering test's result, is not honoured with this configuration; this project does not use it.)
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

/** Written in the sandbox Stryker runs jest in, fresh for every Stryker run. */
const MAP_FILE = join(process.cwd(), ".stryker-covering-files.tsv");
const ACTIVE_MUTANT = "__STRYKER_ACTIVE_MUTANT__";

/** Set by Stryker in its worker processes: outside Stryker (jest run by hand with this config) nothing is recorded. */
function underStryker() {
  return process.env.STRYKER_MUTATOR_WORKER !== undefined;
}

/** True while Stryker's dry run (every test, no mutant active) is running. */
function inDryRun(globalConfig) {
  return underStryker() && process.env[ACTIVE_MUTANT] === undefined && !globalConfig.testNamePattern;
}

function fullName(test) {
  const names = [test.name];
  for (let block = test.parent; block && block.parent; block = block.parent) names.unshift(block.name);
  return names.join(" ");
}

let map = null;
function readMap() {
  if (map !== null) return map;
  try {
    const files = new Map();
    for (const line of readFileSync(MAP_FILE, "utf8").split("\n")) {
      const tab = line.indexOf("\t");
      if (tab < 0) continue;
      const path = line.slice(0, tab);
      const names = files.get(path) ?? [];
      names.push(line.slice(tab + 1));
      files.set(path, names);
    }
    map = files;
  } catch {
    map = new Map();
  }
  return map;
}

/** The current jest run (one mutant's): has a test failed yet. Reset by the sequencer when a run starts. */
const currentRun = { failed: false };

module.exports = { MAP_FILE, ACTIVE_MUTANT, currentRun, underStryker, inDryRun, fullName, readMap };
