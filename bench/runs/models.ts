/**
 * The two offline chat models of the run benchmark.
 *
 * - {@link ScriptedRunModel}: the agent's model. It answers from the run's
 *   script (so every strategy replays the same run), records every request
 *   exactly as it was received (the message list and the tools bound), and
 *   reports `usage_metadata` as a provider would (input tokens = the request
 *   counted with the bench's counter, tool schemas included). Its last call
 *   lists the planted facts its request still shows.
 * - {@link ScriptedSummarizer}: the one summary model that ours and
 *   LangChain's summarization share, so that the comparison is of
 *   strategies, not of models. It keeps the lines that hold identifiers, up
 *   to its token limit.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { TokenCounter } from "../../src";
import { factsIn, FACT_PATTERN } from "./script";
import type { RunScript, ScriptedStep } from "./script";

/** One request the agent's model received. */
export interface RecordedRequest {
  /** The messages exactly as received (the array is copied, the messages are the ones sent). */
  messages: BaseMessage[];
  /** Names of the tools bound when the request was made. */
  tools: string[];
  /** The bound tools' schemas as the provider would receive them (JSON). */
  toolSchemaText: string;
}

/** All the text of a list of messages, as the facts scan reads it. */
export function requestText(messages: readonly BaseMessage[]): string {
  return messages.map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content))).join("\n");
}

/** The bench's scripted agent model: `bindTools` returns the model itself, which records what it is bound to. */
export class ScriptedRunModel extends BaseChatModel {
  readonly requests: RecordedRequest[] = [];
  /** The text of the last answer (the last call's lists the visible facts). */
  lastAnswer: string | null = null;
  private readonly steps: ScriptedStep[];
  private boundTools: string[] = [];
  private toolSchemaText = "";

  constructor(
    private readonly script: RunScript,
    private readonly counter: TokenCounter,
  ) {
    super({});
    this.steps = script.turns.flatMap((turn) => turn.steps);
  }

  _llmType(): string {
    return "scripted-run";
  }

  override bindTools(tools: BindToolsInput[]): this {
    this.boundTools = tools.map((tool) => {
      const named = tool as { name?: unknown; function?: { name?: unknown } };
      return String(named.name ?? named.function?.name ?? "tool");
    });
    this.toolSchemaText = tools.length === 0 ? "" : JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)));
    return this;
  }

  /** Tokens of a recorded request: its messages plus the tool schemas (counted as one system message). */
  requestTokens(request: RecordedRequest): number {
    const schemas = request.toolSchemaText === "" ? 0 : (this.counter([new SystemMessage(request.toolSchemaText)]) as number);
    return (this.counter(request.messages) as number) + schemas;
  }

  /** For `contextEditingMiddleware`'s `tokenCountMethod: "model"`: the same counter as everyone else. */
  async getNumTokensFromMessages(messages: BaseMessage[]): Promise<{ totalCount: number }> {
    return { totalCount: this.counter(messages) as number };
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const index = this.requests.length;
    const request: RecordedRequest = { messages: [...messages], tools: [...this.boundTools], toolSchemaText: this.toolSchemaText };
    this.requests.push(request);
    const step = this.steps[index];
    if (step === undefined) throw new Error(`the script has ${this.steps.length} model calls; call ${index + 1} was not planned`);
    let content = step.content;
    if (index === this.steps.length - 1) {
      const visible = factsIn(requestText(messages), this.script.facts);
      content = `${content}\nFacts visible: ${visible.length === 0 ? "none" : visible.join(", ")}`;
    }
    this.lastAnswer = content;
    const fields = {
      id: `run-${this.script.seed}-${index}`,
      content,
      tool_calls: step.toolCalls.map((call) => ({ ...call, type: "tool_call" as const })),
    };
    const input = this.requestTokens(request);
    const output = this.counter([new AIMessage(fields)]) as number;
    const message = new AIMessage({ ...fields, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
    return { generations: [{ text: message.text, message }] };
  }
}

/** What summary calls cost, shared by a summarizer and the copies a caller builds of it. */
export interface SummarizerStats {
  /** Summary calls made. */
  calls: number;
  /** CPU microseconds spent inside the summarizer (subtracted from the strategies' compaction time). */
  cpuMicros: number;
}

/** Fields of {@link ScriptedSummarizer}; a copy built from them (with another `maxTokens`) shares `stats`. */
export interface ScriptedSummarizerFields {
  counter: TokenCounter;
  /** Output limit in tokens. Default 1,024. */
  maxTokens?: number;
  stats?: SummarizerStats;
}

/**
 * The shared deterministic summarizer: it keeps, in order and without
 * repeats, every line of its input that holds an identifier in the planted
 * format (earlier summaries included, so they are folded in), until its
 * token limit. Callers that hold a model to an output limit rebuild it from
 * its constructor fields with another `maxTokens` (as LangChain models are
 * rebuilt): the copy shares the call counts.
 */
export class ScriptedSummarizer extends BaseChatModel {
  readonly maxTokens: number;
  readonly stats: SummarizerStats;
  private readonly counter: TokenCounter;

  constructor(fields: ScriptedSummarizerFields) {
    const stats = fields.stats ?? { calls: 0, cpuMicros: 0 };
    super({ ...fields, stats } as never);
    this.counter = fields.counter;
    this.maxTokens = fields.maxTokens ?? 1_024;
    this.stats = stats;
  }

  get calls(): number {
    return this.stats.calls;
  }

  get cpuMicros(): number {
    return this.stats.cpuMicros;
  }

  _llmType(): string {
    return "scripted-summarizer";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const started = process.cpuUsage();
    this.stats.calls += 1;
    const limit = this.maxTokens;
    const kept: string[] = ["Summary of the earlier conversation (identifiers kept verbatim):"];
    const seen = new Set<string>();
    let tokens = this.counter([new AIMessage(kept[0]!)]) as number;
    for (const line of requestText(messages).split("\n")) {
      FACT_PATTERN.lastIndex = 0;
      if (!FACT_PATTERN.test(line)) continue;
      const text = line.trim().slice(0, 400);
      if (seen.has(text)) continue;
      const cost = this.counter([new AIMessage(text)]) as number;
      if (tokens + cost > limit) break;
      seen.add(text);
      kept.push(text);
      tokens += cost;
    }
    if (kept.length === 1) kept.push("No identifiers were mentioned.");
    const message = new AIMessage({ content: kept.join("\n") });
    const spent = process.cpuUsage(started);
    this.stats.cpuMicros += spent.user + spent.system;
    return { generations: [{ text: message.text, message }] };
  }
}
