import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { AIMessageFields } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";

/** Decides the reply to the `call`-th request (counted from 0 across bound copies). */
export type ScriptedTurn = (messages: BaseMessage[], call: number) => AIMessageFields | string;

/** Options of {@link ScriptedChatModel}. */
export interface ScriptedChatModelOptions {
  /** The script. */
  reply: ScriptedTurn;
  /**
   * When given, every reply carries `usage_metadata` as a provider reports
   * it: input tokens = this count of the messages plus the bound tool
   * schemas, output tokens = the count of the reply.
   */
  usage?: (messages: BaseMessage[]) => number;
}

interface Shared {
  requests: BaseMessage[][];
  schemaText: string;
}

/**
 * An offline chat model that replies by script, accepts `bindTools` and
 * records every request it receives, so examples and tests can show what the
 * model was actually sent.
 */
export class ScriptedChatModel extends BaseChatModel {
  /** Every request, in order: the message list exactly as received (a copy of the array, the same messages). */
  readonly requests: BaseMessage[][];
  private readonly script: ScriptedChatModelOptions;
  private readonly schemaText: string;

  constructor(options: ScriptedChatModelOptions, shared?: Shared) {
    super({});
    this.script = options;
    this.requests = shared?.requests ?? [];
    this.schemaText = shared?.schemaText ?? "";
  }

  _llmType(): string {
    return "scripted-chat";
  }

  /** The input tokens this model reports for a request, or `undefined` without a `usage` counter. */
  inputTokens(messages: BaseMessage[]): number | undefined {
    const { usage } = this.script;
    if (!usage) return undefined;
    return usage(messages) + (this.schemaText === "" ? 0 : usage([new SystemMessage(this.schemaText)]));
  }

  /** A copy bound to `tools` that records into the same request list. */
  override bindTools(tools: BindToolsInput[]): ScriptedChatModel {
    const schemaText = JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)));
    return new ScriptedChatModel(this.script, { requests: this.requests, schemaText });
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const call = this.requests.length;
    this.requests.push([...messages]);
    const scripted = this.script.reply(messages, call);
    const fields: AIMessageFields = typeof scripted === "string" ? { content: scripted } : scripted;
    const input = this.inputTokens(messages);
    let message = new AIMessage(fields);
    if (input !== undefined) {
      const output = this.script.usage!([message]);
      message = new AIMessage({ ...fields, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
    }
    return { generations: [{ text: message.text, message }] };
  }
}
