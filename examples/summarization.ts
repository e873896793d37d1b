/**
 * Summarization, offline: the oldest turns of a long chat are replaced by a
 * summary that a chat model writes (here a scripted one that records what it
 * was asked). A later compaction summarizes the next oldest turns into a
 * second summary beside the first (summaries are combined only when there are
 * no turns left to summarize), so every booking reference stays in context.
 * When the summary call fails, nothing is removed for it and the next stage
 * of the pipeline (the sliding window) does the job.
 *
 *   npx tsx examples/summarization.ts
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { CompactionPipeline, SlidingWindowCompactor, SummarizationCompactor } from "../src";
import type { CompactionReport } from "../src";
import { ScriptedChatModel } from "../src/testing";

/** The token budget both compactions aim for. */
export const TARGET = 1_000;

/** A trip being planned over many turns; each turn names a booking reference the summary must keep. */
export function tripChat(fromTurn: number, turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = fromTurn; turn < fromTurn + turns; turn += 1) {
    messages.push(new HumanMessage(`Day ${turn}: ${"which museum should we see, and how do we get there? ".repeat(4)}`));
    messages.push(new AIMessage(`Day ${turn}: the tile museum, by tram 28; booked as BK-${1000 + turn}. ${"Opening hours are 10 to 18. ".repeat(4)}`));
  }
  return messages;
}

/** A summary model: it answers with the booking references it finds in what it is asked to summarize. */
export function bookingSummarizer(): ScriptedChatModel {
  return new ScriptedChatModel({
    reply: (messages) => {
      const asked = messages.map((m) => m.text).join("\n");
      const references = [...new Set(asked.match(/BK-\d+/g) ?? [])];
      return `## Objective\n- plan a museum trip\n## Exact identifiers\n- bookings: ${references.join(", ")}`;
    },
  });
}

export interface SummarizationExample {
  /** The chat before the first compaction. */
  history: BaseMessage[];
  /** The first compaction: the oldest turns summarized. */
  first: CompactionReport;
  /** The compacted chat grown by more turns, and its compaction: the next oldest turns summarized beside the first summary. */
  grown: BaseMessage[];
  second: CompactionReport;
  /** Every request the summary model received. */
  summaryRequests: BaseMessage[][];
  /** The same pipeline with a summary model that fails: the sliding window stands in. */
  fallback: CompactionReport;
}

export async function main(): Promise<SummarizationExample> {
  const summarizer = bookingSummarizer();
  const pipeline = new CompactionPipeline([new SummarizationCompactor({ model: summarizer, maxSummaryTokens: 200 }), new SlidingWindowCompactor()]);
  const system = new SystemMessage("You are a travel planner.");

  const history = [system, ...tripChat(0, 16), new HumanMessage("Which day has the longest tram ride?")];
  const first = await pipeline.compactWithReport(history, TARGET);
  const grown = [...first.messages!.slice(0, -1), ...tripChat(16, 8), new HumanMessage("Can we move day 3 to the end?")];
  const second = await pipeline.compactWithReport(grown, TARGET);

  const failing = new ScriptedChatModel({
    reply: () => {
      throw new Error("the summary service is down");
    },
  });
  const careful = new CompactionPipeline([new SummarizationCompactor({ model: failing }), new SlidingWindowCompactor()]);
  const fallback = await careful.compactWithReport(history, TARGET);

  for (const [name, report] of [["first", first], ["second", second], ["fallback", fallback]] as const) {
    const stages = report.stages.map((s) => `${s.strategy}${s.messages === null ? " (no change)" : ""}`).join(", ");
    console.log(`${name}: ${report.tokensBefore} -> ${report.tokensAfter} tokens; ${stages}; ${report.removed.length} removed, ${report.added.length} added`);
  }
  for (const summary of second.messages!.filter((m) => second.added.includes(m) || first.added.includes(m))) console.log(summary.text);
  return { history, first, grown, second, summaryRequests: summarizer.calls.map((call) => call.messages), fallback };
}

if (require.main === module) void main();
