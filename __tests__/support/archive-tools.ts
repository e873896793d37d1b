import { tool } from "@langchain/core/tools";

/** The two real tools of the graph tests' archive agent. */
export const lookup = tool(async ({ topic }: { topic: string }) => `Archive records on ${topic}: ${"record line with dates and places; ".repeat(12)}`, {
  name: "lookup",
  description: "Looks a topic up in the archive.",
  schema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
});

export const weather = tool(async ({ city }: { city: string }) => `${city}: mild, 18°C`, {
  name: "weather",
  description: "Current weather in a city.",
  schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
});

export const tools = [lookup, weather];

/** A window small enough that a few turns need compaction. */
export const CONTEXT_WINDOW = 1_600;

/** Messages per user turn: human, AI with 2 parallel calls, 2 results, AI with 1 call, its result, the answer. */
export const TURN_MESSAGES = 7;
