import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, BaseMessage, SystemMessage } from "@langchain/core/messages";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { AIMessageFields } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** One request the scripted model received: the messages and the names of the tools bound. */
export interface ScriptedCall {
  messages: BaseMessage[];
  tools: string[];
  /** The bound tools' schemas as JSON (empty when none were bound). */
  schemaText: string;
}

/** Decides the reply to one request; `call` counts from 0 across the model and its bound copies. */
export type ScriptedReply = (messages: BaseMessage[], call: number) => AIMessageFields | string;

/** Options of {@link ScriptedAgentModel}. */
export interface ScriptedAgentModelOptions {
  reply: ScriptedReply;
  /**
   * When given, every reply carries `usage_metadata` as a provider would
   * report it: input tokens = this count of the messages received plus the
   * tool schemas, output tokens = the count of the reply.
   */
  usage?: (messages: BaseMessage[]) => number;
  /** Reply ids are `${idPrefix}-${call}`; give two models on one thread different prefixes. Default `"scripted"`. */
  idPrefix?: string;
}

/**
 * An offline chat model for agents: it replies by script, supports
 * `bindTools` (as `createAgent` requires), and records every request, so a
 * test or an example can show exactly what the model was sent.
 */
export class ScriptedAgentModel extends BaseChatModel {
  readonly calls: ScriptedCall[];
  private readonly options: ScriptedAgentModelOptions;
  private readonly boundTools: string[];
  private readonly toolSchemaText: string;

  constructor(options: ScriptedAgentModelOptions, shared?: { calls: ScriptedCall[]; tools: string[]; toolSchemaText: string }) {
    super({});
    this.options = options;
    this.calls = shared?.calls ?? [];
    this.boundTools = shared?.tools ?? [];
    this.toolSchemaText = shared?.toolSchemaText ?? "";
  }

  _llmType(): string {
    return "scripted-agent";
  }

  /** The request size as this model reports it (input tokens), or `undefined` without a `usage` counter. */
  requestTokens(call: ScriptedCall): number | undefined {
    if (!this.options.usage) return undefined;
    const schemas = call.schemaText === "" ? 0 : this.options.usage([new SystemMessage(call.schemaText)]);
    return this.options.usage(call.messages) + schemas;
  }

  /** A copy bound to `tools`; it records into the same call list. */
  override bindTools(tools: BindToolsInput[]): ScriptedAgentModel {
    const names = tools.map((tool) => {
      const named = tool as { name?: unknown; function?: { name?: unknown } };
      return String(named.name ?? named.function?.name ?? "tool");
    });
    // The schemas as a provider receives them, so reported usage counts what a real request would carry.
    const schemas = JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)));
    return new ScriptedAgentModel(this.options, { calls: this.calls, tools: names, toolSchemaText: schemas });
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const call = this.calls.length;
    const record: ScriptedCall = { messages: [...messages], tools: [...this.boundTools], schemaText: this.toolSchemaText };
    this.calls.push(record);
    const scripted = this.options.reply(messages, call);
    const fields: AIMessageFields = typeof scripted === "string" ? { content: scripted } : { ...scripted };
    const id = fields.id ?? `${this.options.idPrefix ?? "scripted"}-${call}`;
    let message = new AIMessage({ ...fields, id });
    if (this.options.usage) {
      const input = this.requestTokens(record)!;
      const output = this.options.usage([message]);
      message = new AIMessage({
        ...fields,
        id,
        usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      });
    }
    return { generations: [{ text: message.text, message }] };
  }
}
