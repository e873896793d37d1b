/**
 * The one summary model every summarizing strategy shares (ours and
 * LangChain's `summarizationMiddleware`), so the comparison is of
 * strategies, not of models. It behaves as a careful real summarizer would
 * within its output limit: a short narrative line, then each identifier it
 * finds in its input (earlier summaries included, so they are folded in),
 * in order of appearance, with the text around it, until the limit. Callers
 * that hold a model to an output limit rebuild it from its constructor
 * fields (`lc_kwargs`) with another `maxTokens`: the copy records into the
 * same call log.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { CallLog } from "./call-log";
import { FACT_PATTERN } from "./facts";
import { requestText } from "./request-text";

/** Fields of {@link ScriptedSummarizer}. */
export interface ScriptedSummarizerFields {
  log: CallLog;
  /** Output limit in tokens. Default 1,024. */
  maxTokens?: number;
}

/** The text kept around an identifier on a long line. */
const SNIPPET_CHARS = 300;

/** The line, or the part of it around `id` when the line is long. */
function snippet(line: string, id: string): string {
  const text = line.trim();
  if (text.length <= SNIPPET_CHARS) return text;
  const at = text.indexOf(id);
  const start = Math.max(0, Math.min(at - SNIPPET_CHARS / 2, text.length - SNIPPET_CHARS));
  return text.slice(start, start + SNIPPET_CHARS).trim();
}

export class ScriptedSummarizer extends BaseChatModel {
  readonly maxTokens: number;
  readonly log: CallLog;
  /** The tool schemas bound to this copy (a summary request that resends the conversation binds the agent's tools). */
  private toolSchemaText = "";

  constructor(fields: ScriptedSummarizerFields) {
    super(fields as never);
    this.log = fields.log;
    this.maxTokens = fields.maxTokens ?? 1_024;
  }

  _llmType(): string {
    return "scripted-summarizer";
  }

  /**
   * A copy with `tools` bound, serialized as the agent's model serializes
   * them, so a request that resends the agent's conversation with its tools
   * shares the agent's cached prefix, as it would at a provider.
   */
  override bindTools(tools: BindToolsInput[]): this {
    const copy = new ScriptedSummarizer({ log: this.log, maxTokens: this.maxTokens }) as this;
    copy.toolSchemaText = tools.length === 0 ? "" : JSON.stringify(tools.map((t) => convertToOpenAITool(t)));
    return copy;
  }

  /** The summary of `messages` (pure: what {@link _generate} answers). */
  summarize(messages: readonly BaseMessage[]): string {
    const text = textToSummarize(messages);
    const tokensOf = (line: string) => this.log.tokens.of(new AIMessage(line));
    const narrative = `Earlier, the user and the assistant exchanged ${messages.length > 1 ? "several messages" : "a conversation"} of about ${Math.round(text.length / 1000)}k characters; the identifiers it mentioned follow, in order, copied exactly.`;
    const kept = [narrative];
    let tokens = tokensOf(narrative);
    const seen = new Set<string>();
    outer: for (const line of text.split("\n")) {
      for (const id of line.match(FACT_PATTERN) ?? []) {
        if (seen.has(id)) continue;
        const piece = snippet(line, id);
        const cost = tokensOf(piece);
        if (tokens + cost > this.maxTokens) break outer;
        // Every identifier the kept text shows is kept.
        for (const shown of piece.match(FACT_PATTERN) ?? []) seen.add(shown);
        kept.push(piece);
        tokens += cost;
      }
    }
    return kept.join("\n");
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = new AIMessage({ content: this.summarize(messages) });
    this.log.record("summary", messages, this.toolSchemaText, message);
    return { generations: [{ text: message.text, message }] };
  }
}

/**
 * What a summary request asks to be summarized. Usually all of it (a transcript, or LangChain's prompt with the
 * messages to summarize). A request that ends by naming a stretch of the conversation before it, by quoting where it
 * begins and where it ends ("from «...» up to, but not including, «...»", as a summary request that resends the
 * whole conversation for the provider's cache does), is read as a model following that instruction would: only the
 * text between the two quotes, the quoted start included.
 */
function textToSummarize(messages: readonly BaseMessage[]): string {
  const last = messages.at(-1);
  const ask = last === undefined ? "" : requestText([last]);
  const stretch = /from [^«]*«([^»]*)»[^«]*?up to, but not including, (?:[^«]*«([^»]*)»|the end)/.exec(ask);
  if (stretch === null) return requestText(messages);
  const before = requestText(messages.slice(0, -1));
  const start = before.indexOf(stretch[1]!.replace(/…$/, ""));
  if (start < 0) return requestText(messages);
  const endQuote = stretch[2];
  const end = endQuote === undefined ? before.length : before.indexOf(endQuote, start + 1);
  return before.slice(start, end < 0 ? before.length : end);
}
