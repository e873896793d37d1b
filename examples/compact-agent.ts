/**
 * The main demo (`npm run example`): a long agent conversation with tool calls
 * is compacted to a token target, offline, and a before/after table is printed.
 */
import { SlidingWindowCompactor, tiktokenCounter } from "../src";
import { describeMessage, longAgentConversation } from "./support/conversation";

async function main(): Promise<void> {
  const messages = longAgentConversation();
  const counter = tiktokenCounter("o200k_base");
  const compactor = new SlidingWindowCompactor({ minKeepSteps: 1 });

  const rows: [string, number, number, string][] = [];
  for (const target of [4_000, 1_500, 700]) {
    const report = await compactor.compactWithReport(messages, target, counter);
    const after = report.messages ?? messages;
    const what = report.messages === null ? "nothing (fits)" : `${report.removed.length} messages${report.stepsTrimmed ? ", incl. task steps" : ""}`;
    rows.push([`target ${target}`, after.length, report.tokensAfter, what]);
    if (target === 700) {
      console.log(`\nAfter compacting to ${target} tokens, the model would see:`);
      for (const message of after) console.log(`  ${describeMessage(message)}`);
    }
  }

  const before = await compactor.compactWithReport(messages, Number.MAX_SAFE_INTEGER, counter);
  console.log("\nCompacting a travel-agent conversation (o200k_base token counts)\n");
  const header = ["", "messages", "tokens", "removed"];
  const table = [header, ["before", String(messages.length), String(before.tokensBefore), "-"], ...rows.map((r) => r.map(String))];
  const widths = header.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
  for (const row of table) console.log(row.map((cell, col) => (col === 0 || col === 3 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join("  "));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
