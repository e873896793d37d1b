import { execFile } from "node:child_process";
import { join } from "node:path";
import { VERBOSE } from "./diagnostics";

const root = join(__dirname, "..", "..");

/** How a program run ended: its exit code and what it printed. */
export interface ExampleRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `examples/<file>` as the README says (`npx tsx`), offline: without
 * OPENAI_API_KEY the example's scripted model answers.
 */
export function runExample(file: string): Promise<ExampleRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  return new Promise((resolve) => {
    execFile("npx", ["tsx", join("examples", file)], { cwd: root, env, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
  });
}

/**
 * For a test file that imports examples to read what their `main` returns:
 * no OPENAI_API_KEY (the examples then use their scripted models, whose
 * records the tests read), and their printing silenced (it is for a reader;
 * `TEST_VERBOSE=1` lets it through).
 */
export function importExamplesOffline(): void {
  beforeAll(() => {
    delete process.env.OPENAI_API_KEY;
    if (!VERBOSE) jest.spyOn(console, "log").mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());
}

/** A test that runs each of `files` standalone, in parallel, and expects exit code 0, output, and nothing on stderr. */
export function testRunsStandalone(files: string[]): void {
  test(`${files.join(" and ")} run standalone with npx tsx and exit 0`, async () => {
    const runs = await Promise.all(files.map((file) => runExample(file)));
    for (const run of runs) {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).not.toBe("");
    }
  }, 120_000);
}
