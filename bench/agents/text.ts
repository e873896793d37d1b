/**
 * Text of the workloads' tool results and messages: source files, test
 * logs, grep output, search results, web pages, order records. All of it is
 * generated from a seed, and a tool's output from its arguments (through
 * {@link randomFor}), so calling a tool again with the same arguments in the
 * same world returns the same text.
 */
import { int, pick, prose, randomString, seededRandom, sentence } from "../conversations";
import type { Random } from "../conversations";

export type { Random };
export { int, pick, prose, randomString, seededRandom, sentence };

/** FNV-1a over the parts: a seed for {@link seededRandom} that depends only on the text. */
export function hashOf(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    const text = `${String(part)}\u0000`;
    for (let i = 0; i < text.length; i += 1) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
  }
  return hash;
}

/** A generator seeded by the parts (a tool's name and arguments, the run's seed). */
export function randomFor(...parts: readonly (string | number)[]): Random {
  return seededRandom(hashOf(...parts));
}

/** The items in an order drawn from `random` (Fisher-Yates). */
export function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A size between `min` and `max` bytes, spread evenly on a log scale (many small, some large). */
export function logUniform(random: Random, min: number, max: number): number {
  return Math.round(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
}

const HEX = "0123456789abcdef";
const NOUNS = [
  "cache", "retry", "budget", "region", "session", "token", "ledger", "invoice", "payment", "refund", "shipment", "queue",
  "worker", "window", "cursor", "schema", "record", "buffer", "route", "policy", "quota", "metric", "index", "snapshot",
];
const VERBS = ["load", "parse", "apply", "merge", "flush", "resolve", "build", "check", "update", "compute", "encode", "fetch", "split", "scan"];
const TYPES = ["number", "string", "boolean", "Options", "Record<string, number>", "Snapshot", "Entry[]", "Promise<void>", "Result"];

const camel = (random: Random) => {
  const noun = pick(random, NOUNS);
  return `${pick(random, VERBS)}${noun.charAt(0).toUpperCase()}${noun.slice(1)}`;
};

/** One function of a TypeScript-like source file. */
function codeBlock(random: Random): string {
  const name = camel(random);
  const lines = [`/** ${sentence(random, int(random, 6, 14))} */`, `export function ${name}(input: ${pick(random, TYPES)}, limit = ${int(random, 2, 500)}): ${pick(random, TYPES)} {`];
  const body = int(random, 3, 14);
  for (let i = 0; i < body; i += 1) {
    const a = pick(random, NOUNS);
    const b = pick(random, NOUNS);
    switch (int(random, 0, 4)) {
      case 0:
        lines.push(`  const ${a}${i} = input.${b} ?? ${int(random, 0, 9999)};`);
        break;
      case 1:
        lines.push(`  if (${a}${Math.max(0, i - 1)} > limit) return ${camel(random)}(${a}${Math.max(0, i - 1)}, limit);`);
        break;
      case 2:
        lines.push(`  // ${sentence(random, int(random, 5, 12))}`);
        break;
      case 3:
        lines.push(`  for (const ${a} of input.${b}s ?? []) total += ${camel(random)}(${a});`);
        break;
      default:
        lines.push(`  await this.${camel(random)}({ ${a}: ${int(random, 0, 99)}, ${b}: "${randomString(random, HEX, 6)}" });`);
    }
  }
  lines.push(`  return ${camel(random)}(input, limit);`, "}", "");
  return lines.join("\n");
}

/** The marker line that ends every version of a file: it shows the whole file is in view. */
export function contentHashLine(hash: string): string {
  return `// content-hash: ${hash}`;
}

/** A new content hash (16 hex digits). */
export function newContentHash(random: Random): string {
  return randomString(random, HEX, 16);
}

/** The body of a source file of about `bytes` bytes (without its hash line). */
export function sourceBody(random: Random, path: string, bytes: number): string {
  const parts = [`// ${path}`, `import { ${camel(random)}, ${camel(random)} } from "./${pick(random, NOUNS)}";`, ""];
  let length = parts.join("\n").length;
  while (length < bytes) {
    const block = codeBlock(random);
    parts.push(block);
    length += block.length + 1;
  }
  return parts.join("\n");
}

/** An edit of a body: a few lines rewritten and a few added, as a fix would. */
export function editedBody(random: Random, body: string, note: string): string {
  const lines = body.split("\n");
  const edits = int(random, 2, 6);
  for (let i = 0; i < edits; i += 1) {
    const at = int(random, 3, Math.max(3, lines.length - 2));
    lines.splice(at, 1, `  // ${note}: ${sentence(random, int(random, 4, 9))}`, `  const fixed${i} = ${camel(random)}(input, ${int(random, 1, 99)});`);
  }
  return lines.join("\n");
}

/** A whole file: body plus hash line. */
export function fileText(body: string, hash: string): string {
  return `${body}\n${contentHashLine(hash)}\n`;
}

/** One failing test of a test run, as the log prints it. */
export interface LoggedFailure {
  /** The error code planted in the failure line. */
  code: string;
  test: string;
  testFile: string;
  sourceFile: string;
}

/** A test runner's output of about `bytes` bytes with the failures among passing suites (each failure once). */
export function testLog(random: Random, suite: string, bytes: number, failures: readonly LoggedFailure[]): string {
  const header = [`> vitest run --project ${suite} --reporter verbose`, "", ` RUN  v2.1.8 /workspace`, ""];
  const blocks: string[] = [];
  let length = header.join("\n").length;
  // The failures land at distinct positions among the passing suites, never first (offload previews show the start).
  const passing = Math.max(failures.length + 2, Math.round(bytes / 700));
  const failureAt = new Set<number>();
  while (failureAt.size < failures.length) failureAt.add(int(random, 1, passing - 1));
  let failureIndex = 0;
  for (let i = 0; length < bytes || failureIndex < failures.length; i += 1) {
    if (failureAt.has(i)) {
      const failure = failures[failureIndex]!;
      failureIndex += 1;
      const lines = [
        ` FAIL  ${failure.testFile} > ${failure.test}`,
        `AssertionError: expected ${int(random, 0, 99)} to equal ${int(random, 100, 999)} [error ${failure.code}] in ${failure.sourceFile}`,
        ` ❯ ${failure.testFile}:${int(random, 10, 400)}:${int(random, 3, 40)}`,
      ];
      for (let k = 0; k < int(random, 4, 9); k += 1) lines.push(`    at ${camel(random)} (${failure.sourceFile}:${int(random, 1, 900)}:${int(random, 1, 60)})`);
      blocks.push(lines.join("\n"));
      length += blocks.at(-1)!.length + 1;
      continue;
    }
    const file = `tests/${suite}/${pick(random, NOUNS)}-${pick(random, NOUNS)}.test.ts`;
    const lines = [` ✓ ${file} (${int(random, 3, 40)} tests) ${int(random, 10, 2400)}ms`];
    for (let k = 0; k < int(random, 3, 12); k += 1) lines.push(`   ✓ ${sentence(random, int(random, 4, 10)).slice(0, -1).toLowerCase()} ${int(random, 0, 90)}ms`);
    if (random() < 0.2) lines.push(`stderr | ${file}`, `  warn: ${sentence(random, int(random, 6, 14))}`);
    blocks.push(lines.join("\n"));
    length += blocks.at(-1)!.length + 1;
  }
  const footer = [
    "",
    ` Test Files  ${failures.length} failed | ${blocks.length - failures.length} passed (${blocks.length})`,
    `      Tests  ${failures.length} failed | ${int(random, 300, 1600)} passed`,
    `   Duration  ${int(random, 4, 90)}.${int(random, 10, 99)}s`,
  ];
  return [...header, ...blocks, ...footer].join("\n");
}

/** What `grep -n` prints for a pattern over some files, about `bytes` long. */
export function grepOutput(random: Random, pattern: string, paths: readonly string[], bytes: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < bytes) {
    const line = `${pick(random, paths)}:${int(random, 1, 900)}:  ${pick(random, ["const", "return", "if (", "await"])} ${pattern}(${pick(random, NOUNS)}, ${int(random, 0, 99)});`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

/** A finding planted in a search result or page: the line a report section needs. */
export interface Finding {
  id: string;
  claim: string;
}

/** The line that carries a finding. */
export function findingLine(finding: Finding): string {
  return `Key finding [${finding.id}]: ${finding.claim}`;
}

/** A web search result page of about `bytes` bytes, the finding after the first hit (out of previews). */
export function searchResults(random: Random, query: string, bytes: number, finding: Finding): string {
  const hits: string[] = [];
  let length = 0;
  for (let n = 1; length < bytes || n <= 3; n += 1) {
    const domain = `${pick(random, NOUNS)}-${pick(random, NOUNS)}.${pick(random, ["org", "com", "io", "edu"])}`;
    const hit = [`${n}. ${sentence(random, int(random, 4, 9)).slice(0, -1)} — https://${domain}/${randomString(random, HEX, 8)}`, `   ${prose(random, int(random, 250, 700))}`];
    if (n === 2) hit.push(`   ${findingLine(finding)}`);
    hits.push(hit.join("\n"));
    length += hits.at(-1)!.length + 1;
  }
  return [`Search results for "${query}":`, ...hits].join("\n");
}

/** A fetched web page of about `bytes` bytes, the finding in its middle. */
export function webPage(random: Random, url: string, bytes: number, finding: Finding): string {
  const paragraphs: string[] = [];
  let length = 0;
  const middle = Math.max(2, Math.round(bytes / 1400));
  for (let i = 0; length < bytes || i <= middle; i += 1) {
    if (i === middle) paragraphs.push(findingLine(finding));
    const paragraph = prose(random, int(random, 500, 1500));
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  return [`# ${sentence(random, int(random, 4, 8)).slice(0, -1)}`, `Source: ${url}`, "", ...paragraphs].join("\n\n");
}
