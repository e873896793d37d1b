/**
 * A pipeline for an agent, offline: old tool output is pruned first, and
 * whole turns are dropped only when that is not enough.
 *
 *   npx tsx examples/pipeline.ts
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { CompactionPipeline, SlidingWindowCompactor, ToolResultPruningCompactor } from "../src";
import type { CompactionReport } from "../src";

/** An agent run: three earlier questions answered with large tool results, and the current task mid-work. */
export function agentHistory(): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You are a careful on-call assistant.")];
  for (let turn = 0; turn < 3; turn += 1) {
    messages.push(new HumanMessage(`Why did deploy ${turn} fail?`));
    messages.push(new AIMessage({ content: "", tool_calls: [{ id: `grep_${turn}`, name: "grep_logs", args: { deploy: turn }, type: "tool_call" }] }));
    messages.push(new ToolMessage({ tool_call_id: `grep_${turn}`, name: "grep_logs", content: `ERROR deploy ${turn}: timeout talking to the registry\n`.repeat(120) }));
    messages.push(new AIMessage(`Deploy ${turn} timed out reaching the registry.`));
  }
  messages.push(new HumanMessage("Is deploy 3 failing the same way?"));
  messages.push(new AIMessage({ content: "", tool_calls: [{ id: "grep_3", name: "grep_logs", args: { deploy: 3 }, type: "tool_call" }] }));
  messages.push(new ToolMessage({ tool_call_id: "grep_3", name: "grep_logs", content: "ERROR deploy 3: disk full\n".repeat(40) }));
  return messages;
}

/** Compacts the history to two targets: one pruning alone reaches, one that needs the sliding window too. */
export async function main(): Promise<{ history: BaseMessage[]; gentle: CompactionReport; tight: CompactionReport }> {
  const history = agentHistory();
  const pipeline = new CompactionPipeline([new ToolResultPruningCompactor({ minKeepResults: 1 }), new SlidingWindowCompactor()]);
  const gentle = await pipeline.compactWithReport(history, 2_000);
  const tight = await pipeline.compactWithReport(history, 300);
  for (const [name, report] of [["gentle", gentle], ["tight", tight]] as const) {
    console.log(`${name}: ${report.tokensBefore} -> ${report.tokensAfter} tokens; stages ${report.stages.map((s) => s.strategy).join(", ")}; ${report.rewritten.length} rewritten, ${report.removed.length} removed`);
  }
  return { history, gentle, tight };
}

if (require.main === module) void main();
