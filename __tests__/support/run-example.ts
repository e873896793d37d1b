import { execFile } from "node:child_process";
import { join } from "node:path";

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
