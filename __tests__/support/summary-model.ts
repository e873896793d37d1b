/**
 * A scripted summary model for the summarization tests: a real
 * `BaseChatModel` whose every reply is decided by a script, recording what
 * it was sent and with which options (run name, tags, signal).
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { AIMessage, AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** What the model does on its `call`-th request: answer text, throw, or never answer (until its signal aborts, if `listen`). */
export type SummaryBehaviour = string | Error | { hang: true; listen: boolean };

export interface RecordedCall {
  messages: BaseMessage[];
  runName: string | undefined;
  tags: string[] | undefined;
  signal: AbortSignal | undefined;
}

export class ScriptedSummaryModel extends BaseChatModel {
  readonly calls: RecordedCall[] = [];
  constructor(private readonly script: (call: number, messages: BaseMessage[]) => SummaryBehaviour) {
    super({});
  }

  _llmType(): string {
    return "scripted-summary";
  }

  override async invoke(input: BaseLanguageModelInput, options?: BaseChatModelCallOptions): Promise<AIMessageChunk> {
    this.calls.push({ messages: input as BaseMessage[], runName: options?.runName, tags: options?.tags, signal: options?.signal });
    return super.invoke(input, options);
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const behaviour = this.script(this.calls.length - 1, messages);
    if (behaviour instanceof Error) throw behaviour;
    if (typeof behaviour === "object") {
      await new Promise<never>((_, reject) => {
        if (behaviour.listen) options.signal?.addEventListener("abort", () => reject(new Error("the request was aborted")), { once: true });
      });
    }
    const text = behaviour as string;
    return { generations: [{ text, message: new AIMessage(text) }] };
  }
}

/** The transcript a call was asked to summarize (its user message). */
export function transcriptOf(call: RecordedCall): string {
  return String(call.messages[1]?.content ?? "");
}
