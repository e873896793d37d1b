"use strict";
// The node test environment, plus: during Stryker's dry run, each test's file and full name go to the map file;
// during a mutant's run, every test after the first failure is skipped (see covering-files.cjs).
const { TestEnvironment } = require("jest-environment-node");
const { appendFileSync } = require("node:fs");
const { MAP_FILE, ACTIVE_MUTANT, currentRun, underStryker, fullName } = require("./covering-files.cjs");

class RecordingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async handleTestEvent(event) {
    if (process.env[ACTIVE_MUTANT] !== undefined) {
      if (event.name === "test_done" && event.test.errors.length > 0) currentRun.failed = true;
      // jest-circus decides whether a test is skipped right after this event.
      else if (event.name === "test_start" && currentRun.failed) event.test.mode = "skip";
      return;
    }
    if (event.name !== "test_start" || !underStryker()) return;
    // Names with a line break would split the map's lines: such a test's file is always kept (see the sequencer).
    const name = fullName(event.test);
    if (!name.includes("\n")) appendFileSync(MAP_FILE, `${this.testPath}\t${name}\n`);
    else appendFileSync(MAP_FILE, `${this.testPath}\t\n`);
  }
}

module.exports = RecordingEnvironment;
