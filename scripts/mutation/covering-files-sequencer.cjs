"use strict";
// jest's default order, minus the test files that hold no test the run's `testNamePattern` names.
const Sequencer = require("@jest/test-sequencer").default;
const { rmSync } = require("node:fs");
const { MAP_FILE, currentRun, underStryker, inDryRun, readMap } = require("./covering-files.cjs");

class CoveringFilesSequencer extends Sequencer {
  constructor(options) {
    super(options);
    this.globalConfig = options.globalConfig;
  }

  sort(tests) {
    currentRun.failed = false;
    if (inDryRun(this.globalConfig)) {
      rmSync(MAP_FILE, { force: true });
      return super.sort(tests);
    }
    if (!underStryker()) return super.sort(tests);
    const pattern = this.globalConfig.testNamePattern;
    const files = readMap();
    if (!pattern || files.size === 0) return super.sort(tests);
    const named = new RegExp(pattern, "i");
    // A file the dry run did not record (or recorded an unnamed test for) is kept: never skip a test by mistake.
    return super.sort(tests.filter((test) => {
      const names = files.get(test.path);
      return names === undefined || names.some((name) => name === "" || named.test(name));
    }));
  }
}

module.exports = CoveringFilesSequencer;
