/**
 * The two helpers that make Stryker's mutant runs cheaper (scripts/mutation/, TESTING.md): they may only drop work
 * that cannot change a verdict. Checked here without Stryker: the sequencer keeps every file that holds a covering
 * test (and every file it knows nothing about), the environment records tests only in the dry run and skips tests
 * only after a failure in the same mutant run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { cache: boolean; rootDir: string }; hasteFS: { getSize(path: string): number } };
}

interface Helpers {
  Sequencer: new (options: { globalConfig: { testNamePattern?: string } }) => { sort(tests: FakeTest[]): FakeTest[] | Promise<FakeTest[]> };
  Environment: new (config: unknown, context: { testPath: string }) => { handleTestEvent(event: unknown): Promise<void> };
  mapFile: string;
}

const ACTIVE_MUTANT = "__STRYKER_ACTIVE_MUTANT__";
const WORKER = "STRYKER_MUTATOR_WORKER";
let dir: string;
let previousCwd: string;
let helpers: Helpers;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mutation-helpers-"));
  previousCwd = process.cwd();
  process.env[WORKER] = "1"; // as in Stryker's worker processes
  // The map file lives in the directory jest runs in (Stryker's sandbox), read when the module loads.
  process.chdir(dir);
  jest.isolateModules(() => {
    const shared = require("../../scripts/mutation/covering-files.cjs") as { MAP_FILE: string };
    helpers = {
      Sequencer: require("../../scripts/mutation/covering-files-sequencer.cjs") as Helpers["Sequencer"],
      Environment: require("../../scripts/mutation/recording-environment.cjs") as Helpers["Environment"],
      mapFile: shared.MAP_FILE,
    };
  });
});

afterEach(() => {
  process.chdir(previousCwd);
  delete process.env[ACTIVE_MUTANT];
  delete process.env[WORKER];
  rmSync(dir, { recursive: true, force: true });
});

function testFile(name: string): FakeTest {
  const path = join(dir, `${name}.test.ts`);
  writeFileSync(path, "// a test file\n");
  return { path, context: { config: { cache: false, rootDir: dir }, hasteFS: { getSize: () => 16 } } };
}

/** A jest-circus test entry named `name` inside describe blocks `blocks`, with the root block jest adds. */
function circusTest(blocks: string[], name: string, errors: unknown[] = []): { name: string; mode?: string; errors: unknown[]; parent: unknown } {
  let parent: { name: string; parent?: unknown } = { name: "ROOT_DESCRIBE_BLOCK" };
  for (const block of blocks) parent = { name: block, parent };
  return { name, errors, parent };
}

function environment(testPath: string) {
  const { Environment } = helpers;
  return new Environment({ globalConfig: {}, projectConfig: { testEnvironmentOptions: {} } }, { testPath });
}

test("in the dry run every test is recorded with its file and full name, and the sequencer starts the map afresh", async () => {
  writeFileSync(helpers.mapFile, "stale\tentry\n");
  const a = testFile("a");
  const sorted = await new helpers.Sequencer({ globalConfig: {} }).sort([a]);
  expect(sorted.map((t) => t.path)).toEqual([a.path]);
  expect(() => readFileSync(helpers.mapFile, "utf8")).toThrow(/ENOENT/);

  await environment(a.path).handleTestEvent({ name: "test_start", test: circusTest(["outer", "inner"], "does a thing") });
  await environment(a.path).handleTestEvent({ name: "test_done", test: circusTest([], "ignored") });
  expect(readFileSync(helpers.mapFile, "utf8")).toBe(`${a.path}\touter inner does a thing\n`);
});

test("a mutant run keeps the files holding a covering test, and files the dry run never saw; it drops the rest", async () => {
  const covering = testFile("covering");
  const other = testFile("other");
  const unseen = testFile("unseen");
  writeFileSync(helpers.mapFile, `${covering.path}\trules keeps the task\n${other.path}\trules drops a note\n`);
  process.env[ACTIVE_MUTANT] = "7";
  // Stryker's pattern: escaped full names, alternated; jest matches it case-insensitively.
  const sequencer = new helpers.Sequencer({ globalConfig: { testNamePattern: "(rules keeps the TASK)" } });
  const sorted = await sequencer.sort([covering, other, unseen]);
  expect(sorted.map((t) => t.path).sort()).toEqual([covering.path, unseen.path].sort());
});

test("after a failure in a mutant run the remaining tests are skipped, and the next run starts clean", async () => {
  const a = testFile("a");
  writeFileSync(helpers.mapFile, `${a.path}\tfirst\n`);
  process.env[ACTIVE_MUTANT] = "3";
  const sequencer = new helpers.Sequencer({ globalConfig: { testNamePattern: "(first)" } });
  await sequencer.sort([a]);
  const env = environment(a.path);

  const passing = circusTest([], "first");
  await env.handleTestEvent({ name: "test_start", test: passing });
  await env.handleTestEvent({ name: "test_done", test: passing });
  const next = circusTest([], "second");
  await env.handleTestEvent({ name: "test_start", test: next });
  expect(next.mode).toBeUndefined(); // nothing failed yet: it runs

  await env.handleTestEvent({ name: "test_done", test: circusTest([], "second", [new Error("killed")]) });
  const after = circusTest([], "third");
  await env.handleTestEvent({ name: "test_start", test: after });
  expect(after.mode).toBe("skip");
  // Nothing is recorded in a mutant run.
  expect(readFileSync(helpers.mapFile, "utf8")).toBe(`${a.path}\tfirst\n`);

  // The next mutant's run: the sequencer resets the failure, so its first test runs.
  await sequencer.sort([a]);
  const fresh = circusTest([], "first");
  await env.handleTestEvent({ name: "test_start", test: fresh });
  expect(fresh.mode).toBeUndefined();
});

test("outside Stryker (jest run by hand with the mutation config) nothing is recorded and no file is dropped", async () => {
  delete process.env[WORKER];
  const a = testFile("a");
  const b = testFile("b");
  writeFileSync(helpers.mapFile, `${a.path}\tfirst\n`);
  const sorted = await new helpers.Sequencer({ globalConfig: { testNamePattern: "(first)" } }).sort([a, b]);
  expect(sorted.map((t) => t.path).sort()).toEqual([a.path, b.path].sort());
  await environment(a.path).handleTestEvent({ name: "test_start", test: circusTest([], "second") });
  expect(readFileSync(helpers.mapFile, "utf8")).toBe(`${a.path}\tfirst\n`);
});
