import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseChatModelParams, BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { AIMessageFields, BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { approximateTokenCounter } from "../counting/approximate";
import { describeValue } from "../errors";

/** One request a {@link ScriptedChatModel} received. */
export interface ScriptedCall {
  /** The messages exactly as received (a copy of the array, the same message objects). */
  messages: BaseMessage[];
  /** Names of the tools bound when the request was made. */
  tools: string[];
  /** The bound tools' schemas as a provider receives them, as JSON (`""` when none were bound). */
  schemaText: string;
}

/** A tool call in a scripted reply; its `id` is made up when left out. */
export interface ScriptedToolCall {
  /** The tool to call, by name. */
  name: string;
  /** The call's arguments. */
  args: Record<string, unknown>;
  /** The call's id; default `${idPrefix}-${call}-${k}`. */
  id?: string;
}

/** What the model answers to one request: text, or message fields (content, tool calls, ...). */
export type ScriptedReply =
  | string
  | (Omit<AIMessageFields, "tool_calls"> & {
      /** The tool calls the reply makes (each `id` made up when left out). */
      tool_calls?: ScriptedToolCall[];
    });

/** Decides the reply to one request; `call` counts requests from 0, across the model and its bound copies. */
export type ScriptedReplyFunction = (messages: BaseMessage[], call: number) => ScriptedReply;

/** Options of {@link ScriptedChatModel}. */
export interface ScriptedChatModelOptions {
  /** The script: the reply to each request, decided from what the model was sent. */
  reply: ScriptedReplyFunction;
  /**
   * Every reply reports `usage_metadata` as a provider does: input tokens =
   * this counter over the messages received plus the bound tool schemas,
   * output tokens = the counter over the reply. Default
   * `approximateTokenCounter`; `false` reports no usage.
   */
  usage?: ((messages: BaseMessage[]) => number) | false;
  /** Reply ids are `${idPrefix}-${call}`, tool call ids `${idPrefix}-${call}-${k}` (when the script gives none). Default `"scripted"`. */
  idPrefix?: string;
}

/** What a model and its bound copies share: the record of requests. */
interface Shared {
  calls: ScriptedCall[];
  tools: string[];
  schemaText: string;
}

/**
 * An offline chat model for trying compaction out and for tests: it answers
 * from a script (text or tool calls, decided from the messages it is sent),
 * supports `bindTools` as `createAgent` and `createReactAgent` require,
 * reports token usage as a provider does, and records every request, so you
 * can see exactly what a model would have been sent and how large it was.
 * `@langchain/core`'s fake models never call a tool, so they never show an
 * agent's context growing.
 *
 * @example
 * ```ts
 * // Calls `read_file` three times per user message, then answers.
 * const model = new ScriptedChatModel({
 *   reply: (messages, call) =>
 *     messages.at(-1)?.type === "tool" && call % 4 === 3
 *       ? "Done."
 *       : { content: "", tool_calls: [{ name: "read_file", args: { path: `src/${call}.ts` } }] },
 * });
 * ```
 */
export class ScriptedChatModel extends BaseChatModel {
  /** Every request received by this model and its bound copies, in order. */
  readonly calls: ScriptedCall[];
  private readonly script: ScriptedChatModelOptions;
  private readonly tools: string[];
  private readonly schemaText: string;

  /** A model that answers from `options.reply`, with a record of requests of its own. */
  constructor(options: ScriptedChatModelOptions);
  /**
   * A bound copy, recording into `shared` (made by {@link ScriptedChatModel.bindTools}).
   *
   * @internal
   */
  constructor(options: ScriptedChatModelOptions, shared: Shared);
  constructor(options: ScriptedChatModelOptions, shared?: Shared) {
    super({} as BaseChatModelParams);
    if (typeof options !== "object" || options === null || typeof options.reply !== "function") {
      throw new TypeError(`ScriptedChatModel needs options with a \`reply\` function, got ${describeValue(options)}`);
    }
    if (options.usage !== undefined && options.usage !== false && typeof options.usage !== "function") {
      throw new TypeError(`\`usage\` must be a token counter function or false, got ${describeValue(options.usage)}`);
    }
    this.script = options;
    this.calls = shared?.calls ?? [];
    this.tools = shared?.tools ?? [];
    this.schemaText = shared?.schemaText ?? "";
  }

  /** The model type LangChain records for a run: `"scripted"`. */
  _llmType(): string {
    return "scripted";
  }

  /** A copy bound to `tools` (it records into the same `calls`). */
  override bindTools(tools: BindToolsInput[]): ScriptedChatModel {
    const names = tools.map((tool) => {
      const named = tool as { name?: unknown; function?: { name?: unknown } };
      return String(named.name ?? named.function?.name ?? "tool");
    });
    const schemaText = tools.length === 0 ? "" : JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)));
    return new ScriptedChatModel(this.script, { calls: this.calls, tools: names, schemaText });
  }

  /** The input tokens this model reports for a request (its messages plus its tool schemas); `undefined` with `usage: false`. */
  requestTokens(call: ScriptedCall): number | undefined {
    const counter = this.counter();
    if (counter === undefined) return undefined;
    return counter(call.messages) + (call.schemaText === "" ? 0 : counter([new SystemMessage(call.schemaText)]));
  }

  /** Records the request and answers it from the script (LangChain calls it; use `invoke`). */
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const call = this.calls.length;
    const record: ScriptedCall = { messages: [...messages], tools: [...this.tools], schemaText: this.schemaText };
    this.calls.push(record);
    const prefix = this.script.idPrefix ?? "scripted";
    const scripted = this.script.reply(messages, call);
    const { tool_calls: calls, ...rest } = typeof scripted === "string" ? { content: scripted } : scripted;
    const fields: AIMessageFields = {
      content: "",
      ...rest,
      id: rest.id ?? `${prefix}-${call}`,
      ...(calls === undefined
        ? {}
        : { tool_calls: calls.map((toolCall, k) => ({ name: toolCall.name, args: toolCall.args, id: toolCall.id ?? `${prefix}-${call}-${k}`, type: "tool_call" as const })) }),
    };
    const counter = this.counter();
    let message = new AIMessage(fields);
    if (counter !== undefined) {
      const input = this.requestTokens(record)!;
      const output = counter([message]);
      message = new AIMessage({ ...fields, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
    }
    return { generations: [{ text: message.text, message }] };
  }

  private counter(): ((messages: BaseMessage[]) => number) | undefined {
    const { usage } = this.script;
    if (usage === false) return undefined;
    return usage ?? approximateTokenCounter;
  }
}
