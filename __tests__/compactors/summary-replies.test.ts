/**
 * Issue 31, item 3: a reply without text is no summary. Every kind of reply
 * the providers' integrations build is put to SummarizationCompactor: the
 * reply is made by the provider package's own parser (ChatAnthropic,
 * ChatOpenAI on Chat Completions and the Responses API,
 * ChatGoogleGenerativeAI, each also with `outputVersion: "v1"`) from a raw
 * API response, offline (see `support/provider-wire.ts`); blocks no
 * converter puts in a reply are built by hand. A reply with no text removes
 * nothing and, with `raiseOnFailure`, rejects with reason "empty"; a reply
 * with text beside anything else gives a summary of exactly that text.
 */
import { AIMessage, BaseMessage, HumanMessage } from "@langchain/core/messages";
import { SummarizationCompactor, SummarizationError } from "../../src";
import type { SummaryModel } from "../../src";
import { replyText } from "../../src/messages/reply-text";
import {
  anthropicMessage,
  anthropicModel,
  blockTypes,
  chatCompletion,
  geminiModel,
  openAIModel,
  outputText,
  responsesMessage,
  responsesResult,
} from "../support/provider-wire";
import { answer, human, lengthCounter, system } from "../support/stages";

/** Reasoning text that must never reach a summary. */
const SECRET = "SECRET-REASONING: the user seems tired, keep it short";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";

/** system 10; six turns of 100 (human 50 + answer 50); task 10: 620 tokens under lengthCounter. */
function history(): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let t = 1; t <= 6; t += 1) messages.push(human(50, `Q${t}-`), answer(50, `A${t}-`));
  messages.push(human(10, "TASK"));
  return messages;
}

/** A model under test and how to run what calls it (Gemini's SDK needs the global fetch replaced). */
interface Subject {
  model: SummaryModel;
  offline: <T>(run: () => Promise<T>) => Promise<T>;
}
const direct = <T>(run: () => Promise<T>) => run();

const anthropic = (content: unknown[] | Record<string, unknown>, v1 = false): Subject => ({
  model: anthropicModel(content, v1 ? { outputVersion: "v1" } : {}).model,
  offline: direct,
});
const completions = (message: Record<string, unknown>): Subject => ({ model: openAIModel(chatCompletion(message)).model, offline: direct });
const responses = (output: unknown[], v1 = false): Subject => ({
  model: openAIModel(responsesResult(output), { useResponsesApi: true, ...(v1 ? { outputVersion: "v1" as const } : {}) }).model,
  offline: direct,
});
const gemini = (parts: unknown[], v1 = false): Subject => {
  const { model, offline } = geminiModel(parts, v1 ? { outputVersion: "v1" } : {});
  return { model, offline };
};
/** A reply no provider's converter writes, built as a stored or hand-made message would hold it. */
const handMade = (content: unknown[], fields: Record<string, unknown> = {}): Subject => ({
  model: { invoke: async () => new AIMessage({ content: content as AIMessage["content"], ...fields }) },
  offline: direct,
});

/**
 * A v1 reply as `outputVersion: "v1"` makes it from a provider's reply: the
 * content replaced by core's standard blocks for that provider (its
 * translator, which `contentBlocks` applies), marked `output_version: "v1"`.
 */
const translated = (provider: string, content: unknown[]): Subject =>
  handMade(new AIMessage({ content: content as AIMessage["content"], response_metadata: { model_provider: provider } }).contentBlocks, {
    response_metadata: { output_version: "v1", model_provider: provider },
  });

const reasoningItem = { type: "reasoning", id: "rs_offline", summary: [{ type: "summary_text", text: SECRET }] };
const functionCall = { type: "function_call", id: "fc_offline", call_id: "call_offline", name: "lookup", arguments: '{"q":"x"}', status: "completed" };

/** Replies with no text, with the content block types each provider's parser gives them (checked, so a fake that parses otherwise fails). */
const NO_TEXT: [string, () => Subject, string[]][] = [
  ["Anthropic: thinking only", () => anthropic([{ type: "thinking", thinking: SECRET, signature: "sig" }]), ["thinking"]],
  ["Anthropic: redacted_thinking only", () => anthropic([{ type: "redacted_thinking", data: "EqQBCkYIARgCKkBlob" }]), ["redacted_thinking"]],
  [
    "Anthropic: thinking and redacted_thinking",
    () => anthropic([{ type: "thinking", thinking: SECRET, signature: "sig" }, { type: "redacted_thinking", data: "EqQBCkYIARgCKkBlob" }]),
    ["thinking", "redacted_thinking"],
  ],
  ["Anthropic: a tool_use only", () => anthropic([{ type: "tool_use", id: "toolu_offline", name: "lookup", input: { q: "x" } }]), ["tool_use"]],
  [
    "Anthropic: a server tool's call and result only",
    () =>
      anthropic([
        { type: "server_tool_use", id: "srvtoolu_offline", name: "web_search", input: { query: "x" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_offline", content: [{ type: "web_search_result", url: "https://example.test", title: "x", encrypted_content: "e", page_age: null }] },
      ]),
    ["server_tool_use", "web_search_tool_result"],
  ],
  ["Anthropic: a refusal (no content)", () => anthropic(anthropicMessage([], "refusal")), []],
  ["Anthropic v1: thinking only", () => anthropic([{ type: "thinking", thinking: SECRET, signature: "sig" }], true), ["reasoning"]],
  ["Anthropic v1: redacted_thinking only", () => anthropic([{ type: "redacted_thinking", data: "EqQBCkYIARgCKkBlob" }], true), ["non_standard"]],
  ["OpenAI Chat: a refusal", () => completions({ refusal: "I can't help with that." }), ["string"]],
  [
    "OpenAI Chat: tool calls only",
    () => completions({ tool_calls: [{ id: "call_offline", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] }),
    ["string"],
  ],
  ["OpenAI Chat: audio only", () => completions({ audio: { id: "audio_offline", data: "UklGRiQAAABXQVZF", expires_at: 1_700_000_000, transcript: "spoken words" } }), ["string"]],
  [
    "OpenAI Chat: images only (OpenRouter's image output)",
    () => completions({ content: "", images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }),
    ["text", "image"],
  ],
  ["OpenAI Chat: reasoning_content only (DeepSeek)", () => completions({ content: "", reasoning_content: SECRET }), ["string"]],
  ["OpenAI Chat: a <think> block only", () => completions({ content: `<think>\n${SECRET}\n</think>\n\n` }), ["string"]],
  ["OpenAI Chat: a <think> block cut off", () => completions({ content: `<think>\n${SECRET} and so on` }), ["string"]],
  ["OpenAI Responses: reasoning only", () => responses([reasoningItem]), ["reasoning"]],
  ["OpenAI Responses: a refusal", () => responses([responsesMessage([{ type: "refusal", refusal: "I can't help with that." }])]), []],
  ["OpenAI Responses: a function call only", () => responses([functionCall]), []],
  ["OpenAI Responses: an image generation only", () => responses([{ type: "image_generation_call", id: "ig_offline", status: "completed", result: PNG }]), ["image"]],
  ["OpenAI Responses: a web search call only", () => responses([{ type: "web_search_call", id: "ws_offline", status: "completed" }]), []],
  ["OpenAI Responses: commentary only", () => responses([responsesMessage([outputText("I will now write the summary.")], "commentary")]), ["text"]],
  ["OpenAI Responses v1: reasoning only", () => responses([reasoningItem], true), ["reasoning"]],
  [
    "OpenAI Responses v1: an image generation only",
    () => responses([{ type: "image_generation_call", id: "ig_offline", status: "completed", result: PNG }], true),
    ["image", "non_standard"],
  ],
  ["Gemini: a thought only", () => gemini([{ text: SECRET, thought: true }]), ["thinking"]],
  ["Gemini: an inline image only", () => gemini([{ inlineData: { mimeType: "image/png", data: PNG } }]), ["inlineData"]],
  ["Gemini: a file only", () => gemini([{ fileData: { mimeType: "application/pdf", fileUri: "https://example.test/report.pdf" } }]), ["fileData"]],
  [
    "Gemini: code execution only",
    () => gemini([{ executableCode: { language: "PYTHON", code: "print(1)" } }, { codeExecutionResult: { outcome: "OUTCOME_OK", output: "1" } }]),
    ["executableCode", "codeExecutionResult"],
  ],
  ["Gemini: a function call only", () => gemini([{ functionCall: { name: "lookup", args: { q: "x" } } }]), ["functionCall"]],
  // The package names no model_provider on its replies, so `outputVersion: "v1"` leaves its blocks as they are ...
  ["Gemini, outputVersion v1: a thought only", () => gemini([{ text: SECRET, thought: true }], true), ["thinking"]],
  // ... and core's Gemini translator, which v1 applies to a reply that names its provider, is run by hand.
  ["Gemini v1 (core's translator): a thought only", () => translated("google-genai", [{ type: "thinking", thinking: SECRET, signature: "s" }]), ["reasoning"]],
  [
    "Gemini v1 (core's translator): an inline image and a file",
    () => translated("google-genai", [{ type: "inlineData", inlineData: { mimeType: "image/png", data: PNG } }, { type: "fileData", fileData: { mimeType: "application/pdf", fileUri: "gs://b/r.pdf" } }]),
    ["file", "file"],
  ],
  ["by hand: an image_url block", () => handMade([{ type: "image_url", image_url: { url: "https://example.test/a.png" } }]), ["image_url"]],
  ["by hand: v1 image, file and audio blocks", () => handMade([{ type: "image", url: "https://example.test/a.png" }, { type: "file", fileId: "file-1" }, { type: "audio", data: "UklGR", mimeType: "audio/wav" }]), ["image", "file", "audio"]],
  ["by hand: a reasoning block with a text field", () => handMade([{ type: "reasoning", text: SECRET }]), ["reasoning"]],
  ["by hand: a v1 tool_call block", () => handMade([{ type: "tool_call", id: "c1", name: "lookup", args: {} }], { tool_calls: [{ id: "c1", name: "lookup", args: {} }] }), ["tool_call"]],
];

describe("a summary model's reply without text is no summary", () => {
  test.each(NO_TEXT)("%s: nothing removed; with raiseOnFailure a SummarizationError 'empty'", async (_name, build, blocks) => {
    const { model, offline } = build();
    const reply = await offline(() => model.invoke([new HumanMessage("summarize")]));
    // The provider's parser built the reply this case is about.
    expect(blockTypes(reply)).toEqual(blocks);
    const messages = history();
    const report = await offline(() => new SummarizationCompactor({ model, cache: null }).compactWithReport(messages, 100, lengthCounter));
    expect(report.messages).toBeNull();
    expect(report.removed).toEqual([]);
    expect(report.added).toEqual([]);
    const error = await offline(() => new SummarizationCompactor({ model, raiseOnFailure: true, cache: null }).compact(messages, 100, lengthCounter)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SummarizationError);
    expect((error as SummarizationError).reason).toBe("empty");
    expect((error as SummarizationError).message).toMatch(/^the summary model answered no text/);
    expect((error as Error).message).not.toContain(SECRET);
  });

  test("after a good summary, a reply without text stops the compaction with what the good one achieved", async () => {
    const first = `FIRST${"-".repeat(145)}`;
    const { model, requests } = anthropicModel((call) => (call === 0 ? [{ type: "text", text: first }] : [{ type: "thinking", thinking: SECRET, signature: "s" }]));
    const messages = history();
    // Three turns (300) make room for a summary of 10 under the target 400, but the first summary takes 185: a second is asked for.
    const report = await new SummarizationCompactor({ model, maxSummaryTokens: 10, cache: null }).compactWithReport(messages, 400, lengthCounter);
    expect(requests).toHaveLength(2);
    expect(report.added.map((message) => message.content)).toEqual([`<conversation_summary>\n${first}\n</conversation_summary>`]);
    expect(report.removed).toEqual(messages.slice(1, 7));
    expect(report.messages?.some((message) => String(message.content).includes(SECRET))).toBe(false);
    expect(report.messages).toContain(messages[messages.length - 1]);
  });

  test("the error says what the reply held instead", async () => {
    const { model } = anthropicModel([{ type: "thinking", thinking: SECRET, signature: "sig" }, { type: "tool_use", id: "toolu_1", name: "lookup", input: {} }]);
    await expect(new SummarizationCompactor({ model, raiseOnFailure: true, cache: null }).compact(history(), 100, lengthCounter)).rejects.toThrow(
      "the summary model answered no text (its reply held: thinking, tool_use, tool calls)",
    );
  });
});

/** Replies with text beside other blocks: the summary is that text, exactly. */
const WITH_TEXT: [string, () => Subject, string][] = [
  ["Anthropic: thinking, then text", () => anthropic([{ type: "thinking", thinking: SECRET, signature: "sig" }, { type: "text", text: "## Objective\n- ship v2" }]), "## Objective\n- ship v2"],
  [
    "Anthropic: redacted thinking, then text split at its citations",
    () =>
      anthropic([
        { type: "redacted_thinking", data: "EqQBCkYIARgCKkBlob" },
        { type: "text", text: "The fix is " },
        { type: "text", text: "in PR 42", citations: [{ type: "char_location", cited_text: "PR 42", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 5 }] },
        { type: "text", text: "." },
      ]),
    "The fix is in PR 42.",
  ],
  ["Anthropic v1: thinking, then text", () => anthropic([{ type: "thinking", thinking: SECRET, signature: "sig" }, { type: "text", text: "v1 summary" }], true), "v1 summary"],
  ["OpenAI Chat: text after a <think> block", () => completions({ content: `<think>${SECRET}</think>\n\nchat summary` }), "chat summary"],
  ["OpenAI Chat: text beside reasoning_content", () => completions({ content: "deepseek summary", reasoning_content: SECRET }), "deepseek summary"],
  ["OpenAI Responses: reasoning, then a message", () => responses([reasoningItem, responsesMessage([outputText("responses summary")])]), "responses summary"],
  [
    "OpenAI Responses: commentary, then the final answer",
    () => responses([responsesMessage([outputText("Let me write it.")], "commentary"), reasoningItem, responsesMessage([outputText("final summary")], "final_answer")]),
    "final summary",
  ],
  ["OpenAI Responses v1: reasoning, then a message", () => responses([reasoningItem, responsesMessage([outputText("v1 responses summary")])], true), "v1 responses summary"],
  ["Gemini: a thought, then text", () => gemini([{ text: SECRET, thought: true }, { text: "gemini summary" }]), "gemini summary"],
  ["Gemini: text and an inline image", () => gemini([{ text: "gemini with image" }, { inlineData: { mimeType: "image/png", data: PNG } }]), "gemini with image"],
  [
    "Gemini v1 (core's translator): a thought, then text",
    () => translated("google-genai", [{ type: "thinking", thinking: SECRET }, { type: "text", text: "gemini v1 summary" }]),
    "gemini v1 summary",
  ],
  ["by hand: text beside image_url, audio and a tool call", () => handMade([{ type: "image_url", image_url: "https://example.test/a.png" }, { type: "text", text: "hand summary" }, { type: "audio", data: "UklGR" }]), "hand summary"],
];

describe("a reply with text beside other blocks: only the text is the summary", () => {
  test.each(WITH_TEXT)("%s", async (_name, build, text) => {
    const { model, offline } = build();
    const messages = history();
    const report = await offline(() => new SummarizationCompactor({ model, cache: null }).compactWithReport(messages, 400, lengthCounter));
    expect(report.added).toHaveLength(1);
    expect(report.added[0]!.content).toBe(`<conversation_summary>\n${text}\n</conversation_summary>`);
    expect(report.removed.length).toBeGreaterThan(0);
  });
});

describe("replyText: the rules the cases above rest on", () => {
  const reply = (content: unknown) => new AIMessage({ content: content as AIMessage["content"] });
  test("string content as it is; text blocks and bare strings joined without a separator", () => {
    expect(replyText(reply("plain"))).toBe("plain");
    expect(replyText(reply([{ type: "text", text: "a" }, "b", { type: "text", text: "c" }]))).toBe("abc");
    expect(replyText(reply([]))).toBe("");
  });
  test("a text block whose text is not a string, or whose type is not text, is not text", () => {
    expect(replyText(reply([{ type: "text", text: 42 }, { type: "text" }, { type: "thinking", thinking: "t", text: "x" }, { type: "output_text", text: "o" }, null, 7]))).toBe("");
  });
  test("commentary is not the answer; a final answer or an unmarked text is", () => {
    expect(replyText(reply([{ type: "text", text: "c", phase: "commentary" }, { type: "text", text: "f", phase: "final_answer" }, { type: "text", text: "u" }]))).toBe("fu");
  });
  test("only a <think> block that opens the text is reasoning; one later in the text is text", () => {
    expect(replyText(reply("  <think>r</think>answer"))).toBe("answer");
    expect(replyText(reply("<think>r</think>a <think>b</think>"))).toBe("a <think>b</think>");
    expect(replyText(reply("about the <think> tag"))).toBe("about the <think> tag");
    expect(replyText(reply("<think>never closed"))).toBe("");
    expect(replyText(reply([{ type: "text", text: "<think>r</think>" }, { type: "text", text: "joined" }]))).toBe("joined");
  });
});

describe("the 'empty' error names what the reply held", () => {
  const held = async (content: unknown, fields: Record<string, unknown> = {}) => {
    const model: SummaryModel = { invoke: async () => new AIMessage({ content: content as AIMessage["content"], ...fields }) };
    const error = await new SummarizationCompactor({ model, raiseOnFailure: true, cache: null }).compact(history(), 100, lengthCounter).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "SummarizationError", reason: "empty" });
    return (error as Error).message;
  };
  test.each([
    ["   ", "the summary model answered no text"],
    ["<think>r</think>", "the summary model answered no text (its reply held: reasoning in <think>)"],
    [[{ type: "text", text: "" }, { type: "image", url: "u" }], "the summary model answered no text (its reply held: empty text, image)"],
    [[{ type: "text", text: "I will", phase: "commentary" }], "the summary model answered no text (its reply held: commentary)"],
    [[" ", { kind: "x" }, null], "the summary model answered no text (its reply held: empty text, an untyped block, null)"],
  ])("%j: %s", async (content, message) => {
    expect(await held(content)).toBe(message);
  });
  test("tool calls are named beside the blocks", async () => {
    expect(await held([], { tool_calls: [{ id: "c", name: "lookup", args: {} }] })).toBe("the summary model answered no text (its reply held: tool calls)");
  });
});
