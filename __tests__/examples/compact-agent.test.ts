/**
 * `npm run example`, run as a newcomer runs it (a child process, offline), and
 * its output read structurally: title, then the table and what its columns
 * count, then the messages sent; the numbers are the compactor's for the demo
 * conversation, computed here; no text is cut.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { isOmissionNote, SlidingWindowCompactor, tiktokenCounter } from "../../src";
import { longAgentConversation } from "../../examples/support/conversation";

const root = join(__dirname, "..", "..");
const WIDTH = 78;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function npmRunExample(): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_offline: "true" };
  delete env.OPENAI_API_KEY;
  return new Promise((resolve) => {
    const child = execFile("npm", ["run", "example"], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

const normalize = (text: string) => text.split(/\s+/).filter(Boolean).join(" ");
const textOf = (message: BaseMessage) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content));

describe("npm run example", () => {
  let run: Run;
  let lines: string[];
  beforeAll(async () => {
    run = await npmRunExample();
    lines = run.stdout.split("\n");
  }, 60_000);

  it("exits 0 with nothing on stderr but npm's own notices", () => {
    expect(run.code).toBe(0);
    expect(run.stderr.split("\n").filter((line) => line.trim() !== "" && !/^npm (notice|warn)/i.test(line))).toEqual([]);
  });

  it("prints the title, then the table with what each column counts, then the detail", () => {
    const title = lines.findIndex((line) => line.startsWith("Compacting a travel-agent conversation"));
    const header = lines.findIndex((line) => /^\s+messages\s+tokens\s+removed$/.test(line));
    const legend = lines.findIndex((line) => line.startsWith("messages: "));
    const detail = lines.findIndex((line) => /^After compacting to \d+ tokens, the model is sent these \d+ messages:$/.test(line));
    expect(title).toBeGreaterThanOrEqual(0);
    expect(header).toBeGreaterThan(title);
    expect(legend).toBeGreaterThan(header);
    expect(detail).toBeGreaterThan(legend);
    // Every column is explained, and the note's place in the counts is said.
    expect(lines[legend]).toMatch(/note included/);
    expect(lines.some((line) => /^tokens: .*note included/.test(line))).toBe(true);
    expect(lines.some((line) => /^removed: /.test(line))).toBe(true);
  });

  it("has in its table the compactor's numbers for the demo conversation", async () => {
    const messages = longAgentConversation();
    const counter = tiktokenCounter("o200k_base");
    const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });
    const rows = lines.map((line) => /^(before|target (\d+))\s+(\d+)\s+(\d+)\s+(\d+)$/.exec(line)).filter((row) => row !== null);
    expect(rows.map((row) => row[1])).toEqual(["before", "target 4000", "target 1500", "target 700"]);
    const [, , , beforeCount, beforeTokens, beforeRemoved] = rows[0]!;
    expect(Number(beforeCount)).toBe(messages.length);
    expect(Number(beforeTokens)).toBe(await counter(messages));
    expect(Number(beforeRemoved)).toBe(0);
    for (const [, , target, count, tokens, removed] of rows.slice(1)) {
      const report = await compactor.compactWithReport(messages, Number(target), counter);
      expect(report.messages).not.toBeNull();
      expect(Number(count)).toBe(report.messages!.length);
      expect(Number(tokens)).toBe(await counter(report.messages!));
      expect(Number(removed)).toBe(report.removed.length);
      // What the legend says: the count sent is what was kept plus the note.
      expect(Number(count)).toBe(messages.length - Number(removed) + 1);
    }
  });

  it("lists every message sent at the tightest target, in order and in full", async () => {
    const detail = lines.findIndex((line) => line.startsWith("After compacting to "));
    const [, target, announced] = /^After compacting to (\d+) tokens, the model is sent these (\d+) messages:$/.exec(lines[detail]!)!;
    const sent = (await new SlidingWindowCompactor({ minKeepSteps: 1 }).compact(longAgentConversation(), Number(target), tiktokenCounter("o200k_base")))!;
    expect(Number(announced)).toBe(sent.length);
    // Entries start "  <n>. "; their continuation lines are indented under them.
    const entries: string[] = [];
    for (const line of lines.slice(detail + 1)) {
      if (/^ {2}\d+\. /.test(line)) entries.push(line.replace(/^ {2}\d+\.\s+/, ""));
      else if (/^ {5}\S/.test(line)) entries[entries.length - 1] += ` ${line.trim()}`;
      else if (line.trim() !== "") throw new Error(`unexpected line in the detail: ${JSON.stringify(line)}`);
    }
    expect(entries).toHaveLength(sent.length);
    sent.forEach((message, index) => {
      const entry = normalize(entries[index]!);
      expect(entry.startsWith(message.type)).toBe(true);
      expect(entry.includes("(omission note)")).toBe(isOmissionNote(message));
      // The whole text, nothing cut: the note itself included.
      expect(entry.endsWith(normalize(textOf(message)))).toBe(true);
    });
  });

  it("cuts no line mid-word: lines fit the width, or hold a single word", () => {
    for (const line of lines.filter((l) => !l.startsWith(">"))) {
      if (line.length <= WIDTH) continue;
      expect(line.trim().split(/\s+/).length).toBeLessThanOrEqual(2); // a number or label and one long word
    }
    expect(run.stdout).not.toMatch(/\.\.\.\n/);
  });
});
