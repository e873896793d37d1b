/**
 * The deterministic script of one agent run: what the user asks, what the
 * model answers at every call (tool calls or text), and what every tool
 * returns. Everything comes from one seed, so each strategy replays exactly
 * the same run; only what the model is *sent* differs.
 *
 * Facts are planted as unique identifiers on lines of their own: in the
 * user's messages, in early tool results and in the AI's own messages. The
 * last call of the run reports which of them its request still shows.
 */
import { int, pick, prose, randomString, seededRandom, sentence, stepSize, toolOutput } from "../conversations";
import type { Random } from "../conversations";

/** Where a fact was planted. */
export type FactSource = "user" | "tool" | "ai";

/** A planted fact: an identifier the agent may need later. */
export interface Fact {
  id: string;
  source: FactSource;
  /** The model call (from 0) at or after which it appears in the conversation. */
  call: number;
}

/** One tool call the model makes. */
export interface ScriptedToolCall {
  id: string;
  name: string;
  args: { query: string; ref: string };
}

/** What the model answers at one call: text, and tool calls unless it ends its turn. */
export interface ScriptedStep {
  content: string;
  toolCalls: ScriptedToolCall[];
}

/** One user turn: the user's message and the model calls it takes (the last one answers in text). */
export interface ScriptedTurn {
  user: string;
  steps: ScriptedStep[];
}

/** A whole run. */
export interface RunScript {
  seed: number;
  systemPrompt: string;
  turns: ScriptedTurn[];
  facts: Fact[];
  /** Tool output by tool call id (the tools look their answer up by the `ref` argument). */
  results: Map<string, string>;
  /** Total model calls of the agent (summaries not included). */
  calls: number;
}

/** The tools of the run, by name (all take `{ query, ref }`). */
export const RUN_TOOLS = ["search_docs", "read_file", "run_query", "http_get", "list_tickets", "grep_logs", "get_metrics"] as const;

/** The identifier format of planted facts: two letters, four digits, four letters or digits, e.g. `TK-4821-QF7Z`. */
export const FACT_PATTERN = /\b[A-Z]{2}-\d{4}-[A-Z0-9]{4}\b/g;

const FACT_PREFIXES = ["TK", "AC", "RQ", "DB", "PR", "KV", "OR", "IN", "SH", "WH"];
const UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** Options of {@link runScript}. */
export interface RunScriptOptions {
  /** User turns. Default 5. */
  turns?: number;
  /** Model calls per turn (the last one answers in text). Default 30. */
  callsPerTurn?: number;
}

/** The script of the run for `seed`: `turns × callsPerTurn` model calls (default 5 × 30 = 150). */
export function runScript(seed: number, options: RunScriptOptions = {}): RunScript {
  const { turns: turnCount = 5, callsPerTurn = 30 } = options;
  if (!Number.isInteger(turnCount) || turnCount < 1) throw new RangeError(`turns must be a positive whole number, got ${turnCount}`);
  if (!Number.isInteger(callsPerTurn) || callsPerTurn < 2) throw new RangeError(`callsPerTurn must be at least 2, got ${callsPerTurn}`);
  const random = seededRandom(seed * 104_729 + 17);
  const used = new Set<string>();
  const facts: Fact[] = [];
  const plant = (source: FactSource, call: number): string => {
    let id: string;
    do id = `${pick(random, FACT_PREFIXES)}-${String(int(random, 0, 9999)).padStart(4, "0")}-${randomString(random, UPPER, 4)}`;
    while (used.has(id));
    used.add(id);
    facts.push({ id, source, call });
    return id;
  };
  const results = new Map<string, string>();
  let nextCall = 0;
  const turns: ScriptedTurn[] = [];
  let call = 0;
  for (let t = 0; t < turnCount; t += 1) {
    // The user's facts come in the first turns, where a sliding window loses them first.
    const userLines = [sentence(random, int(random, 10, 24))];
    if (t === 0) {
      userLines.push(`The ticket is ${plant("user", call)}.`, `The customer account is ${plant("user", call)}.`);
    } else if (t <= 2) userLines.push(`Also note the reference ${plant("user", call)}.`);
    const steps: ScriptedStep[] = [];
    for (let s = 0; s < callsPerTurn; s += 1, call += 1) {
      const last = s === callsPerTurn - 1;
      if (last) {
        const lines = [prose(random, int(random, 200, 900))];
        if (t <= 1) lines.push(`Recorded as ${plant("ai", call)}.`);
        steps.push({ content: lines.join("\n"), toolCalls: [] });
        continue;
      }
      let content = random() < 0.5 ? "" : sentence(random, int(random, 6, 20));
      // The AI's own facts: a decision written into its message early in the first turn.
      if (t === 0 && (s === 2 || s === 8)) content = `${content}\nI will use the identifier ${plant("ai", call)} from now on.`.trim();
      const toolCalls: ScriptedToolCall[] = [];
      const calls = stepSize(random);
      for (let c = 0; c < calls; c += 1) {
        nextCall += 1;
        const id = `call_${seed}_${nextCall.toString(36)}_${randomString(random, "0123456789abcdef", 6)}`;
        toolCalls.push({ id, name: pick(random, RUN_TOOLS), args: { query: sentence(random, int(random, 3, 8)), ref: id } });
        let output = toolOutput(random as Random);
        // Facts in early tool results: the first result of four early steps of the first turn.
        if (t === 0 && c === 0 && [1, 3, 6, 10].includes(s)) output = `reference: ${plant("tool", call)}\n${output}`;
        results.set(id, output);
      }
      steps.push({ content, toolCalls });
    }
    turns.push({ user: userLines.join("\n"), steps });
  }
  const systemPrompt = `You are an operations agent for an online shop. Use the tools to investigate and act.\n${prose(random, 1_900)}`;
  return { seed, systemPrompt, turns, facts, results, calls: call };
}

/** The planted facts that occur in `text`. */
export function factsIn(text: string, facts: readonly Fact[]): string[] {
  const found = new Set(text.match(FACT_PATTERN) ?? []);
  return facts.filter((fact) => found.has(fact.id)).map((fact) => fact.id);
}
