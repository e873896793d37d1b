/**
 * `npm run bench -- --devices`: each speed device of `src` against its plain
 * version, on the paths users take. A device stays only if a row here shows
 * it matters on one of them (ARCHITECTURE.md lists the devices kept and the
 * test that holds each to its plain rule).
 *
 * How: the plain version of a device is `src` with that device replaced by
 * the plain code (a few source edits, each checked to apply), copied to a
 * directory of its own and loaded beside an unedited copy in the same
 * process. Each path runs in a child process of its own (its memory is its
 * own); in it, every run times the device and then its plain version (the
 * order alternating), after a warm-up run of each, so a ratio is taken under
 * the same load. The ratio is plain / device: above 1, the device is faster.
 *
 * `tsx bench/devices.ts` runs it alone; `--quick` takes fewer runs.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { agentConversation, agentStep, conversationBuilder, randomString, seededRandom } from "./conversations";
import { median, runChild, timeOnce } from "./measure";

const ROOT = join(__dirname, "..");
const BUDGET = 20_000;

/** One source edit: `from` must occur exactly once in the file (`"*"`: the whole file is replaced). */
export interface Edit {
  file: string;
  from: string;
  to: string;
}

export interface Device {
  name: string;
  /** The files the device lives in, for the table. */
  where: string;
  /** What the plain version does instead. */
  plain: string;
  edits: Edit[];
  /** The plain version passes `cache: null` to the compactors instead of editing the source. */
  noCache?: boolean;
  /** Also measured on the path with this kind of long tool result (the paths with one measure only their device). */
  extra?: "run" | "payload";
}

/** The grouping rules run afresh on every call: `grouping.ts`'s `groupConversation`, with the same checks. */
const PLAIN_LAYOUT = `import type { BaseMessage } from "@langchain/core/messages";
import { assertMessagesFrom, describeValue } from "../errors";
import { groupConversation } from "./grouping";
import type { ConversationLayout } from "./grouping";
function checked(messages: unknown, name: string): BaseMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(\`\\\`\${name}\\\` must be an array of BaseMessage, got \${describeValue(messages)}\`);
  assertMessagesFrom(messages, 0, name);
  return messages as BaseMessage[];
}
export function layoutConversation(messages: readonly BaseMessage[]): ConversationLayout {
  return groupConversation(messages);
}
export function layoutCheckedConversation(messages: unknown, name = "messages"): ConversationLayout {
  return groupConversation(checked(messages, name));
}
export async function layoutCheckedConversationInSlices(messages: unknown, _signal?: AbortSignal, name = "messages"): Promise<ConversationLayout> {
  return groupConversation(checked(messages, name));
}
export function freshLayout(messages: readonly BaseMessage[]): ConversationLayout {
  return groupConversation(messages);
}
`;

export const DEVICES: Device[] = [
  {
    name: "none (control)",
    where: "–",
    plain: "the same code: the noise of a ratio",
    edits: [],
  },
  {
    name: "incremental layout",
    where: "messages/layout.ts, layout-engine.ts, prefix-memory.ts",
    plain: "`groupConversation` (grouping.ts) on every call",
    edits: [{ file: "messages/layout.ts", from: "*", to: PLAIN_LAYOUT }],
  },
  {
    name: "remembered layouts",
    where: "messages/prefix-memory.ts (in layout.ts)",
    plain: "a fresh engine on every call",
    edits: [{ file: "messages/layout.ts", from: "const recalled = memory.recall(messages);", to: "const recalled = { entry: undefined, common: 0 };" }],
  },
  {
    name: "engine kept alive",
    where: "messages/layout-engine.ts (keptShape)",
    plain: "no engine kept",
    edits: [{ file: "messages/layout-engine.ts", from: "static readonly keptShape: LayoutEngine = new LayoutEngine();", to: "" }],
  },
  {
    name: "checked lists remembered",
    where: "messages/conversation-check.ts (prefix-memory.ts)",
    plain: "every message checked on every call",
    edits: [
      { file: "messages/conversation-check.ts", from: "const { entry, common } = checkedLists.recall(messages);\n  assertMessagesFrom", to: "const { entry, common } = { entry: undefined, common: 0 };\n  assertMessagesFrom" },
      { file: "messages/conversation-check.ts", from: "const { entry, common } = checkedLists.recall(messages);\n  for", to: "const { entry, common } = { entry: undefined, common: 0 };\n  for" },
    ],
  },
  {
    name: "count cache",
    where: "counting/cache.ts",
    plain: "`cache: null` (every count made again)",
    edits: [],
    noCache: true,
  },
  {
    name: "pipeline shortcut",
    where: "compactors/rewrites-then-window.ts (pipeline.ts)",
    plain: "the stages one after the other",
    edits: [{ file: "compactors/pipeline.ts", from: `if (typeof first.rewritesInPlace !== "function" || typeof second.compactAfterRewrites !== "function") return undefined;`, to: "return undefined;" }],
  },
  {
    name: "calls counted in place",
    where: "counting/text.ts",
    plain: "every call built by `toolCallsIn` (`visitToolCallsByRule`)",
    edits: [{ file: "counting/text.ts", from: "if (!Array.isArray(calls) || calls.length === 0 || !onlyParsedCalls(message, calls)) return visitToolCallsByRule(message, visitor);", to: "return visitToolCallsByRule(message, visitor);" }],
  },
  {
    name: "trailing batch grown from ids",
    where: "compactors/tool-result-pruning.ts",
    plain: "the exchanges of the whole history (`trailingBatchByRule`)",
    edits: [{ file: "compactors/tool-result-pruning.ts", from: "const batch = trailingBatch(messages);", to: "const batch = trailingBatchByRule(messages);" }],
  },
  {
    name: "piece memory",
    where: "counting/exact-length.ts",
    plain: "js-tiktoken's `encode` of each text",
    edits: [{ file: "counting/exact-length.ts", from: "const length = (text: string): number => {\n", to: "const length = (text: string): number => {\n    return plainTokenLength(encoder, text);\n" }],
  },
  {
    name: "bounded encoding",
    where: "counting/bounded-encoding.ts",
    plain: "every run encoded whole",
    extra: "run",
    edits: [
      { file: "counting/tiktoken.ts", from: ": boundedTokenSteps(exact, text);", to: ": (function* () { return exact(text); })();" },
      { file: "counting/tiktoken.ts", from: ": boundedTokenLength(exact, text);", to: ": exact(text);" },
    ],
  },
  {
    name: "sampled long texts",
    where: "counting/sampled-length.ts",
    plain: "every text measured whole",
    extra: "payload",
    edits: [{ file: "counting/sampled-length.ts", from: "export const SAMPLED_TEXT = 65_536;", to: "export const SAMPLED_TEXT = Infinity;" }],
  },
];

// ---------------------------------------------------------------------------
// Loading a copy of src with a device replaced

/** What a path uses of one copy of the library. */
interface Library {
  /** Where the copy lives. */
  dir: string;
  lib: typeof import("../src");
  forgetLists: () => void;
  forgetPieces: () => void;
}

let variantsDir: string | null = null;

function applyEdits(source: string, edits: readonly Edit[], file: string): string {
  let text = source;
  for (const edit of edits) {
    if (edit.from === "*") {
      text = edit.to;
      continue;
    }
    const at = text.indexOf(edit.from);
    if (at < 0 || text.indexOf(edit.from, at + 1) >= 0) throw new Error(`device edit does not apply once in src/${file}: ${JSON.stringify(edit.from)}`);
    text = text.slice(0, at) + edit.to + text.slice(at + edit.from.length);
  }
  return text;
}

/** The files of src that `edits` change (relative to src), with their text after the edits; throws when an edit does not apply. */
export function editedSources(edits: readonly Edit[]): Map<string, string> {
  const byFile = new Map<string, Edit[]>();
  for (const edit of edits) byFile.set(edit.file, [...(byFile.get(edit.file) ?? []), edit]);
  const texts = new Map<string, string>();
  for (const [file, fileEdits] of byFile) texts.set(file, applyEdits(readFileSync(join(ROOT, "src", file), "utf8"), fileEdits, file));
  return texts;
}

/** A copy of src with `edits` applied, loaded (its own module instances, its own remembered state). */
export function loadVariant(name: string, edits: Edit[]): Library {
  if (variantsDir === null) {
    variantsDir = mkdtempSync(join(tmpdir(), "compaction-devices-"));
    // Packages resolve through the project's node_modules (the same instances as the bench's own).
    symlinkSync(join(ROOT, "node_modules"), join(variantsDir, "node_modules"), "dir");
    writeFileSync(join(variantsDir, "package.json"), JSON.stringify({ type: "commonjs" }));
    process.on("exit", () => rmSync(variantsDir!, { recursive: true, force: true }));
  }
  const dir = join(variantsDir, name.replace(/[^a-z0-9]+/gi, "-"));
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  for (const [file, text] of editedSources(edits)) writeFileSync(join(dir, "src", file), text);
  /* eslint-disable @typescript-eslint/no-require-imports */
  const lib = require(join(dir, "src", "index.ts")) as typeof import("../src");
  const lists = require(join(dir, "src", "messages", "prefix-memory.ts")) as typeof import("../src/messages/prefix-memory");
  const pieces = require(join(dir, "src", "counting", "exact-length.ts")) as typeof import("../src/counting/exact-length");
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { dir, lib, forgetLists: lists.forgetRememberedLists, forgetPieces: pieces.forgetRememberedPieces };
}

// ---------------------------------------------------------------------------
// The paths users take

export interface PathPlan {
  name: string;
  size: number;
  counter: "tiktoken" | "estimate";
  /**
   * `compact`: one `compact` of the agent pipeline (pruning, then the window), as the Runnable runs it;
   * `report`: the same with `compactWithReport`, as the hook runs it (every message counted);
   * `loop`: the default window's `compactWithReport` on the full history, as the middleware's view mode runs it,
   * after each of `steps` new steps (timed after one untimed call on the history).
   */
  kind: "compact" | "report" | "loop";
  steps?: number;
  /** A tool result added to the history: a long run of one character, or a long base64 payload. */
  extra?: "run" | "payload";
  runs: number;
}

export const PATHS: PathPlan[] = [
  { name: "compact 2,500, tiktoken", size: 2_500, counter: "tiktoken", kind: "compact", runs: 5 },
  { name: "compact 10,000, tiktoken", size: 10_000, counter: "tiktoken", kind: "compact", runs: 5 },
  { name: "compact 100,000, estimate", size: 100_000, counter: "estimate", kind: "compact", runs: 5 },
  { name: "agent loop 10,000 + 20 steps, tiktoken", size: 10_000, counter: "tiktoken", kind: "loop", steps: 20, runs: 3 },
  { name: "agent loop 100,000 + 20 steps, estimate", size: 100_000, counter: "estimate", kind: "loop", steps: 20, runs: 3 },
  { name: "report 2,500 with a 3,000-space result, tiktoken", size: 2_500, counter: "tiktoken", kind: "report", extra: "run", runs: 3 },
  { name: "report 2,500 with a 512 KB base64 result, tiktoken", size: 2_500, counter: "tiktoken", kind: "report", extra: "payload", runs: 3 },
];

/** The history of a path (the same for every copy of the library: messages are `@langchain/core`'s). */
function historyOf(plan: PathPlan): BaseMessage[] {
  const messages = agentConversation(plan.size, 1);
  if (plan.extra === undefined) return messages;
  const content =
    plan.extra === "run"
      ? `Build log:\n${" ".repeat(3_000)}\nDone.`
      : `{"file":"dump.bin","base64":"${randomString(seededRandom(7), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 512 * 1024)}"}`;
  // A result in an early turn, answering the call before it: counted by the reports (tokensBefore) and by pruning.
  const at = messages.findIndex((message, index) => index > 10 && ToolMessage.isInstance(message));
  const old = messages[at] as ToolMessage;
  messages[at] = new ToolMessage({ tool_call_id: old.tool_call_id, name: old.name, content });
  return messages;
}

/** One timed run of `plan` on one copy: everything remembered forgotten first (a new cache, no layouts, no pieces). */
async function runPath(plan: PathPlan, library: Library, noCache: boolean, history: BaseMessage[], steps: BaseMessage[][]): Promise<number> {
  const { lib } = library;
  const counter = plan.counter === "tiktoken" ? lib.tiktokenCounter("o200k_base") : lib.approximateTokenCounter;
  library.forgetLists();
  library.forgetPieces();
  const cache = noCache ? null : new lib.TokenCountCache();
  if (plan.kind !== "loop") {
    const pipeline = new lib.CompactionPipeline([new lib.ToolResultPruningCompactor({ cache }), new lib.SlidingWindowCompactor({ cache })], { cache });
    if (plan.kind === "compact") return timeOnce(() => pipeline.compact(history, BUDGET, counter));
    return timeOnce(() => pipeline.compactWithReport(history, BUDGET, counter));
  }
  // The default compactor of every integration, as view mode runs it: the full history each model call.
  const window = new lib.SlidingWindowCompactor({ cache });
  await window.compactWithReport(history, BUDGET, counter);
  return timeOnce(async () => {
    let list = history;
    for (const step of steps) {
      list = [...list, ...step];
      await window.compactWithReport(list, BUDGET, counter);
    }
  });
}

export interface DeviceRow {
  device: string;
  path: string;
  deviceMs: number;
  plainMs: number;
}

/** Warm-up runs of each copy before the timed ones: a copy's code is compiled afresh, and the first runs are slower. */
const WARM_RUNS = 1;

/** Forgets a copy's modules, so that its code and its remembered state can be collected. */
function release(library: Library): void {
  for (const key of Object.keys(require.cache)) if (key.startsWith(library.dir)) delete require.cache[key];
}

/** Measures every device on one path (in this process). */
async function measurePath(plan: PathPlan, quick: boolean, only: readonly string[] | null): Promise<DeviceRow[]> {
  const history = historyOf(plan);
  const builder = conversationBuilder(3);
  const steps = Array.from({ length: plan.steps ?? 0 }, () => agentStep(builder, 2));
  const runs = quick ? Math.min(plan.runs, 3) : plan.runs;
  const rows: DeviceRow[] = [];
  for (const device of DEVICES) {
    const control = device.edits.length === 0 && device.noCache !== true;
    if (plan.extra !== undefined && device.extra !== plan.extra && !control) continue;
    if (only !== null && !control && !only.includes(device.name)) continue;
    // Both sides are fresh copies, compiled and warmed alike: the only difference is the device.
    const withDevice = loadVariant(`${device.name} with`, []);
    const plain = loadVariant(`${device.name} plain`, device.edits);
    const timeDevice = () => runPath(plan, withDevice, false, history, steps);
    const timePlain = () => runPath(plan, plain, device.noCache === true, history, steps);
    const deviceRuns: number[] = [];
    const plainRuns: number[] = [];
    for (let run = 0; run < WARM_RUNS + runs; run += 1) {
      const [first, second] = run % 2 === 0 ? [timeDevice, timePlain] : [timePlain, timeDevice];
      const a = await first();
      const b = await second();
      if (run < WARM_RUNS) continue;
      deviceRuns.push(run % 2 === 0 ? a : b);
      plainRuns.push(run % 2 === 0 ? b : a);
    }
    release(withDevice);
    release(plain);
    const row = { device: device.name, path: plan.name, deviceMs: median(deviceRuns), plainMs: median(plainRuns) };
    process.stderr.write(`  ${plan.name} · ${device.name}: ${row.deviceMs.toFixed(1)} ms, plain ${row.plainMs.toFixed(1)} ms (${(row.plainMs / row.deviceMs).toFixed(2)}×)\n`);
    rows.push(row);
  }
  return rows;
}

/** `--only <name>,<name>`: measure only these devices (and the control). */
function onlyDevices(): string[] | null {
  const at = process.argv.indexOf("--only");
  return at < 0 ? null : process.argv[at + 1]!.split(",");
}

function measureInChild(index: number, quick: boolean): Promise<DeviceRow[]> {
  const only = onlyDevices();
  const args = ["--path", String(index), ...(quick ? ["--quick"] : []), ...(only === null ? [] : ["--only", only.join(",")])];
  return runChild<DeviceRow[]>(join(__dirname, "devices.ts"), args, { label: `devices path ${PATHS[index]!.name}` });
}

const ratio = (value: number) => `${value.toFixed(2)}×`;

/** The "Speed devices" table: one row per device, one column per path, each cell plain / device. */
export function devicesTable(rows: readonly DeviceRow[]): string {
  const paths = PATHS.map((plan) => plan.name).filter((name) => rows.some((row) => row.path === name));
  const lines = [
    `| device | where (src/) | plain version | ${paths.join(" | ")} | best |`,
    `|---|---|---|${paths.map(() => "---:").join("|")}|---:|`,
  ];
  for (const device of DEVICES) {
    const cells = paths.map((path) => rows.find((row) => row.device === device.name && row.path === path));
    if (cells.every((cell) => cell === undefined)) continue; // not measured in this run (`--only`)
    const ratios = cells.map((cell) => (cell === undefined ? Number.NaN : cell.plainMs / cell.deviceMs));
    const best = Math.max(...ratios.filter((value) => !Number.isNaN(value)));
    lines.push(`| ${device.name} | ${device.where} | ${device.plain} | ${ratios.map((value) => (Number.isNaN(value) ? "–" : ratio(value))).join(" | ")} | ${ratio(best)} |`);
  }
  return lines.join("\n");
}

/** Measures every device on every path, each path in a child process; returns the table. */
export async function runDevicesBench(quick = false): Promise<string> {
  const rows: DeviceRow[] = [];
  for (let index = 0; index < PATHS.length; index += 1) {
    process.stderr.write(`speed devices: ${PATHS[index]!.name}\n`);
    rows.push(...(await measureInChild(index, quick)));
  }
  return [
    "Speed devices: each device's path time with its plain version over with the device (above 1×: the device is faster); medians of interleaved runs in one process per path, each run from nothing remembered, after a warm-up run of each.",
    "",
    devicesTable(rows),
  ].join("\n");
}

async function main(): Promise<void> {
  const at = process.argv.indexOf("--path");
  const quick = process.argv.includes("--quick");
  if (at >= 0) {
    const rows = await measurePath(PATHS[Number(process.argv[at + 1])]!, quick, onlyDevices());
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  process.stdout.write(`${await runDevicesBench(quick)}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}

