/**
 * The main demo (`npm run example`): a long agent conversation with tool calls
 * is compacted to three token targets, offline. It prints, in reading order, a
 * title, a before/after table with what each column counts, and then every
 * message the model would be sent at the tightest target, in full.
 */
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { isOmissionNote, SlidingWindowCompactor, tiktokenCounter } from "../src";
import { longAgentConversation } from "./support/conversation";
import { wrapWords } from "./support/wrap-words";

const TARGETS = [4_000, 1_500, 700] as const;
/** Printed lines stay within this many characters, except a single word longer than a line. */
const WIDTH = 78;
const ENTRY_INDENT = 5; // "  1. " and the continuation lines under it

/** What a message is, in a few words: its type, whether it is our note, which tools it calls. */
function labelOf(message: BaseMessage): string {
  const note = isOmissionNote(message) ? " (omission note)" : "";
  const calls = AIMessage.isInstance(message) && message.tool_calls?.length ? ` calling ${message.tool_calls.map((call) => call.name).join(" and ")}` : "";
  return `${message.type}${note}${calls}`;
}

/** A message as numbered, word-wrapped lines: the whole text, never cut. */
function entryLines(position: number, message: BaseMessage): string[] {
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const entry = text === "" ? labelOf(message) : `${labelOf(message)}: ${text}`;
  const number = `${position}.`.padEnd(ENTRY_INDENT - 2);
  return wrapWords(entry, WIDTH - ENTRY_INDENT).map((line, index) => (index === 0 ? `  ${number}${line}` : `${" ".repeat(ENTRY_INDENT)}${line}`));
}

/** Right-aligned numeric columns after a left-aligned label column. */
function tableLines(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ").trimEnd());
}

async function main(): Promise<void> {
  const messages = longAgentConversation();
  const counter = tiktokenCounter("o200k_base");
  const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });

  const before = await compactor.compactWithReport(messages, Number.MAX_SAFE_INTEGER, counter);
  const reports = [];
  for (const target of TARGETS) reports.push({ target, report: await compactor.compactWithReport(messages, target, counter) });

  const rows = [
    ["", "messages", "tokens", "removed"],
    ["before", String(messages.length), String(before.tokensBefore), "0"],
    ...reports.map(({ target, report }) => [`target ${target}`, String((report.messages ?? messages).length), String(report.tokensAfter), String(report.removed.length)]),
  ];
  const lines = [
    "Compacting a travel-agent conversation to three token targets",
    "(o200k_base token counts, offline, the newest step of the task always kept)",
    "",
    ...tableLines(rows),
    "",
    "messages: messages the model is sent, the omission note included",
    "tokens:   tokens of those messages, the omission note included",
    "removed:  messages of the conversation left out, which the note stands for",
  ];
  for (const { target, report } of reports) {
    if (report.stepsTrimmed) lines.push(...wrapWords(`At target ${target} the oldest steps of the current task went too, not only earlier turns.`, WIDTH));
  }

  const tightest = reports.at(-1)!;
  const sent = tightest.report.messages ?? messages;
  lines.push("", `After compacting to ${tightest.target} tokens, the model is sent these ${sent.length} messages:`);
  sent.forEach((message, index) => lines.push(...entryLines(index + 1, message)));
  console.log(lines.join("\n"));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
