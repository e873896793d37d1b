/**
 * The package as users get it: built, packed with `npm pack`, checked by
 * arethetypeswrong and publint, and installed from the tarball into fresh
 * consumer projects beside the same peer versions this repository's lockfile
 * holds (one shared `node_modules` at a temporary consumer root, four
 * sub-projects: ES-module JavaScript, CommonJS JavaScript, TypeScript
 * `nodenext`, TypeScript `bundler`). The scenarios in `fixtures/` run there
 * with plain `node` (or `tsx` for TypeScript), each asserting what it shows,
 * and the TypeScript projects type-check every entry point with `tsc`.
 *
 * Offline-friendly: `npm install --prefer-offline` takes what the local npm
 * cache holds. Timings are printed. The temporary directories are removed.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { REDIS_URL, requireServer } from "../support/servers";
import { diagnostic, notice } from "../support/diagnostics";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");
const fixtures = join(__dirname, "fixtures");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** The version of `name` installed here, i.e. the one the root lockfile pins. */
function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
}

/** What the consumer root installs beside the tarball: the peers, the Redis store and the TypeScript tools. */
const CONSUMER_DEPENDENCIES = [
  "@langchain/core",
  "@langchain/langgraph",
  "langchain",
  "zod",
  "@langchain/redis",
  "redis",
  "typescript",
  "@types/node",
  "tsx",
];

const timings: [string, number][] = [];
async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    timings.push([label, Date.now() - started]);
  }
}

interface Output {
  stdout: string;
  stderr: string;
}
/** Runs a command; on failure the error carries its whole output, so jest shows why. */
async function sh(file: string, args: string[], cwd: string, timeout = 300_000): Promise<Output> {
  try {
    return await run(file, args, { cwd, timeout, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: "" } });
  } catch (error) {
    const { stdout = "", stderr = "", message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  }
}

/** The user's documents: the README and the pages under docs/ it links to (shipped with the package). */
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
/**
 * Every ```ts block of those documents, in order, named after its document: each must be a complete
 * program. (A fragment that is not meant to run is fenced as ```typescript.)
 */
const readmeBlocks = documents.flatMap((document) =>
  [...readFileSync(join(root, document), "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match, index) => ({
    file: `${document.replace(/\.md$/, "").replace(/\//g, "-").toLowerCase()}-${index + 1}.ts`,
    block: match[1]!,
  })),
);

let work: string;
let consumer: string;
let tarball: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "lcc-consumers-"));
  consumer = join(work, "consumer");
  await timed("build (tsdown)", () => sh(bin("tsdown"), [], root));
  await timed("npm pack", async () => {
    const { stdout } = await sh("npm", ["pack", "--pack-destination", work, "--json"], root);
    tarball = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  });

  mkdirSync(consumer);
  const dependencies: Record<string, string> = { "langchain-compaction": `file:${tarball}` };
  for (const name of CONSUMER_DEPENDENCIES) dependencies[name] = installedVersion(name);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, dependencies }, null, 2));
  const project = (name: string, type: "module" | "commonjs", tsconfig?: object) => {
    const dir = join(consumer, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type }));
    if (tsconfig) writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
    return dir;
  };
  const strict = { target: "ES2022", lib: ["ES2022"], types: ["node"], strict: true, noEmit: true, skipLibCheck: true };
  project("esm", "module");
  project("cjs", "commonjs");
  project("ts-nodenext", "module", { compilerOptions: { ...strict, module: "nodenext", moduleResolution: "nodenext" }, include: ["*.ts"] });
  project("ts-bundler", "module", { compilerOptions: { ...strict, module: "esnext", moduleResolution: "bundler" }, include: ["*.ts"] });
  for (const dir of ["esm", "cjs"]) cpSync(join(fixtures, dir), join(consumer, dir), { recursive: true });
  for (const dir of ["ts-nodenext", "ts-bundler"]) {
    cpSync(join(fixtures, "ts"), join(consumer, dir), { recursive: true });
    for (const { file, block } of readmeBlocks) writeFileSync(join(consumer, dir, file), block);
  }

  await timed("npm install (consumer root)", () =>
    sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], consumer, 540_000),
  );
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  diagnostic(`consumer timings:\n${timings.map(([label, ms]) => `  ${label}: ${(ms / 1000).toFixed(1)} s`).join("\n")}`);
});

describe("the packed tarball", () => {
  it("ships the builds, the types and the license, and no sources or tests", () => {
    const installed = join(consumer, "node_modules", "langchain-compaction");
    const files = readdirSync(join(installed, "dist"));
    for (const entry of ["index", "langgraph", "middleware"]) {
      for (const ext of [".mjs", ".cjs", ".d.mts", ".d.cts"]) expect(files).toContain(`${entry}${ext}`);
    }
    expect(existsSync(join(installed, "LICENSE"))).toBe(true);
    // Only the builds and the user's documents (npm adds README and LICENSE itself; docs/*.md and the changelog are in
    // `files`): no sources, tests or benchmark material.
    const shipped = new Set(["dist", "docs", "package.json", "README.md", "LICENSE", "CHANGELOG.md"]);
    expect(readdirSync(installed).filter((name) => !shipped.has(name))).toEqual([]);
    expect(readdirSync(join(installed, "docs")).filter((name) => !name.endsWith(".md"))).toEqual([]);
    // No source map points at a file the tarball does not ship.
    expect(readdirSync(join(installed, "dist"), { recursive: true }).filter((f) => String(f).endsWith(".map"))).toEqual([]);
  });

  it("the documents' links work in the installed package: absolute URLs, or files it ships and headings they have", () => {
    const installed = join(consumer, "node_modules", "langchain-compaction");
    /** GitHub's heading anchors: lower case, punctuation but hyphens dropped, spaces as hyphens. */
    const anchorsOf = (file: string) =>
      new Set([...readFileSync(file, "utf8").matchAll(/^#+ (.+)$/gm)].map((match) => match[1]!.toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-")));
    const broken: string[] = [];
    let links = 0;
    for (const document of documents) {
      const path = join(installed, document);
      expect(existsSync(path)).toBe(true);
      for (const [, target] of readFileSync(path, "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
        links += 1;
        if (/^https?:\/\//.test(target!)) continue;
        const [file, anchor] = target!.split("#") as [string, string | undefined];
        const resolved = file === "" ? path : join(dirname(path), file);
        if (!existsSync(resolved)) broken.push(`${document}: ${target} (no such file in the package)`);
        else if (anchor !== undefined && !anchorsOf(resolved).has(anchor)) broken.push(`${document}: ${target} (no such heading)`);
      }
    }
    expect(links).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it("arethetypeswrong finds no problem in any resolution mode (node10, node16 from CJS and ESM, bundler)", async () => {
    const { stdout } = await timed("attw", () => sh(bin("attw"), [tarball, "--format", "json"], root));
    const result = JSON.parse(stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
    expect(Object.keys(result.analysis.entrypoints).sort()).toEqual([".", "./langgraph", "./middleware", "./package.json", "./testing"]);
    expect(result.analysis.problems).toEqual([]);
  });

  it("publint reports no error, warning or suggestion", async () => {
    const { stdout } = await timed("publint", () => sh(bin("publint"), ["--strict"], root));
    expect(stdout).toMatch(/All good!/);
  });
});

describe("an ES-module JavaScript app", () => {
  const node = (file: string) => timed(file, () => sh(process.execPath, [file], join(consumer, "esm")));

  it("CompactingChatMessageHistory over its own InMemoryChatMessageHistory, in RunnableWithMessageHistory", async () => {
    expect((await node("history-in-memory.mjs")).stdout).toMatch(/^ok: 10 rounds, [1-9]\d* compacted requests/m);
  });

  it("CompactingChatMessageHistory over RedisChatMessageHistory, commit mode with redisListRewrite", async () => {
    if (!(await requireServer("Redis", REDIS_URL))) return;
    expect((await node("history-redis.mjs")).stdout).toMatch(/^ok: the Redis session holds \d+ of 16 messages/m);
  });

  it("createAgent with compactionMiddleware", async () => {
    expect((await node("create-agent-middleware.mjs")).stdout).toMatch(/^ok: state 32 messages/m);
  });

  // Issue 9 §2 (view mode on createReactAgent's default state) is not fixed yet. Until it is, this asserts that
  // exact known failure; when the fix lands the scenario passes and this test fails, saying so: then set
  // PREBUILT_DEFAULT_STATE_WORKS to true, and from then on the scenario must pass.
  const PREBUILT_DEFAULT_STATE_WORKS = true;
  it("createReactAgent with preModelHook: createCompactionNode and no stateSchema", async () => {
    const outcome = node("prebuilt-agent-default-state.mjs");
    if (PREBUILT_DEFAULT_STATE_WORKS) {
      expect((await outcome).stdout).toMatch(/^ok: state 32 messages/m);
    } else {
      notice("[known failure] createReactAgent without stateSchema; see consumers.test.ts");
      await expect(outcome).rejects.toThrow(/"view" mode remembers its cut in the state key `compactionView`, which this graph's state lacks/);
    }
  });
});

describe("a CommonJS JavaScript app", () => {
  it("CompactingChatMessageHistory over its own InMemoryChatMessageHistory, commit mode", async () => {
    const { stdout } = await timed("history-in-memory.cjs", () => sh(process.execPath, ["history-in-memory.cjs"], join(consumer, "cjs")));
    expect(stdout).toMatch(/^ok: the store holds \d+ of 16 messages/m);
  });
});

describe("an app without the optional peer @langchain/langgraph", () => {
  // A separate tree, outside the consumer root: a copy of the installed package beside links to the two
  // packages its main entry needs, so `@langchain/langgraph` resolves nowhere from the package's files.
  let app: string;
  beforeAll(() => {
    app = join(work, "no-langgraph");
    const modules = join(app, "node_modules");
    mkdirSync(join(modules, "@langchain"), { recursive: true });
    cpSync(join(consumer, "node_modules", "langchain-compaction"), join(modules, "langchain-compaction"), { recursive: true });
    symlinkSync(join(consumer, "node_modules", "@langchain", "core"), join(modules, "@langchain", "core"), "dir");
    symlinkSync(join(consumer, "node_modules", "js-tiktoken"), join(modules, "js-tiktoken"), "dir");
    cpSync(join(fixtures, "no-langgraph"), app, { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "no-langgraph", private: true }));
  });

  it.each(["optional-peer-missing.mjs", "optional-peer-missing.cjs"])("%s: the subpath's failure is catchable", async (file) => {
    const { stdout } = await timed(file, () => sh(process.execPath, [file], app));
    expect(stdout).toMatch(/^ok: caught (ERR_)?MODULE_NOT_FOUND/m);
  });
});

describe("every ```ts block of README.md and docs/*.md runs as it stands, in a TypeScript ES-module project", () => {
  it("the README has its code blocks", () => {
    expect(readmeBlocks.filter(({ file }) => file.startsWith("readme-")).length).toBeGreaterThanOrEqual(5);
  });

  it.each(readmeBlocks.map(({ file, block }) => [file, block] as const))("%s", async (file, block) => {
    if (block.includes("@langchain/redis") && !(await requireServer("Redis", REDIS_URL))) return;
    const cwd = join(consumer, "ts-nodenext");
    await timed(`tsx ${file}`, () => sh(join(consumer, "node_modules", ".bin", "tsx"), [file], cwd, 120_000));
  }, 120_000);
});

describe("TypeScript apps type-check every entry point and every documented block (strict)", () => {
  it.each(["ts-nodenext", "ts-bundler"])("%s: tsc --noEmit", async (dir) => {
    const cwd = join(consumer, dir);
    await timed(`tsc ${dir}`, () => sh(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], cwd));
    // tsc over every entry point and README block: 22-30 s measured here on a loaded machine, up to 90 s reported.
  }, 120_000);
});
