/**
 * Provider-native compaction is respected: a message carrying an Anthropic
 * `compaction` block or an OpenAI Responses `compaction` item (each built by
 * the provider's own LangChain parser from a raw API response) is never
 * split, rewritten, removed or summarized, and neither is anything before
 * it, by every stage; the request each provider's converter builds from the
 * result stays valid and still carries the marker. Each stage is also run on
 * the same conversation with the marker replaced by a plain assistant
 * message, to show that it would have compacted what the marker shields.
 */
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { InMemoryStore } from "@langchain/langgraph";
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { convertMessagesToResponsesInput } from "@langchain/openai";
import {
  CompactionHook,
  CompactionPipeline,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
  isNativeCompaction,
  latestNativeCompaction,
  omissionNoteMetadata as omissionNoteMetadataOf,
} from "../../src";
import type { Compactor } from "../../src";
import { protectedMessages } from "../../src/compactors/protection";
import { anthropicModel, openAIModel, outputText, responsesMessage, responsesResult } from "../support/provider-wire";
import { assertAnthropic, assertOpenAIResponses, assertStrictOrdering } from "../support/providers";
import { answer, calling, human, lengthCounter, result, system } from "../support/stages";
import { ScriptedSummaryModel } from "../support/summary-model";

type Shape = "anthropic" | "openai-responses";

/** The marker message as the provider's parser builds it: a compaction, a word, and a call (whose result follows). */
async function markerFrom(shape: Shape): Promise<{ marker: AIMessage; callId: string }> {
  if (shape === "anthropic") {
    const { model } = anthropicModel([
      { type: "compaction", content: "Summary of the earlier work: files a and b were read." },
      { type: "text", text: "Continuing." },
      { type: "tool_use", id: "toolu_m", name: "lookup", input: { id: "m" } },
    ]);
    return { marker: (await model.invoke([new HumanMessage("go")])) as AIMessage, callId: "toolu_m" };
  }
  const { model } = openAIModel(
    responsesResult([
      { type: "compaction", id: "cmp_1", encrypted_content: "opaque-compacted-context" },
      responsesMessage([outputText("Continuing.")]),
      { type: "function_call", id: "fc_m", call_id: "call_m", name: "lookup", arguments: JSON.stringify({ id: "m" }), status: "completed" },
    ]),
    { useResponsesApi: true },
  );
  return { marker: (await model.invoke([new HumanMessage("go")])) as AIMessage, callId: "call_m" };
}

/**
 * system, task 1 with two large results, the marker (with its own call and
 * large result), task 2, task 3 with two large results and an answer. The
 * marker stands at index 6, its result at 7.
 */
function conversation(marker: AIMessage, callId: string): BaseMessage[] {
  return [
    system(), human(10, "H1"),
    calling(["a"]), result("a", 500), calling(["b"]), result("b", 500),
    marker, result(callId, 500),
    human(10, "H2"), calling(["c"]), result("c", 500), answer(),
    human(10, "H3"), calling(["d"]), result("d", 500), calling(["e"]), result("e", 500), answer(),
  ];
}
const MARKER_AT = 6;
const SHIELDED_END = 7; // the marker's own result stays with it

/** The same conversation with the marker replaced by a plain assistant message making the same call. */
function withoutMarker(messages: BaseMessage[], callId: string): BaseMessage[] {
  const copy = [...messages];
  copy[MARKER_AT] = calling([callId]);
  return copy;
}

const summaryModel = () => new ScriptedSummaryModel(() => "short summary");
const STAGES: [string, () => Compactor][] = [
  ["sliding window", () => new SlidingWindowCompactor({ cache: null })],
  ["tool-result pruning", () => new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 100, cache: null })],
  ["tool-result offload", () => new ToolResultOffloadCompactor({ store: new InMemoryStore(), minTokens: 100, cache: null })],
  ["summarization", () => new SummarizationCompactor({ model: summaryModel(), maxSummaryTokens: 20, cache: null })],
  [
    "pipeline pruning → window (the shortcut)",
    () => new CompactionPipeline([new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 100, cache: null }), new SlidingWindowCompactor({ cache: null })]),
  ],
];
/**
 * Targets where the window trims the task's steps (600), where the
 * pipeline's shortcut would read the marker's turn at its pruned size (900),
 * and where the window removes only history after the marker (2,600).
 */
const TARGETS = [600, 900, 2_600];
const CASES = STAGES.flatMap(([name, make]) => TARGETS.map((target) => [name, target, make] as const));

/** Throws unless the provider's converter builds a valid request from `messages`, still carrying the marker. */
function assertValidRequest(shape: Shape, messages: BaseMessage[]): void {
  assertStrictOrdering(messages);
  if (shape === "anthropic") {
    const payload = convertPromptToAnthropic(new ChatPromptValue(messages)) as unknown as Parameters<typeof assertAnthropic>[0];
    assertAnthropic(payload);
    const blocks = payload.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks.filter((b) => b.type === "compaction")).toHaveLength(1);
  } else {
    const items = convertMessagesToResponsesInput({ messages, model: "gpt-4o", zdrEnabled: false }) as unknown as Record<string, unknown>[];
    assertOpenAIResponses(items);
    expect(items.filter((item) => item.type === "compaction")).toHaveLength(1);
  }
}

describe.each<Shape>(["anthropic", "openai-responses"])("native compaction marker (%s)", (shape) => {
  let messages: BaseMessage[];
  let callId: string;
  beforeAll(async () => {
    const built = await markerFrom(shape);
    callId = built.callId;
    messages = conversation(built.marker, callId);
  });

  test("the provider's parser's message is recognised as a marker, and is the latest", () => {
    expect(isNativeCompaction(messages[MARKER_AT]!)).toBe(true);
    expect(messages.filter(isNativeCompaction)).toHaveLength(1);
    expect(latestNativeCompaction(messages)).toBe(MARKER_AT);
    expect(latestNativeCompaction(withoutMarker(messages, callId))).toBe(-1);
  });

  test("protection pins the marker, everything before it, and its call's result; nothing after", () => {
    const mask = protectedMessages(messages, undefined)!;
    expect([...mask.keys()].filter((index) => mask[index] === 1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(protectedMessages(withoutMarker(messages, callId), undefined)).toBeNull();
  });

  test.each(CASES)("%s (target %d) leaves the marker and everything before it as it was, and the request stays valid", async (_name, target, make) => {
    const report = await make().compactWithReport(messages, target, lengthCounter);
    expect(report.messages).not.toBeNull(); // it compacted what follows the marker
    const out = report.messages!;
    for (let index = 0; index <= SHIELDED_END; index += 1) expect(out[index]).toBe(messages[index]);
    const touched = [...report.removed, ...report.rewritten.map((r) => r.original), ...(report.standsFor ?? []).flatMap((s) => s.originals)];
    for (const message of messages.slice(0, SHIELDED_END + 1)) expect(touched).not.toContain(message);
    assertValidRequest(shape, out);
  });

  test.each(CASES)("%s (target %d) would have compacted before that point without the marker", async (_name, target, make) => {
    const plain = withoutMarker(messages, callId);
    const out = (await make().compact(plain, target, lengthCounter))!;
    expect(out).not.toBeNull();
    const unchangedPrefix = plain.slice(0, SHIELDED_END + 1).every((message, index) => out[index] === message);
    expect(unchangedPrefix).toBe(false);
  });
});

describe("what is and is not a native compaction marker", () => {
  test("an Anthropic block that failed (content null) marks nothing; one with a summary does", () => {
    expect(isNativeCompaction(new AIMessage({ content: [{ type: "compaction", content: null }] as never }))).toBe(false);
    expect(isNativeCompaction(new AIMessage({ content: [{ type: "compaction", content: "summary" }] as never }))).toBe(true);
  });

  test("an OpenAI compaction item in the content (as a caller puts the output of /responses/compact) marks the message", () => {
    const item = { type: "compaction", id: "cmp_9", encrypted_content: "opaque" };
    expect(isNativeCompaction(new HumanMessage({ content: [item] as never }))).toBe(true);
    expect(isNativeCompaction(new AIMessage({ content: "", additional_kwargs: { tool_outputs: [item] } }))).toBe(true);
    expect(isNativeCompaction(new AIMessage({ content: "", response_metadata: { output: [item] } }))).toBe(true);
  });

  test("this package's own compaction messages and ordinary messages are no markers", () => {
    expect(isNativeCompaction(new HumanMessage({ content: "<conversation_summary>x</conversation_summary>", response_metadata: { compaction: { strategy: "summarization" } } }))).toBe(false);
    expect(isNativeCompaction(new ToolMessage({ content: "compaction", tool_call_id: "a" }))).toBe(false);
    expect(isNativeCompaction(new AIMessage({ content: [{ type: "text", text: "compaction" }] }))).toBe(false);
    expect(isNativeCompaction(new AIMessage({ content: "", additional_kwargs: { tool_outputs: [{ type: "web_search_call" }] } }))).toBe(false);
  });

  test("the latest of several markers is the boundary", () => {
    const first = new AIMessage({ content: [{ type: "compaction", content: "one" }] as never });
    const second = new AIMessage({ content: [{ type: "compaction", content: "two" }] as never });
    const messages = [system(), human(), first, human(), answer(), human(), second, human(), answer()];
    expect(latestNativeCompaction(messages)).toBe(6);
  });
});

describe("the latest marker of a list that continues one seen before", () => {
  /** The reference: every message read, newest first. */
  const plainScan = (messages: BaseMessage[]) => {
    for (let index = messages.length - 1; index >= 0; index -= 1) if (isNativeCompaction(messages[index]!)) return index;
    return -1;
  };
  const marker = (text: string) => new AIMessage({ content: [{ type: "compaction", content: text }] as never });

  test("is what reading the whole list says, whatever changed since (grown, marker replaced, cut, another list)", () => {
    const base: BaseMessage[] = [system(), human(), answer(), marker("one"), human(), answer()];
    const lists: BaseMessage[][] = [
      base,
      [...base, human(), answer()], // grown, no new marker
      [...base, human(), marker("two"), human()], // grown with a newer marker
      [...base.slice(0, 3), answer(), ...base.slice(4)], // the marker replaced by a plain message
      base.slice(0, 3), // cut before the marker
      [...base.slice(0, 3), human(), marker("three")], // cut, then a marker elsewhere
      base, // back to the first list
      [system(), human(), answer()], // another conversation
    ];
    for (const list of lists) expect(latestNativeCompaction(list)).toBe(plainScan(list));
  });
});

describe("the hook counts what the provider reads: nothing before the marker", () => {
  const marker = () => new AIMessage({ content: [{ type: "compaction", content: "Summary of the first five days." }] as never });
  /** system, five large turns the marker stands for, the marker, then `after` turns of 100 tokens each. */
  const conversation = (after: number): BaseMessage[] => {
    const messages: BaseMessage[] = [system(20)];
    for (let i = 0; i < 5; i += 1) messages.push(human(10), answer(1_000));
    messages.push(human(10, "M"), marker());
    for (let i = 0; i < after; i += 1) messages.push(human(50), answer(50));
    return messages;
  };
  const hook = () => new CompactionHook({ contextWindow: 1_000, compactAt: 0.7, compactTo: 0.4, tokenCounter: lengthCounter });
  const afterMarker = (messages: BaseMessage[]) => lengthCounter(messages.slice(latestNativeCompaction(messages) + 1));

  test("what stands before the marker does not set the trigger off", async () => {
    const messages = conversation(5); // 5,040 tokens in all, 500 after the marker
    expect(lengthCounter(messages)).toBeGreaterThan(700);
    expect(await hook().shouldCompact(messages)).toBe(false);
    expect(await hook().run(messages)).toBeNull();
  });

  test("once what follows the marker reaches the trigger, it is compacted to the target, and only it", async () => {
    const messages = conversation(8); // 800 after the marker
    const report = (await hook().run(messages))!;
    const out = report.messages!;
    const boundary = latestNativeCompaction(messages);
    for (let index = 0; index <= boundary; index += 1) expect(out[index]).toBe(messages[index]);
    // The window keeps whole turns after the marker up to the target (400, less the prefix the provider reads: system and the marker's turn).
    const kept = afterMarker(out.filter((message) => omissionNoteMetadataOf(message) === undefined));
    expect(kept).toBeGreaterThanOrEqual(300);
    expect(kept).toBeLessThanOrEqual(400);
  });

  test("a target in messages keeps that many messages after the marker, whatever stands before it", async () => {
    const messages = conversation(8);
    const byMessages = new CompactionHook({ contextWindow: 1_000, trigger: { messages: 20 }, target: { messages: 6 }, tokenCounter: lengthCounter });
    const out = (await byMessages.run(messages))!.messages!;
    const boundary = latestNativeCompaction(messages);
    for (let index = 0; index <= boundary; index += 1) expect(out[index]).toBe(messages[index]);
    const after = out.slice(boundary + 1).filter((message) => omissionNoteMetadataOf(message) === undefined);
    expect(after).toEqual(messages.slice(-6));
  });
});
