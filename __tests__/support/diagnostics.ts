/**
 * What the suite prints. `npm test` is quiet: a line appears only where a
 * reader needs it (the seeds a property ran on, a server skipped). A test's
 * diagnostics (how many cases reached a rule, faults injected, timings) are
 * printed only with `TEST_VERBOSE=1`.
 *
 * Both go straight to stderr as one line, named by the test file, rather than
 * through `console.log`, which jest prints as a block of four lines with a
 * stack location.
 */
import * as path from "node:path";

/** Whether diagnostics are printed: `TEST_VERBOSE` set to anything but `""` or `0`. */
export const VERBOSE = (process.env.TEST_VERBOSE ?? "") !== "" && process.env.TEST_VERBOSE !== "0";

/** The running test file, relative to the project (`""` outside a test file). */
function testFile(): string {
  const testPath = (expect.getState() as { testPath?: string }).testPath;
  return testPath === undefined ? "" : path.relative(process.cwd(), testPath);
}

/** Prints `text` as one line, named by the running test file: for what every run must show. */
export function notice(text: string): void {
  const file = testFile();
  process.stderr.write(`${file === "" ? "" : `${file}: `}${text.replace(/\s*\n\s*/g, " ")}\n`);
}

/** Prints `text` as {@link notice} does, only with `TEST_VERBOSE=1`. */
export function diagnostic(text: string): void {
  if (VERBOSE) notice(text);
}
