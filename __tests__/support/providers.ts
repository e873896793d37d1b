/**
 * Provider validity, checked offline on what each provider integration
 * would send: LangChain's own converters for OpenAI (Chat Completions and
 * Responses), Anthropic and Google Gemini, with the ordering rules each API
 * enforces checked on the converted payloads, plus a strict check on the
 * LangChain messages themselves.
 *
 * The OpenAI/Anthropic checks are the ones of `properties.test.ts` property 9;
 * Gemini is added here. Its converter is not exported by
 * `@langchain/google-genai`, so it is loaded from the package's own file.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";
import { dirname, join } from "node:path";
import { assertProviderValid } from "./conversations";

type GeminiPart = { text?: string; functionCall?: { name: string }; functionResponse?: { name: string } };
type GeminiContent = { role: string; parts: GeminiPart[] };
type GeminiConverter = (messages: BaseMessage[], isMultimodal: boolean, systemAsHuman: boolean, model: string) => GeminiContent[];

// The package's `exports` name only its root, so the converter's file is required by its path next to the root.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { convertBaseMessagesToContent } = require(join(dirname(require.resolve("@langchain/google-genai")), "utils", "common.cjs")) as {
  convertBaseMessagesToContent: GeminiConverter;
};

/** Chat Completions rules on the converted request. */
export function assertOpenAICompletions(params: ReadonlyArray<Record<string, unknown>>): void {
  let leading = true;
  let open: Set<string> | null = null;
  params.forEach((param, i) => {
    const role = param.role as string;
    if (role === "system" || role === "developer") {
      if (!leading) throw new Error(`openai: ${role} message at ${i} after the start`);
    } else leading = false;
    if (role === "tool") {
      const id = param.tool_call_id as string;
      if (open === null || !open.has(id)) throw new Error(`openai: messages with role 'tool' at ${i} (${id}) must answer a preceding 'tool_calls'`);
      open.delete(id);
      return;
    }
    if (open !== null && open.size > 0) throw new Error(`openai: tool_calls ${[...open].join(",")} not answered before message ${i}`);
    open = null;
    const calls = param.tool_calls as { id: string }[] | undefined;
    if (role === "assistant" && calls && calls.length > 0) open = new Set(calls.map((call) => call.id));
  });
  if (open !== null && (open as Set<string>).size > 0) throw new Error("openai: the request ends with unanswered tool_calls");
}

/** Responses API rules: every function_call_output answers an earlier function_call, and every call is answered. */
export function assertOpenAIResponses(items: ReadonlyArray<Record<string, unknown>>): void {
  const called = new Set<string>();
  const answered = new Set<string>();
  items.forEach((item, i) => {
    if (item.type === "function_call") called.add(item.call_id as string);
    if (item.type === "function_call_output") {
      if (!called.has(item.call_id as string)) throw new Error(`responses: function_call_output ${String(item.call_id)} at ${i} without its call`);
      answered.add(item.call_id as string);
    }
  });
  for (const id of called) if (!answered.has(id)) throw new Error(`responses: function_call ${id} without output`);
}

type AnthropicBlock = { type: string; id?: string; tool_use_id?: string };

/** Anthropic rules: tool_use ids have tool_result blocks immediately after, and results answer the message before. */
export function assertAnthropic(payload: { messages: { role: string; content: string | AnthropicBlock[] }[] }): void {
  const { messages } = payload;
  if (messages.length > 0 && messages[0]!.role !== "user") throw new Error(`anthropic: the first message is ${messages[0]!.role}`);
  const blocksOf = (i: number): AnthropicBlock[] => {
    const content = messages[i]?.content;
    return Array.isArray(content) ? content : [];
  };
  messages.forEach((message, i) => {
    if (message.role === "system") throw new Error(`anthropic: system message at ${i} inside the conversation`);
    const uses = blocksOf(i).filter((b) => b.type === "tool_use").map((b) => b.id!);
    if (message.role === "assistant" && uses.length > 0) {
      const next = messages[i + 1];
      const results = new Set(blocksOf(i + 1).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!));
      const missing = uses.filter((id) => !results.has(id));
      if (next?.role !== "user" || missing.length > 0) {
        throw new Error(`anthropic: tool_use ids were found without tool_result blocks immediately after: ${missing.join(",")}`);
      }
    }
    const results = blocksOf(i).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!);
    if (results.length > 0) {
      const before = new Set(blocksOf(i - 1).filter((b) => b.type === "tool_use").map((b) => b.id!));
      const stray = results.filter((id) => !before.has(id));
      if (message.role !== "user" || messages[i - 1]?.role !== "assistant" || stray.length > 0) {
        throw new Error(`anthropic: tool_result blocks ${stray.join(",")} at ${i} do not answer the tool_use blocks of the message before`);
      }
    }
  });
}

/**
 * Gemini rules on the converted contents: a model turn's function calls are
 * answered by function responses (as many, by name) before any other turn,
 * and no function response stands without a call before it.
 */
export function assertGemini(contents: readonly GeminiContent[]): void {
  let open: string[] = [];
  contents.forEach((content, i) => {
    const responses = content.parts.filter((p) => p.functionResponse).map((p) => p.functionResponse!.name);
    const calls = content.parts.filter((p) => p.functionCall).map((p) => p.functionCall!.name);
    if (responses.length > 0) {
      for (const name of responses) {
        const at = open.indexOf(name);
        if (at < 0) throw new Error(`gemini: functionResponse ${name} at ${i} answers no open functionCall`);
        open.splice(at, 1);
      }
      return;
    }
    if (open.length > 0) throw new Error(`gemini: functionCall ${open.join(",")} not answered before content ${i}`);
    if (content.role === "model") open = calls;
  });
  if (open.length > 0) throw new Error(`gemini: the request ends with unanswered functionCall ${open.join(",")}`);
}

/**
 * What a Gemini caller would send for the same conversation: one system
 * instruction (the leading block merged), remote images as text (the
 * converter takes data URLs only), and AI messages without Anthropic's
 * `tool_use` content blocks (the Gemini converter renders those as calls next
 * to `tool_calls`, twice over). Neither touches what a compaction decides.
 */
function forGemini(messages: readonly BaseMessage[]): BaseMessage[] {
  let end = 0;
  while (end < messages.length && messages[end]!.type === "system") end += 1;
  const text = messages.slice(0, end).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
  const rest = messages.slice(end).map((m) => {
    if (!Array.isArray(m.content)) return m;
    if (m.type === "human") {
      // The converter takes images as data URLs only; a remote image is text to it.
      const content = (m.content as { type?: string; image_url?: { url?: string } }[]).map((block) =>
        block.type === "image_url" && !String(block.image_url?.url ?? "").startsWith("data:") ? { type: "text", text: "[image]" } : block,
      );
      return new HumanMessage({ content: content as never, ...(m.id === undefined ? {} : { id: m.id }) });
    }
    if (!AIMessage.isInstance(m)) return m;
    const content = (m.content as { type?: string }[]).filter((block) => block.type !== "tool_use");
    return new AIMessage({ content: content as never, tool_calls: m.tool_calls ?? [], ...(m.id === undefined ? {} : { id: m.id }) });
  });
  return end === 0 ? rest : [new SystemMessage(text), ...rest];
}

/** Strict ordering on LangChain messages: the shared checker, and a user message first after the system block. */
export function assertStrictOrdering(messages: readonly BaseMessage[]): void {
  assertProviderValid(messages);
  const first = messages.find((m) => m.type !== "system");
  if (first !== undefined && first.type !== "human") throw new Error(`the first non-system message is ${first.type}`);
}

/** Throws unless `messages` passes the strict check and every provider's converter and rules. */
export function assertConvertsEverywhere(messages: BaseMessage[]): void {
  assertStrictOrdering(messages);
  assertOpenAICompletions(convertMessagesToCompletionsMessageParams({ messages, model: "gpt-4o" }) as unknown as Record<string, unknown>[]);
  assertOpenAIResponses(convertMessagesToResponsesInput({ messages, model: "gpt-4o", zdrEnabled: false }) as unknown as Record<string, unknown>[]);
  assertAnthropic(convertPromptToAnthropic(new ChatPromptValue(messages)) as unknown as Parameters<typeof assertAnthropic>[0]);
  assertGemini(convertBaseMessagesToContent(forGemini(messages), true, false, "gemini-2.0-flash"));
}
