/**
 * The coding agent: over several user requests it greps, reads source
 * files of 4-40 KB, runs test suites whose logs (10-60 KB) hold a few
 * failure lines with error codes, and fixes each failure by writing the
 * whole file back (`write_file`, whose tool-call input is the entire file).
 *
 * Before writing a file the model needs that file's current content in
 * view (its content-hash line, from a `read_file` result or from its own
 * earlier `write_file`), and the failure line it fixes; it reads the file or
 * reruns the suite when either is gone. Between requests the user asks what
 * an earlier failure's error code was, or for the ticket and branch they
 * named at the start.
 */
import { z } from "zod/v4";
import { factPlanter } from "../facts";
import {
  contentHashLine,
  editedBody,
  fileText,
  grepOutput,
  int,
  logUniform,
  newContentHash,
  pick,
  prose,
  randomFor,
  seededRandom,
  sentence,
  sourceBody,
  testLog,
} from "../text";
import type { LoggedFailure } from "../text";
import type { InfoView, PlanStep, ToolCallSpec, UserTurn, Workload, WorkloadOptions, World } from "../workload";

const MODULES = ["billing", "checkout", "ledger", "search", "shipping", "auth", "catalog", "notify"];
const NAMES = ["cache", "retry", "budget", "session", "invoice", "refund", "route", "policy", "quota", "cursor", "schema", "queue"];
const SUITES = ["unit", "integration", "api"];

interface Failure extends LoggedFailure {
  suite: string;
  /** The user turn from which it shows in test runs (until fixed). */
  from: number;
}

interface FileVersion {
  body: string;
  hash: string;
}

const SYSTEM_PROMPT = [
  "You are a coding agent working in a TypeScript monorepo. Use the tools to inspect and change the code:",
  "grep to find symbols, read_file to read a whole file, write_file to replace a whole file with new content, run_tests to run a test project.",
  "Always read a file before you change it, and write the complete file: write_file replaces the file with exactly the content you give.",
  "When tests fail, fix the cause in the source file the failure points to, then run the project again to confirm.",
  "Keep your messages short; report what you changed and why at the end of each request.",
  prose(seededRandom(7), 1_200),
].join("\n");

/** The coding workload of `seed`: 6 requests (2 with `quick`), each followed by a question. */
export function codingWorkload(seed: number, options: WorkloadOptions = {}): Workload {
  const requests = options.quick ? 2 : 6;
  const random = seededRandom(seed * 7919 + 11);
  const { facts, fact } = factPlanter(random);

  // The repository: 12 files of 4 to 40 KB.
  const paths: string[] = [];
  while (paths.length < 12) {
    const path = `src/${pick(random, MODULES)}/${pick(random, NAMES)}-${pick(random, NAMES)}.ts`;
    if (!paths.includes(path)) paths.push(path);
  }
  const initial = new Map<string, FileVersion>(paths.map((path) => [path, { body: sourceBody(random, path, logUniform(random, 4_000, 40_000)), hash: newContentHash(random) }]));
  // What the plan expects each file to be when it gets there, and which write fixes which failure.
  const planned = new Map(initial);
  const fixes = new Map<string, string>(); // `${path}@${hash}` -> failure code
  const failures: Failure[] = [];

  const ticket = fact("TK", "user", "ticket");
  const branch = fact("BR", "user", "branch");
  const turns: UserTurn[] = [];
  let lastWritten: string[] = [];

  for (let r = 0; r < requests; r += 1) {
    const suite = pick(random, SUITES);
    const symbol = `${pick(random, ["load", "apply", "merge", "resolve", "compute"])}${pick(random, ["Cache", "Budget", "Route", "Quota", "Ledger"])}`;
    // The two files to fix: one of them, from the second request on, is often a file fixed in the request before.
    const a = r > 0 && random() < 0.6 && lastWritten.length > 0 ? pick(random, lastWritten) : pick(random, paths);
    let b = pick(random, paths);
    while (b === a) b = pick(random, paths);
    let d = pick(random, paths);
    while (d === a || d === b) d = pick(random, paths);
    const turnIndex = turns.length;
    const mine: Failure[] = [a, b].map((sourceFile) => ({
      code: fact("EC", "tool", "error code"),
      test: `${sentence(random, int(random, 3, 6)).slice(0, -1).toLowerCase()}`,
      testFile: `tests/${suite}/${sourceFile.split("/").pop()!.replace(".ts", "")}.test.ts`,
      sourceFile,
      suite,
      from: turnIndex,
    }));
    failures.push(...mine);

    const read = (path: string): ToolCallSpec => ({ name: "read_file", args: { path }, provides: [`file:${path}`] });
    const run: ToolCallSpec = { name: "run_tests", args: { project: suite }, provides: mine.map((f) => `failure:${f.code}`) };
    const write = (path: string, failure: Failure): PlanStep => {
      const before = planned.get(path)!;
      const after = { body: editedBody(random, before.body, `fix for ${failure.code}`), hash: newContentHash(random) };
      planned.set(path, after);
      fixes.set(`${path}@${after.hash}`, failure.code);
      return {
        needs: [`file:${path}`, `failure:${failure.code}`],
        content: `The failure "${failure.test}" comes from ${path}; writing the fixed file.`,
        calls: [{ name: "write_file", args: { path, content: fileText(after.body, after.hash) }, provides: [`file:${path}`] }],
      };
    };
    // A file the agent itself wrote in the request before is not read again: its own write shows the content.
    const reads = [a, b, d].filter((path) => !lastWritten.includes(path));
    const steps: PlanStep[] = [
      { needs: [], content: `Looking for the uses of ${symbol}.`, calls: [{ name: "grep", args: { pattern: symbol } }] },
      ...(reads.length > 0 ? [{ needs: [], content: "Reading the files involved.", calls: reads.map(read) }] : []),
      { needs: [], content: `Running the ${suite} tests.`, calls: [run] },
      write(a, mine[0]!),
      write(b, mine[1]!),
      { needs: [], content: `Running the ${suite} tests again to confirm.`, calls: [{ name: "run_tests", args: { project: suite } }] },
      { needs: [], content: `Fixed both failures in ${a} and ${b}. ${prose(random, int(random, 300, 800))}`, calls: [] },
    ];
    const user = [
      `Request ${r + 1}: the ${suite} tests started failing after the ${symbol} change. Please find the cause and fix it. ${sentence(random, int(random, 8, 18))}`,
      ...(r === 0 ? [`This is for ticket ${ticket}; we are on branch ${branch}.`] : []),
    ].join("\n");
    turns.push({ user, steps });
    lastWritten = [a, b];

    // A question after each request: an earlier failure's error code, or what the user said at the start.
    const earlier = failures.filter((f) => f.from <= turnIndex);
    const kind = r % 3;
    const asked =
      kind === 0
        ? { fact: mine[1]!.code, text: `Before the next request: what error code did the "${mine[1]!.test}" failure show?`, source: "tool" as const }
        : kind === 1
          ? r % 2 === 1
            ? { fact: ticket, text: "Remind me, which ticket did I say this work is for?", source: "user" as const }
            : { fact: branch, text: "Which branch did I say we are on?", source: "user" as const }
          : (() => {
              const old = earlier[Math.max(0, earlier.length - 6)]!;
              return { fact: old.code, text: `For the changelog: what error code did the "${old.test}" failure show, a few requests ago?`, source: "tool" as const };
            })();
    turns.push({
      user: asked.text,
      question: { fact: asked.fact, source: asked.source },
      steps: [{ needs: [], content: "", calls: [] }],
    });
  }

  return {
    key: "coding",
    title: "Coding agent",
    seed,
    contextWindow: 64_000,
    systemPrompt: SYSTEM_PROMPT,
    tools: [
      { name: "grep", description: "Search the repository for a pattern; prints matching lines with file and line number.", schema: z.object({ pattern: z.string().describe("The text or regular expression to look for") }) },
      { name: "read_file", description: "Read a whole file of the repository.", schema: z.object({ path: z.string().describe("Repository-relative path") }) },
      {
        name: "write_file",
        description: "Replace a file with the given content (the whole file).",
        schema: z.object({ path: z.string().describe("Repository-relative path"), content: z.string().describe("The complete new content of the file") }),
      },
      { name: "run_tests", description: "Run one test project and print the runner's output.", schema: z.object({ project: z.string().describe("unit, integration or api") }) },
    ],
    turns,
    facts,
    createWorld: () => codingWorld(seed, paths, initial, failures, fixes),
  };
}

function codingWorld(seed: number, paths: readonly string[], initial: ReadonlyMap<string, FileVersion>, failures: readonly Failure[], fixes: ReadonlyMap<string, string>): World {
  const files = new Map<string, string>([...initial].map(([path, version]) => [path, fileText(version.body, version.hash)]));
  const hashes = new Map<string, string>([...initial].map(([path, version]) => [path, version.hash]));
  const fixed = new Set<string>();
  let turn = -1;
  const open = (suite: string) => failures.filter((f) => f.suite === suite && f.from <= turn && !fixed.has(f.code));
  return {
    beginTurn(index) {
      turn = index;
    },
    run(name, args) {
      switch (name) {
        case "grep": {
          const pattern = String(args.pattern);
          const random = randomFor(seed, "grep", pattern);
          return grepOutput(random, pattern, paths, logUniform(random, 800, 3_000));
        }
        case "read_file": {
          const text = files.get(String(args.path));
          return text ?? `error: no such file ${String(args.path)}`;
        }
        case "write_file": {
          const path = String(args.path);
          const content = String(args.content);
          files.set(path, content);
          const hash = /content-hash: ([0-9a-f]{16})\s*$/.exec(content)?.[1] ?? "";
          hashes.set(path, hash);
          const code = fixes.get(`${path}@${hash}`);
          if (code !== undefined) fixed.add(code);
          return `Wrote ${content.length} bytes to ${path}.`;
        }
        case "run_tests": {
          const suite = String(args.project);
          const failing = open(suite);
          // The same project in the same state prints the same log.
          const random = randomFor(seed, "tests", suite, ...failing.map((f) => f.code));
          return testLog(random, suite, logUniform(random, 10_000, 60_000), failing);
        }
        default:
          return `error: unknown tool ${name}`;
      }
    },
    info(key): InfoView {
      if (key.startsWith("file:")) {
        const path = key.slice(5);
        return { marker: contentHashLine(hashes.get(path) ?? ""), refetch: { kind: "tool", call: { name: "read_file", args: { path }, provides: [key] } } };
      }
      if (key.startsWith("failure:")) {
        const code = key.slice(8);
        const failure = failures.find((f) => f.code === code)!;
        return { marker: code, refetch: { kind: "tool", call: { name: "run_tests", args: { project: failure.suite }, provides: [key] } } };
      }
      throw new RangeError(`coding workload: no information ${key}`);
    },
  };
}
