/**
 * The agent's scripted model. It works through the workload's plan for the
 * current user turn, one step per call, and decides each call from the
 * request it received, as a real model would:
 *
 * - Before a step, it checks that every piece of information the step needs
 *   is visible in the request: the whole request text (messages, summaries,
 *   placeholders, its own earlier tool-call arguments) contains the piece's
 *   marker (a file's current content-hash line, a failure's error code, a
 *   finding's source id, a fact the user stated).
 * - A missing piece is fetched again instead of taking the step: when the
 *   request shows an offloaded copy of a result that held it (the
 *   `ToolResultOffloadCompactor` reference, with its key and size), through
 *   the reader tool with that key; otherwise by calling the tool that
 *   produced it again (a pruned or cleared result, or nothing at all). A
 *   fact only the user knows is asked for, ending the turn with the question;
 *   the harness then sends the user's answer as a turn of its own.
 * - A scored question is answered from what the request shows, never
 *   fetched: answered when its fact is visible.
 * - The model does not redo steps: its place in the plan is its own state
 *   (a real agent would often, but not always, tell from the conversation
 *   what it has done). A turn that is not done after `stepCap` calls ends
 *   with an apology; so does one that asked the user `maxAsks` times.
 *
 * With `hiddenWindow`, the model is also the provider: a request over that
 * many tokens is refused with the error the provider's integration throws.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { OFFLOAD_READER_TOOL_NAME } from "../../src";
import type { CallLog } from "./call-log";
import { contextOverflowError } from "./overflow";
import type { OverflowProvider } from "./overflow";
import { requestText } from "./request-text";
import type { Question, ToolCallSpec, Workload, World } from "./workload";

/** Options of {@link DecidingAgentModel}. */
export interface DecidingAgentModelOptions {
  workload: Workload;
  world: World;
  log: CallLog;
  /** Model calls one user turn may take. Default 25. */
  stepCap?: number;
  /** Times one user turn may ask the user for a fact again. Default 2. */
  maxAsks?: number;
  /** The provider's real window (hidden from the strategies): longer requests are refused. */
  hiddenWindow?: { tokens: number; provider: OverflowProvider };
}

/** A scored question and how it was answered. */
export interface QuestionResult extends Question {
  /** The user turn (plan index) of the question. */
  turn: number;
  /** The invocation (from 0) in which it was asked. */
  invocation: number;
  answered: boolean;
}

/** Tool calls and questions the model made to get back what it could no longer see. */
export interface RefetchCounts {
  /** The producing tool called again. */
  tool: number;
  /** The offload reader called with a key. */
  reader: number;
  /** The user asked again. */
  ask: number;
}

/** What one call decided: the AI message's text and tool calls. */
interface Decision {
  content: string;
  calls: ToolCallSpec[];
}

/** The offload reference's size and key, as `ToolResultOffloadCompactor` writes them. */
const OFFLOAD_REFERENCE = /\((\d+) characters\) was moved out of the conversation[\s\S]*?key ("(?:[^"\\]|\\.)*")/;

export class DecidingAgentModel extends BaseChatModel {
  readonly questions: QuestionResult[] = [];
  readonly refetches: RefetchCounts = { tool: 0, reader: 0, ask: 0 };
  /** Turns ended by the step cap. */
  cappedTurns = 0;
  /** Turns ended after asking the user `maxAsks` times. */
  gaveUpTurns = 0;
  /** The user's restatement the model's last answer asked for, or `null`. */
  pendingAsk: string | null = null;

  private readonly workload: Workload;
  private readonly world: World;
  private readonly log: CallLog;
  private readonly stepCap: number;
  private readonly maxAsks: number;
  private readonly hiddenWindow: DecidingAgentModelOptions["hiddenWindow"];
  private turn = -1;
  private callsThisTurn = 0;
  private readonly cursors = new Map<number, number>();
  private readonly asks = new Map<number, number>();
  /** The information each tool call of this run showed, by call id. */
  private readonly callShows = new Map<string, readonly string[]>();
  private emitted = 0;
  private boundTools: string[] = [];
  private toolSchemaText = "";

  constructor(options: DecidingAgentModelOptions) {
    super({});
    this.workload = options.workload;
    this.world = options.world;
    this.log = options.log;
    this.stepCap = options.stepCap ?? 25;
    this.maxAsks = options.maxAsks ?? 2;
    this.hiddenWindow = options.hiddenWindow;
  }

  _llmType(): string {
    return "deciding-agent";
  }

  /** A new invocation for user turn `turn` (the same turn again when the user answered the model's question). */
  beginInvocation(turn: number): void {
    this.turn = turn;
    this.callsThisTurn = 0;
    this.pendingAsk = null;
  }

  override bindTools(tools: BindToolsInput[]): this {
    this.boundTools = tools.map((tool) => {
      const named = tool as { name?: unknown; function?: { name?: unknown } };
      return String(named.name ?? named.function?.name ?? "tool");
    });
    this.toolSchemaText = tools.length === 0 ? "" : JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)));
    return this;
  }

  /** For `contextEditingMiddleware`'s `tokenCountMethod: "model"`: the bench's counter, as everyone's. */
  async getNumTokensFromMessages(messages: BaseMessage[]): Promise<{ totalCount: number }> {
    return { totalCount: this.log.tokens.total(messages) };
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const schemaText = this.toolSchemaText;
    if (this.hiddenWindow !== undefined) {
      const tokens = this.log.requestTokens(messages, schemaText);
      if (tokens > this.hiddenWindow.tokens) {
        this.log.record("agent", messages, schemaText, null);
        throw await contextOverflowError(this.hiddenWindow.provider, tokens, this.hiddenWindow.tokens);
      }
    }
    const decision = this.decide(messages);
    const fields = {
      id: `ai_${this.workload.key}_${this.workload.seed}_${this.log.calls.length}`,
      content: decision.content,
      tool_calls: decision.calls.map((call) => {
        this.emitted += 1;
        const id = `call_${this.workload.key}_${this.workload.seed}_${this.emitted}`;
        this.callShows.set(id, call.provides ?? []);
        return { id, name: call.name, args: call.args, type: "tool_call" as const };
      }),
    };
    const input = this.log.requestTokens(messages, schemaText);
    const output = this.log.tokens.of(new AIMessage(fields));
    const message = new AIMessage({ ...fields, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
    this.log.record("agent", messages, schemaText, message);
    return { generations: [{ text: message.text, message }] };
  }

  private decide(messages: readonly BaseMessage[]): Decision {
    const turn = this.workload.turns[this.turn];
    if (turn === undefined) throw new Error(`no user turn ${this.turn} in the ${this.workload.key} workload`);
    this.callsThisTurn += 1;
    const text = requestText(messages);
    const cursor = this.cursors.get(this.turn) ?? 0;
    if (turn.question !== undefined) {
      const answered = text.includes(turn.question.fact);
      this.questions.push({ ...turn.question, turn: this.turn, invocation: this.log.invocation, answered });
      this.cursors.set(this.turn, 1);
      return { content: answered ? `That was ${turn.question.fact}.` : "I'm sorry, I no longer have that in front of me.", calls: [] };
    }
    const step = turn.steps[cursor];
    if (step === undefined) return { content: "That request is done.", calls: [] };
    const missing = step.needs.filter((key) => !text.includes(this.world.info(key).marker));
    const finalAnswer = missing.length === 0 && step.calls.length === 0;
    if (this.callsThisTurn >= this.stepCap && !finalAnswer) {
      this.cappedTurns += 1;
      this.cursors.set(this.turn, turn.steps.length);
      return { content: "I have to stop here: I kept losing track of what I had found. Please ask again if you want me to continue.", calls: [] };
    }
    if (missing.length === 0) {
      this.cursors.set(this.turn, cursor + 1);
      return { content: step.content, calls: [...step.calls] };
    }
    // The user is asked first: the answer comes in a turn of its own, and the rest is fetched after it.
    for (const key of missing) {
      const refetch = this.world.info(key).refetch;
      if (refetch.kind !== "ask") continue;
      const asked = this.asks.get(this.turn) ?? 0;
      if (asked >= this.maxAsks) {
        this.gaveUpTurns += 1;
        this.cursors.set(this.turn, turn.steps.length);
        return { content: "I'm sorry, I can't finish this without that detail.", calls: [] };
      }
      this.asks.set(this.turn, asked + 1);
      this.refetches.ask += 1;
      this.pendingAsk = refetch.restatement;
      return { content: refetch.ask, calls: [] };
    }
    const calls: ToolCallSpec[] = [];
    const seen = new Set<string>();
    for (const key of missing) {
      const call = this.offloadedCopy(messages, key) ?? this.toolAgain(key);
      const identity = `${call.name}\u0000${JSON.stringify(call.args)}`;
      if (seen.has(identity)) continue;
      seen.add(identity);
      if (call.name === OFFLOAD_READER_TOOL_NAME) this.refetches.reader += 1;
      else this.refetches.tool += 1;
      calls.push(call);
    }
    return { content: "Part of what I need is no longer in front of me; getting it again.", calls };
  }

  private toolAgain(key: string): ToolCallSpec {
    const refetch = this.world.info(key).refetch;
    if (refetch.kind !== "tool") throw new Error(`${key} cannot be fetched with a tool`);
    return refetch.call;
  }

  /** A reader call for the newest offloaded result that showed `key`, when the reader is bound and the request shows one. */
  private offloadedCopy(messages: readonly BaseMessage[], key: string): ToolCallSpec | null {
    if (!this.boundTools.includes(OFFLOAD_READER_TOOL_NAME)) return null;
    for (let i = messages.length - 1; i >= 0; i -= 1) {
      const message = messages[i]!;
      if (!ToolMessage.isInstance(message) || !(this.callShows.get(message.tool_call_id) ?? []).includes(key)) continue;
      const match = OFFLOAD_REFERENCE.exec(typeof message.content === "string" ? message.content : "");
      if (match === null) continue;
      // Read the whole result in one call: the reference gives its size.
      return { name: OFFLOAD_READER_TOOL_NAME, args: { key: JSON.parse(match[2]!) as string, length: Number(match[1]) }, provides: [key] };
    }
    return null;
  }
}
