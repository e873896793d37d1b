/**
 * Runs examples/middleware.ts and examples/history.ts offline, as a user
 * would (npx tsx), and checks what they report.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = join(__dirname, "..");

async function example(file: string): Promise<string> {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  const { stdout } = await run("npx", ["tsx", join("examples", file)], { cwd: root, env, timeout: 120_000 });
  return stdout;
}

test("examples/middleware.ts: view mode keeps the state whole, commit mode compacts it, requests stay under the trigger", async () => {
  const out = await example("middleware.ts");
  const view = /view mode: 12 questions\n\s+state holds (\d+) messages[^\n]*\n\s+model calls: (\d+), largest request (\d+) tokens \(trigger (\d+)\), (\d+) requests carried a note/.exec(out);
  const commit = /commit mode: 12 questions\n\s+state holds (\d+) messages[^\n]*, with a note\n\s+model calls: (\d+), largest request (\d+) tokens \(trigger (\d+)\)/.exec(out);
  expect(view).not.toBeNull();
  expect(commit).not.toBeNull();
  expect(Number(view![1])).toBe(48);
  expect(Number(view![2])).toBe(24);
  expect(Number(view![3])).toBeLessThan(Number(view![4]));
  expect(Number(view![5])).toBeGreaterThan(0);
  expect(Number(commit![1])).toBeLessThan(48);
  expect(Number(commit![3])).toBeLessThan(Number(commit![4]));
});

test("examples/history.ts: the store is compacted, the archive gets the rest, nothing is lost", async () => {
  const out = await example("history.ts");
  const stored = /store holds (\d+) messages \(\d+ tokens\), archive received (\d+)/.exec(out);
  expect(stored).not.toBeNull();
  expect(Number(stored![1])).toBeLessThan(28);
  expect(Number(stored![2])).toBeGreaterThan(0);
  expect(out).toMatch(/note: "\[\d+ earlier messages were removed[^"]*" removed_messages=\d+/);
  expect(out).toContain("nothing lost: true");
});
