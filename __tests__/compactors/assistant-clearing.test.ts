/**
 * Pruning's `clearThinking` and `clearToolInputs`: older assistant messages
 * lose their reasoning and their large call inputs, in each provider's shape
 * as the provider's own parser builds it from a raw API response, and the
 * request the provider's converter builds from the result stays valid: every
 * call keeps its id, name and result, every input is still a JSON object,
 * and the tool-use turn in progress keeps its signed thinking and its inputs.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";
import { CLEARED_TOOL_INPUT, CompactionPipeline, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import { anthropicModel, chatCompletion, openAIModel, responsesResult } from "../support/provider-wire";
import { assertAnthropic, assertConvertsEverywhere, assertOpenAICompletions, assertOpenAIResponses, assertStrictOrdering } from "../support/providers";

const BIG = "line of the file being written\n".repeat(120); // ~900 tokens by the estimate
const SMALL = "src/a.ts";
const REASONING = "Let me think about which file to touch next and why. ".repeat(30);

/** Three tool-calling turns: write (big input), read (small input), write (big input, the turn in progress). */
const CALLS = [
  { tool: "write_file", args: { path: "a.ts", content: BIG } },
  { tool: "read_file", args: { path: SMALL } },
  { tool: "write_file", args: { path: "b.ts", content: BIG } },
];

/** system, task, then each call's message (from `reply(i)`, as the provider's parser builds it) and a short result. */
async function run(reply: (call: number) => Promise<AIMessage>): Promise<BaseMessage[]> {
  const messages: BaseMessage[] = [new SystemMessage("You edit files."), new HumanMessage("Write a.ts and b.ts.")];
  for (let i = 0; i < CALLS.length; i += 1) {
    const message = await reply(i);
    messages.push(message, new ToolMessage({ tool_call_id: message.tool_calls![0]!.id!, name: CALLS[i]!.tool, content: "ok" }));
  }
  return messages;
}
const AI_AT = [2, 4, 6];

async function anthropicRun() {
  const { model } = anthropicModel((call) => [
    { type: "thinking", thinking: REASONING, signature: `sig-${call}` },
    { type: "tool_use", id: `toolu_${call}`, name: CALLS[call]!.tool, input: CALLS[call]!.args },
  ]);
  return run(async () => (await model.invoke([new HumanMessage("go")])) as AIMessage);
}

async function responsesRun() {
  const { model } = openAIModel(
    (call) =>
      responsesResult([
        { type: "reasoning", id: `rs_${call}`, summary: [{ type: "summary_text", text: REASONING }], encrypted_content: `enc-${call}` },
        { type: "function_call", id: `fc_${call}`, call_id: `call_${call}`, name: CALLS[call]!.tool, arguments: JSON.stringify(CALLS[call]!.args), status: "completed" },
      ]),
    { useResponsesApi: true },
  );
  return run(async () => (await model.invoke([new HumanMessage("go")])) as AIMessage);
}

async function completionsRun() {
  const { model } = openAIModel((call) =>
    chatCompletion({ tool_calls: [{ id: `call_${call}`, type: "function", function: { name: CALLS[call]!.tool, arguments: JSON.stringify(CALLS[call]!.args) } }] }),
  );
  return run(async () => (await model.invoke([new HumanMessage("go")])) as AIMessage);
}

const clearing = () => new ToolResultPruningCompactor({ clearThinking: true, clearToolInputs: { minTokens: 100 }, cache: null });
const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

describe("clearing older reasoning and large tool inputs", () => {
  test("Anthropic: older turns lose their thinking and large inputs; the turn in progress keeps its signed thinking; the request is valid", async () => {
    const messages = await anthropicRun();
    const report = await clearing().compactWithReport(messages, 100);
    const out = report.messages!;
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[2], messages[4]]);
    expect(out[6]).toBe(messages[6]);
    const payload = convertPromptToAnthropic(new ChatPromptValue(out)) as unknown as {
      messages: { role: string; content: { type: string; id?: string; input?: unknown; signature?: string }[] }[];
    };
    assertAnthropic(payload as never);
    assertStrictOrdering(out);
    const assistants = payload.messages.filter((m) => m.role === "assistant");
    expect(assistants.map((m) => m.content.filter((b) => b.type === "thinking").map((b) => b.signature))).toEqual([[], [], ["sig-2"]]);
    const inputs = assistants.map((m) => m.content.find((b) => b.type === "tool_use")!);
    expect(inputs.map((b) => b.id)).toEqual(["toolu_0", "toolu_1", "toolu_2"]);
    expect(inputs[0]!.input).toEqual(CLEARED_TOOL_INPUT);
    expect(inputs[1]!.input).toEqual(CALLS[1]!.args); // small: kept
    expect(inputs[2]!.input).toEqual(CALLS[2]!.args); // the turn in progress
    expect((out[2] as AIMessage).tool_calls![0]!.args).toEqual(CLEARED_TOOL_INPUT);
    expect(report.tokensAfter).toBeLessThan(report.tokensBefore);
  });

  test("OpenAI Responses: the reasoning items go, with the item ids that referred to them; inputs cleared in the items sent back; valid", async () => {
    const messages = await responsesRun();
    const report = await clearing().compactWithReport(messages, 100);
    const out = report.messages!;
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[2], messages[4]]);
    expect(out[6]).toBe(messages[6]);
    const items = convertMessagesToResponsesInput({ messages: out, model: "gpt-4o", zdrEnabled: false }) as unknown as Record<string, unknown>[];
    assertOpenAIResponses(items);
    assertStrictOrdering(out);
    expect(items.filter((item) => item.type === "reasoning").map((item) => item.id)).toEqual(["rs_2"]);
    const calls = items.filter((item) => item.type === "function_call");
    expect(calls.map((item) => item.call_id)).toEqual(["call_0", "call_1", "call_2"]);
    expect(calls.map((item) => item.id)).toEqual([undefined, undefined, "fc_2"]);
    const args = calls.map((item) => JSON.parse(item.arguments as string) as unknown);
    expect(args.every(isObject)).toBe(true);
    expect(args).toEqual([CLEARED_TOOL_INPUT, CALLS[1]!.args, CALLS[2]!.args]);
  });

  test("OpenAI Chat Completions: large inputs become the cleared object in the arguments sent; valid", async () => {
    const messages = await completionsRun();
    const report = await clearing().compactWithReport(messages, 100);
    const out = report.messages!;
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[2]]); // no reasoning here; the read's input is small
    const params = convertMessagesToCompletionsMessageParams({ messages: out, model: "gpt-4o" }) as unknown as Record<string, unknown>[];
    assertOpenAICompletions(params);
    const args = params
      .filter((p) => p.role === "assistant")
      .map((p) => JSON.parse((p.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments) as unknown);
    expect(args).toEqual([CLEARED_TOOL_INPUT, CALLS[1]!.args, CALLS[2]!.args]);
    assertConvertsEverywhere(out); // Responses, Anthropic and Gemini too
  });

  test("off by default: results are pruned, assistant messages are left alone", async () => {
    const messages = await anthropicRun();
    const report = await new ToolResultPruningCompactor({ cache: null }).compactWithReport(messages, 100);
    for (const index of AI_AT) expect((report.messages ?? messages)[index]).toBe(messages[index]);
  });

  test("thinking alone, or inputs alone, clear only that", async () => {
    const messages = await anthropicRun();
    const thinking = (await new ToolResultPruningCompactor({ clearThinking: true, cache: null }).compact(messages, 100))!;
    expect((thinking[2] as AIMessage).tool_calls![0]!.args).toEqual(CALLS[0]!.args);
    expect(JSON.stringify(thinking[2]!.content)).not.toContain("thinking");
    const inputs = (await new ToolResultPruningCompactor({ clearToolInputs: true, minTokens: 100, cache: null }).compact(messages, 100))!;
    expect((inputs[2] as AIMessage).tool_calls![0]!.args).toEqual(CLEARED_TOOL_INPUT);
    expect(JSON.stringify(inputs[2]!.content)).toContain("sig-0");
    expect(inputs[4]).toBe(messages[4]); // its input is small and its thinking stays
  });

  test("clearing stops once the conversation fits, oldest first", async () => {
    const messages = await anthropicRun();
    const before = (await clearing().compactWithReport(messages, 100)).tokensBefore;
    const report = await clearing().compactWithReport(messages, before - 50);
    expect(report.rewritten.map((r) => r.original)).toEqual([messages[2]]);
  });

  test("bad options are a TypeError naming the value", () => {
    expect(() => new ToolResultPruningCompactor({ clearThinking: "yes" as never })).toThrow(new TypeError('`clearThinking` must be a boolean, got "yes"'));
    expect(() => new ToolResultPruningCompactor({ clearToolInputs: 5 as never })).toThrow(new TypeError("`clearToolInputs` must be a boolean or { minTokens }, got 5"));
    expect(() => new ToolResultPruningCompactor({ clearToolInputs: { minTokens: -1 } })).toThrow(/^`clearToolInputs.minTokens` must be/);
  });
});

describe("with the window after it", () => {
  test("a pipeline (which decides the clearing one message at a time) leaves what the stages one after the other leave", async () => {
    const messages = await anthropicRun();
    const window = () => new SlidingWindowCompactor({ cache: null });
    for (const target of [300, 1_000, 1_500]) {
      const together = await new CompactionPipeline([clearing(), window()]).compact(messages, target);
      const first = (await clearing().compact(messages, target)) ?? messages;
      const second = (await window().compact(first, target)) ?? first;
      expect(together?.map((m) => m.toDict())).toEqual(second.map((m) => m.toDict()));
      if (together !== null) assertAnthropic(convertPromptToAnthropic(new ChatPromptValue(together)) as never);
    }
  });
});
