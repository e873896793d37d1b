import type { BaseMessage } from "@langchain/core/messages";

/**
 * The answer a model gave, as text: what a caller may use of its reply.
 *
 * Only text counts. A reply's content is a string, or blocks in the shape of
 * the provider that wrote it; every integration puts the answer's text in
 * `{ type: "text", text }` blocks (Anthropic; OpenAI's Responses API, where
 * `output_text` becomes one; Gemini's text parts; `@langchain/core`'s v1
 * standard blocks) and everything else in blocks of other types: reasoning
 * (`thinking`, `redacted_thinking`, `reasoning`), images, files, audio, tool
 * calls, server tool results. A refusal never reaches the content at all
 * (OpenAI's integration keeps it in `additional_kwargs.refusal`). So a reply
 * of reasoning alone, or of an image, has no text, and reasoning never
 * becomes part of an answer.
 *
 * Two kinds of text are not the answer either:
 * - a text block marked `phase: "commentary"` (OpenAI's Responses API labels
 *   a model's intermediate remarks so, its answer `"final_answer"`);
 * - a `<think>…</think>` block that opens the text, where models served
 *   behind OpenAI-compatible APIs (DeepSeek R1, Qwen and others, through
 *   Ollama, vLLM or Groq's raw format) write their reasoning; one that is
 *   never closed was cut off, so the whole text is reasoning.
 *
 * Text blocks are joined as they stand, without a separator: providers split
 * one passage into several blocks (Anthropic at each citation, a stream at
 * each chunk). This is not how a transcript shows a message to a summary
 * model (`renderTranscript` keeps placeholders of what is not text, which
 * the summary then mentions); it reads an answer.
 */
export function replyText(reply: BaseMessage): string {
  const content: unknown = reply.content;
  let text = "";
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      if (typeof block === "string") text += block;
      else if (isAnswerTextBlock(block)) text += block.text;
    }
  }
  return withoutLeadingReasoning(text);
}

/** A text block that is part of the answer (not an intermediate remark). */
function isAnswerTextBlock(block: unknown): block is { type: "text"; text: string } {
  if (typeof block !== "object" || block === null) return false;
  const fields = block as { type?: unknown; text?: unknown; phase?: unknown };
  return fields.type === "text" && typeof fields.text === "string" && fields.phase !== "commentary";
}

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";

/** `text` without the `<think>…</think>` block it opens with, if any; nothing when that block is never closed. */
function withoutLeadingReasoning(text: string): string {
  const start = text.length - text.trimStart().length;
  if (!text.startsWith(THINK_OPEN, start)) return text;
  const close = text.indexOf(THINK_CLOSE, start + THINK_OPEN.length);
  return close === -1 ? "" : text.slice(close + THINK_CLOSE.length);
}

/**
 * What a reply held instead of text, for an error that says why it is no
 * answer: the types of its content blocks, and its tool calls.
 */
export function replyKinds(reply: BaseMessage): string[] {
  const kinds = new Set<string>();
  const content: unknown = reply.content;
  if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      if (typeof block === "string") kinds.add(textKind(block));
      else if (typeof block !== "object" || block === null) kinds.add(String(block));
      else {
        const { type, text, phase } = block as { type?: unknown; text?: unknown; phase?: unknown };
        if (type === "text" && phase === "commentary") kinds.add("commentary");
        else if (type === "text" && typeof text === "string") kinds.add(textKind(text));
        else kinds.add(typeof type === "string" ? type : "an untyped block");
      }
    }
  } else if (typeof content === "string" && content.trim() !== "") kinds.add(textKind(content));
  const calls = (reply as { tool_calls?: unknown }).tool_calls;
  if (Array.isArray(calls) && calls.length > 0) kinds.add("tool calls");
  return [...kinds];
}

/** What a text that is no answer holds: nothing, or reasoning in `<think>`. */
function textKind(text: string): string {
  return text.trim() === "" ? "empty text" : withoutLeadingReasoning(text).trim() === "" ? "reasoning in <think>" : "text";
}
