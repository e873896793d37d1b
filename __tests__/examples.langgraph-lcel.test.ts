import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = join(__dirname, "..");

/** Runs an example the way the README says, offline: no OPENAI_API_KEY, so the scripted model answers. */
async function runExample(file: string): Promise<string> {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  const { stdout } = await run("npx", ["tsx", file], { cwd: root, env, timeout: 90_000 });
  return stdout;
}

describe("examples run offline", () => {
  it("examples/lcel.ts: the model is sent a compacted list, traced as compactMessages", async () => {
    const out = await runExample("examples/lcel.ts");
    const history = /history: (\d+) messages, (\d+) tokens/.exec(out);
    const piped = /pipe: the model was sent (\d+) messages, (\d+) tokens/.exec(out);
    const prompted = /prompt: the model was sent (\d+) messages, (\d+) tokens/.exec(out);
    expect(history).not.toBeNull();
    expect(piped).not.toBeNull();
    expect(prompted).not.toBeNull();
    expect(Number(piped![1])).toBeLessThan(Number(history![1]));
    expect(Number(piped![2])).toBeLessThan(Number(history![2]) / 2);
    expect(out).toMatch(/note: \[\d+ earlier messages were removed/);
    expect(out).toMatch(/trace: compactMessages -> ScriptedChatModel/);
    expect(out).toMatch(/note: \[\d+ older messages of this chat are not shown\.\]/);
    expect(out).toMatch(/unchanged input returns itself: true/);
  });

  it("examples/langgraph.ts: view keeps the history, commit compacts it, requests stay under the trigger", async () => {
    const out = await runExample("examples/langgraph.ts");
    const view = /view: the checkpointed state holds (\d+) messages/.exec(out);
    const commit = /commit: the checkpointed state holds (\d+) messages/.exec(out);
    expect(view).not.toBeNull();
    expect(commit).not.toBeNull();
    // Ten questions of four messages each.
    expect(Number(view![1])).toBe(40);
    expect(Number(commit![1])).toBeLessThan(40);
    expect(out).toMatch(/remembered cut: [1-9]\d* messages hidden/);
    expect(out).toMatch(/note in state: \[\d+ earlier messages were removed/);
    const largest = [...out.matchAll(/largest request (\d+) tokens \(trigger (\d+)\); the prefix moved (\d+) times/g)];
    expect(largest).toHaveLength(2);
    for (const [, size, trigger, moved] of largest) {
      expect(Number(size)).toBeLessThan(Number(trigger));
      expect(Number(moved)).toBeGreaterThan(0);
      expect(Number(moved)).toBeLessThan(5);
    }
  });
});
