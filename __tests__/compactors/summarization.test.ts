/**
 * SummarizationCompactor: the four tiers, the summary
 * message, the model call, and the transactional failure rules, with a
 * scripted summary model (success, throws, empty, too large, hangs).
 */
import { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import {
  DEFAULT_SUMMARY_INSTRUCTION,
  isCompactionMessage,
  SUMMARY_RUN_NAME,
  SUMMARY_RUN_TAGS,
  SummarizationCompactor,
  SummarizationError,
} from "../../src";
import { layoutConversation } from "../../src/messages/layout";
import { assertProviderValid, snapshotMessages } from "../support/conversations";
import { ScriptedSummaryModel, transcriptOf } from "../support/summary-model";
import { answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

const wrapped = (text: string) => `<conversation_summary>\n${text}\n</conversation_summary>`;
const earlierSummary = (text: string, source = "historical_turns") =>
  new HumanMessage({ content: wrapped(text), response_metadata: { compaction: { strategy: "summarization", summarized_messages: 2, source } } });

/** system 10; turns T1..T4 of 200 tokens (human 100 + answer 100); task 10; steps S1..S3 of 310 (call 10 + result 300). */
function conversation(): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let t = 1; t <= 4; t += 1) messages.push(human(100, `T${t}-q `), answer(100, `T${t}-a `));
  messages.push(human(10, "TASK"));
  for (let s = 1; s <= 3; s += 1) messages.push(calling([`s${s}`], 10), result(`s${s}`, 300));
  return messages;
}

const sourcesOf = (list: BaseMessage[]) =>
  list.filter(isCompactionMessage).map((m) => (m.response_metadata as { compaction: { source: string } }).compaction.source);

describe("SummarizationCompactor tiers", () => {
  test("tier 1: the fewest oldest turns that make room for a summary of maxSummaryTokens", async () => {
    const messages = conversation();
    expect(tokens(messages)).toBe(1750);
    const model = new ScriptedSummaryModel(() => "SUM");
    const compactor = new SummarizationCompactor({ model, maxSummaryTokens: 50, cache: null });
    // Removing T1 and T2 (400) leaves 1350, and 1350 + 50 fits 1400; T1 alone would not.
    const report = await compactor.compactWithReport(messages, 1400, lengthCounter);
    expect(model.calls).toHaveLength(1);
    const transcript = transcriptOf(model.calls[0]!);
    expect(transcript).toContain("T1-q");
    expect(transcript).toContain("T2-a");
    expect(transcript).not.toContain("T3-q");
    expect(report.strategy).toBe("summarization");
    expect(report.removed).toEqual(messages.slice(1, 5));
    expect(report.added).toHaveLength(1);
    const summary = report.added[0]!;
    expect(summary.type).toBe("human");
    expect(summary.content).toBe(wrapped("SUM"));
    expect(summary.response_metadata).toEqual({ compaction: { strategy: "summarization", summarized_messages: 4, source: "historical_turns" } });
    // The summary stands where the oldest message it replaces stood; the rest are the same objects.
    expect(report.messages).toEqual([messages[0], summary, ...messages.slice(5)]);
    report.messages!.forEach((m, i) => i !== 1 && expect(m).toBe(i === 0 ? messages[0] : messages[i + 3]));
    expect(report.tokensAfter).toBe(tokens(report.messages!));
    expect(report.tokensBefore).toBe(1750);
  });

  test("then the task's oldest steps, keeping minKeepSteps; never the task message", async () => {
    const messages = conversation();
    const model = new ScriptedSummaryModel((call) => `SUM${call}`);
    const out = await new SummarizationCompactor({ model, maxSummaryTokens: 50, cache: null }).compact(messages, 0, lengthCounter);
    expect(sourcesOf(out!)).toEqual(["historical_turns", "current_task_steps"]);
    expect(transcriptOf(model.calls[1]!)).toContain("s2");
    expect(transcriptOf(model.calls[1]!)).not.toContain("s3");
    const task = messages[9]!;
    expect(out).toContain(task);
    // The newest step stays; the task is still the anchor of the result.
    expect(out!.slice(-2)).toEqual(messages.slice(-2));
    expect(layoutConversation(out!).task).toBe(out!.indexOf(task));
    assertProviderValid(out!);
    // minKeepSteps 0 lets the last step go too.
    const all = await new SummarizationCompactor({ model: new ScriptedSummaryModel(() => "S"), minKeepSteps: 0, cache: null }).compact(messages, 0, lengthCounter);
    expect(all).not.toContain(messages[messages.length - 1]);
  });

  test("tier 2 combines history summaries only when history holds nothing else; tier 4 combines the task's", async () => {
    const history = [system(), earlierSummary("A".repeat(200)), earlierSummary("B".repeat(200)), human(10, "TASK"), calling(["s1"]), result("s1", 300)];
    const model = new ScriptedSummaryModel(() => "AB");
    const out = await new SummarizationCompactor({ model, cache: null }).compact(history, 0, lengthCounter);
    expect(sourcesOf(out!)).toEqual(["historical_summaries"]);
    expect(transcriptOf(model.calls[0]!)).toContain("AAAA");
    expect(transcriptOf(model.calls[0]!)).toContain("BBBB");

    const task = [system(), human(10, "TASK"), earlierSummary("X".repeat(200), "current_task_steps"), earlierSummary("Y".repeat(200), "current_task_steps"), calling(["s1"]), result("s1", 300)];
    const model4 = new ScriptedSummaryModel(() => "XY");
    const out4 = await new SummarizationCompactor({ model: model4, cache: null }).compact(task, 0, lengthCounter);
    expect(sourcesOf(out4!)).toEqual(["current_task_summaries"]);
    expect(out4!.slice(-2)).toEqual(task.slice(-2));
  });

  test("null when the conversation fits, and when only what is always kept is left", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const compactor = new SummarizationCompactor({ model, cache: null });
    const messages = conversation();
    expect(await compactor.compact(messages, tokens(messages), lengthCounter)).toBeNull();
    expect(await compactor.compact([system(), human(10, "TASK"), calling(["s1"]), result("s1", 300)], 0, lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
  });

  test("protected messages are never summarized, nor the turn they belong to", async () => {
    const messages = conversation();
    const plan = messages[1]!;
    const model = new ScriptedSummaryModel(() => "SUM");
    const out = await new SummarizationCompactor({ model, maxSummaryTokens: 50, protect: (m) => m === plan, cache: null }).compact(messages, 1400, lengthCounter);
    expect(out!.slice(0, 3)).toEqual(messages.slice(0, 3));
    expect(transcriptOf(model.calls[0]!)).not.toContain("T1-");
    expect(transcriptOf(model.calls[0]!)).toContain("T2-q");
  });

  test("the input is not modified", async () => {
    const messages = conversation();
    const before = snapshotMessages(messages);
    await new SummarizationCompactor({ model: new ScriptedSummaryModel(() => "S"), cache: null }).compact(messages, 0, lengthCounter);
    expect(snapshotMessages(messages)).toStrictEqual(before);
  });
});

describe("the summary call", () => {
  test("carries the instruction with the size limit, a run name, tags and the caller's signal", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const controller = new AbortController();
    await new SummarizationCompactor({ model, maxSummaryTokens: 77, cache: null }).compact(conversation(), 1400, lengthCounter, { signal: controller.signal });
    const call = model.calls[0]!;
    expect(call.runName).toBe(SUMMARY_RUN_NAME);
    expect(call.tags).toEqual([...SUMMARY_RUN_TAGS]);
    expect(call.signal).toBe(controller.signal);
    expect(call.messages[0]!.type).toBe("system");
    expect(call.messages[0]!.content).toContain(DEFAULT_SUMMARY_INSTRUCTION);
    expect(call.messages[0]!.content).toContain("77 tokens");
    const custom = new ScriptedSummaryModel(() => "S");
    await new SummarizationCompactor({ model: custom, instruction: "Keep only ticket numbers.", cache: null }).compact(conversation(), 1400, lengthCounter);
    expect(custom.calls[0]!.messages[0]!.content).toMatch(/^Keep only ticket numbers\./);
    expect(custom.calls[0]!.messages[0]!.content).not.toContain("## Objective");
  });

  test("a model with an output-token field is held to maxSummaryTokens; the user's model is not changed", async () => {
    const sent: number[] = [];
    const fetch = async (_url: unknown, init?: { body?: unknown }) => {
      sent.push(JSON.parse(String(init?.body)).max_tokens);
      const body = { id: "x", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "S" }, finish_reason: "stop" }] };
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    };
    const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "sk-offline", maxTokens: 4000, maxRetries: 0, configuration: { fetch } });
    const out = await new SummarizationCompactor({ model, maxSummaryTokens: 123, cache: null }).compact(conversation(), 1400, lengthCounter);
    expect(out).not.toBeNull();
    expect(sent).toEqual([123]);
    expect(model.maxTokens).toBe(4000);
  });
});

describe("failures are transactional", () => {
  const messages = conversation();
  const run = (script: ConstructorParameters<typeof ScriptedSummaryModel>[0], raiseOnFailure = false, target = 0) =>
    new SummarizationCompactor({ model: new ScriptedSummaryModel(script), maxSummaryTokens: 50, raiseOnFailure, cache: null }).compactWithReport(messages, target, lengthCounter);

  test("a model that throws: null, nothing removed; with raiseOnFailure its error rejects", async () => {
    const error = new Error("provider down");
    const report = await run(() => error);
    expect(report.messages).toBeNull();
    expect(report.removed).toEqual([]);
    await expect(run(() => error, true)).rejects.toBe(error);
  });

  test("a failure after a good summary returns what the good one achieved", async () => {
    const report = await run((call) => (call === 0 ? "GOOD" : new Error("second call failed")));
    expect(sourcesOf(report.messages!)).toEqual(["historical_turns"]);
    expect(report.messages!.filter(isCompactionMessage)[0]!.content).toBe(wrapped("GOOD"));
    // Every step is still there.
    expect(report.messages!.slice(-6)).toEqual(messages.slice(-6));
  });

  test("an empty answer is never used as a summary", async () => {
    const report = await run(() => "  \n ");
    expect(report.messages).toBeNull();
    await expect(run(() => "", true)).rejects.toMatchObject({ name: "SummarizationError", reason: "empty" });
  });

  test("a summary no smaller than what it replaces is not used", async () => {
    const report = await run(() => "L".repeat(5000));
    expect(report.messages).toBeNull();
    const error = await run(() => "L".repeat(5000), true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SummarizationError);
    expect((error as SummarizationError).reason).toBe("too_large");
  });

  test("a hanging model is abandoned on abort, rejecting with the signal's reason, whether or not it listens", async () => {
    for (const listen of [true, false]) {
      const controller = new AbortController();
      const reason = new Error(`stopped (listen ${listen})`);
      const model = new ScriptedSummaryModel(() => ({ hang: true, listen }));
      const pending = new SummarizationCompactor({ model, cache: null }).compact(messages, 0, lengthCounter, { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(model.calls).toHaveLength(1);
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
    }
  });

  test("bad options are typed errors", () => {
    const model = new ScriptedSummaryModel(() => "S");
    expect(() => new SummarizationCompactor({} as never)).toThrow(TypeError);
    expect(() => new SummarizationCompactor({ model: "gpt" as never })).toThrow(/model.*"gpt"/);
    expect(() => new SummarizationCompactor({ model, maxSummaryTokens: 0 })).toThrow(RangeError);
    expect(() => new SummarizationCompactor({ model, minKeepSteps: -1 })).toThrow(RangeError);
    expect(() => new SummarizationCompactor({ model, instruction: " " })).toThrow(TypeError);
  });
});
