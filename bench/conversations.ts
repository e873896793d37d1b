import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";

/**
 * Deterministic synthetic agent conversations for the benchmark: a system
 * prompt, then turns in which a user asks for something and the agent works
 * through steps (an AI message with one to four parallel tool calls and their
 * results) before answering. Tool outputs mix realistic sizes (search hits,
 * JSON records, log excerpts, code) with occasional large ones (file dumps,
 * base64 payloads, minified JSON). The last turn is the current task, cut off
 * mid-work, as when an agent is about to make its next model call.
 */

/** A small seeded PRNG (mulberry32): the same seed gives the same conversation on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

const WORDS = (
  "the a of to and in is for on that with as by this be are from at or it an was which not have has " +
  "request response service cluster deploy config error warning latency timeout retry cache index query table " +
  "customer order invoice payment refund shipment inventory warehouse region account user session token " +
  "increase decrease rollback migrate schedule review approve reject summary report metric dashboard alert " +
  "function module package dependency version release branch commit build test failure success pending"
).split(" ");
const TOOLS = ["search_docs", "read_file", "run_query", "http_get", "list_tickets", "grep_logs", "get_metrics"];
/** The alphabets of random payloads. */
export const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
export const HEX = "0123456789abcdef";

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

export function int(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function sentence(random: Random, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i += 1) parts.push(pick(random, WORDS));
  const text = parts.join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

export function prose(random: Random, chars: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const s = sentence(random, int(random, 6, 18));
    parts.push(s);
    length += s.length + 1;
  }
  return parts.join(" ");
}

export function randomString(random: Random, alphabet: string, length: number): string {
  let out = "";
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** Records of an API response, minified, to at least `chars` characters: ids, statuses, amounts, e-mail addresses, short notes. */
export function minifiedJson(random: Random, chars: number): string {
  const rows: unknown[] = [];
  let length = 0;
  while (length < chars) {
    const row = {
      id: randomString(random, HEX, 24),
      status: pick(random, ["open", "closed", "pending", "failed"]),
      amount: Math.round(random() * 1e7) / 100,
      owner: `${randomString(random, "abcdefghijklmnopqrstuvwxyz", int(random, 4, 10))}@example.com`,
      token: randomString(random, BASE64, int(random, 16, 40)),
      note: prose(random, int(random, 20, 80)),
    };
    rows.push(row);
    length += JSON.stringify(row).length + 1;
  }
  return JSON.stringify(rows).slice(0, chars);
}

/** Chinese-like text of `chars` characters: clauses of common CJK characters, each ended by a full-width punctuation mark. */
export function cjkText(random: Random, chars: number): string {
  let text = "";
  while (text.length < chars) {
    for (let i = int(random, 4, 16); i > 0; i -= 1) text += String.fromCharCode(0x4e00 + Math.floor(random() * 2_500));
    text += pick(random, ["，", "。", "、", "；", "："]);
  }
  return text.slice(0, chars);
}

/** `messages` with its newest tool result replaced by one holding `content`. */
export function withNewestResult(messages: BaseMessage[], content: string): BaseMessage[] {
  const copy = [...messages];
  for (let index = copy.length - 1; index >= 0; index -= 1) {
    const message = copy[index]!;
    if (ToolMessage.isInstance(message)) {
      copy[index] = new ToolMessage({ tool_call_id: message.tool_call_id, name: message.name, content });
      break;
    }
  }
  return copy;
}

function jsonRecords(random: Random, chars: number, minified: boolean): string {
  const rows: unknown[] = [];
  let length = 0;
  while (length < chars) {
    const row = {
      id: randomString(random, HEX, 12),
      status: pick(random, ["open", "closed", "pending", "failed"]),
      amount: Math.round(random() * 100_000) / 100,
      owner: `${pick(random, WORDS)}.${pick(random, WORDS)}@example.com`,
      note: sentence(random, int(random, 4, 10)),
    };
    rows.push(row);
    length += 120;
  }
  return minified ? JSON.stringify(rows) : JSON.stringify(rows, null, 2);
}

function logLines(random: Random, chars: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < chars) {
    const line = `2026-11-${String(int(random, 1, 28)).padStart(2, "0")}T${String(int(random, 0, 23)).padStart(2, "0")}:${String(
      int(random, 0, 59),
    ).padStart(2, "0")}:07Z ${pick(random, ["INFO", "WARN", "ERROR"])} req=${randomString(random, HEX, 16)} ${sentence(random, int(random, 5, 12))}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

function codeFile(random: Random, chars: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < chars) {
    const name = `${pick(random, WORDS)}${pick(random, ["Handler", "Service", "Store", "Client"])}`;
    const block = `export async function ${name}${int(random, 1, 999)}(input: ${pick(random, ["string", "number", "Order"])}) {\n  // ${sentence(random, 8)}\n  const result = await fetch(\`/api/${pick(random, WORDS)}/\${input}\`);\n  if (!result.ok) throw new Error("${sentence(random, 4)}");\n  return result.json();\n}\n`;
    lines.push(block);
    length += block.length;
  }
  return lines.join("\n");
}

/**
 * One tool output: most are short (100 to 900 characters), a quarter medium
 * (0.9 to 3 KB), and one in fifty large (8 to 30 KB: a file dump, a base64
 * payload, a page of minified JSON).
 */
export function toolOutput(random: Random): string {
  const size = random();
  const large = size < 0.02;
  const chars = large ? int(random, 8_000, 30_000) : size < 0.72 ? int(random, 100, 900) : int(random, 900, 3_000);
  const kind = random();
  if (large && kind < 0.25) return `{"file":"report.pdf","base64":"${randomString(random, BASE64, chars)}"}`;
  if (kind < 0.3) return prose(random, chars);
  if (kind < 0.5) return jsonRecords(random, chars, kind < 0.4);
  if (kind < 0.75) return logLines(random, chars);
  return codeFile(random, chars);
}

/** Builds the agent's system prompt (about 2,000 characters). */
function systemPrompt(random: Random): SystemMessage {
  return new SystemMessage(
    `You are an operations agent for an online shop. Use the tools to investigate and act. ${prose(random, 1_900)}`,
  );
}

/** The generator's state, so that more steps can be appended to a conversation later. */
export interface ConversationBuilder {
  random: Random;
  nextId: number;
}

/** Builds one step: an AI message with `calls` parallel tool calls and one result for each. */
export function agentStep(builder: ConversationBuilder, calls: number): BaseMessage[] {
  const { random } = builder;
  const toolCalls = Array.from({ length: calls }, () => {
    builder.nextId += 1;
    return {
      id: `call_${builder.nextId.toString(36)}_${randomString(random, HEX, 8)}`,
      name: pick(random, TOOLS),
      args: { query: sentence(random, int(random, 3, 8)), limit: int(random, 5, 50) },
      type: "tool_call" as const,
    };
  });
  const content = random() < 0.5 ? "" : sentence(random, int(random, 6, 20));
  const step: BaseMessage[] = [new AIMessage({ content, tool_calls: toolCalls })];
  for (const call of toolCalls) {
    step.push(new ToolMessage({ tool_call_id: call.id, name: call.name, content: toolOutput(random) }));
  }
  return step;
}

export function stepSize(random: Random): number {
  const r = random();
  return r < 0.5 ? 1 : r < 0.75 ? 2 : r < 0.92 ? 3 : 4;
}

/** A new builder for `seed`. */
export function conversationBuilder(seed: number): ConversationBuilder {
  return { random: seededRandom(seed), nextId: 0 };
}

/**
 * An agent conversation of exactly `size` messages (at least 3): system
 * prompt, finished turns of 2 to 12 steps each, and a current task that has
 * done a few steps and not answered yet.
 */
export function agentConversation(size: number, seed = 1, builder = conversationBuilder(seed)): BaseMessage[] {
  if (!Number.isInteger(size) || size < 3) throw new RangeError(`size must be an integer of at least 3, got ${size}`);
  const { random } = builder;
  const messages: BaseMessage[] = [systemPrompt(random)];
  // The current task takes the last 5-40 messages.
  const taskLength = Math.min(size - 2, int(random, 5, 40));
  const historyEnd = size - taskLength;
  const fill = (end: number, answerTurn: boolean) => {
    messages.push(new HumanMessage(sentence(random, int(random, 8, 30))));
    let steps = int(random, 2, 12);
    while (messages.length < end) {
      const room = end - messages.length;
      if (answerTurn && (steps === 0 || room <= 2)) {
        if (room >= 2 && steps > 0) {
          messages.push(...agentStep(builder, 1));
          continue;
        }
        messages.push(new AIMessage(prose(random, int(random, 200, 1_200))));
        if (messages.length < end) {
          messages.push(new HumanMessage(sentence(random, int(random, 8, 30))));
          steps = int(random, 2, 12);
        }
        continue;
      }
      const calls = Math.min(stepSize(random), room - 1);
      if (calls < 1) {
        messages.push(new AIMessage(sentence(random, 12)));
        continue;
      }
      messages.push(...agentStep(builder, calls));
      steps -= 1;
    }
  };
  if (historyEnd > 1) fill(historyEnd, true);
  fill(size, false);
  return messages;
}
