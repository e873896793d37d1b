/**
 * Rules of the summarization stage that a mutation run of its suites showed unpinned (TESTING.md):
 * what the summary model is shown (`transcript.ts`), how a model is held to the output limit (`bounded-model.ts`),
 * the options' errors, and the boundaries of the stage (the target, room for the summary, a summary no smaller than
 * what it replaces, the order of what is replaced, a lone summary, a message repeated in the input).
 */
import { AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { SummarizationCompactor, SummarizationError } from "../../src";
import type { SummaryModel } from "../../src";
import { withOutputLimit } from "../../src/compactors/bounded-model";
import { contentText, renderTranscript } from "../../src/compactors/transcript";
import { ScriptedSummaryModel, transcriptOf } from "../support/summary-model";
import { answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

const wrapped = (text: string) => `<conversation_summary>\n${text}\n</conversation_summary>`;
/** Characters (so tokens, under `lengthCounter`) the summary message adds around the model's text. */
const WRAPPING = wrapped("").length;

describe("what the summary model is shown", () => {
  test("text blocks joined by newlines; an image or file as a placeholder with its address; tool-call blocks left to the calls", () => {
    const dataUrl = `data:image/png;base64,${"A".repeat(300)}`;
    const text = contentText([
      { type: "text", text: "first" },
      { type: "text", text: "" },
      "a bare string",
      null,
      7,
      { type: "image_url", image_url: "https://example.test/a.png" },
      { type: "image_url", image_url: { url: "https://example.test/b.png" } },
      { type: "file", url: dataUrl },
      { type: "tool_use", id: "t1", name: "lookup", input: {} },
      { type: "tool_call", id: "t2", name: "lookup", args: {} },
      { url: 42 },
      { type: "audio" },
    ] as unknown as BaseMessage["content"]);
    expect(text.split("\n")).toEqual([
      "first",
      "a bare string",
      "<image_url: https://example.test/a.png>",
      "<image_url: https://example.test/b.png>",
      `<file: ${dataUrl.slice(0, 120)}…>`,
      "<attachment>",
      "<audio>",
    ]);
    expect(contentText("plain")).toBe("plain");
    expect(contentText(undefined as unknown as BaseMessage["content"])).toBe("");
  });

  test("each message with its role; calls with name, arguments and id; results with their tool, call and error status", () => {
    const transcript = renderTranscript([
      new SystemMessage("rules"),
      new HumanMessage("find it"),
      new AIMessage({
        content: "looking",
        tool_calls: [
          { id: "c1", name: "grep", args: { q: "x" }, type: "tool_call" },
          { name: "ls", args: undefined as unknown as Record<string, unknown>, type: "tool_call" },
        ],
      }),
      new ToolMessage({ tool_call_id: "c1", name: "grep", content: "found", status: "error" }),
      new ToolMessage({ tool_call_id: "c2", content: "" }),
      new ChatMessage({ role: "critic", content: "hm" }),
    ]);
    expect(transcript.split("\n\n")).toEqual([
      "[system]\nrules",
      "[user]\nfind it",
      '[assistant]\nlooking\ncalls grep({"q":"x"}) with id c1\ncalls ls({}) with id none',
      "[tool result of grep (call c1, error)]\nfound",
      "[tool result of a tool (call c2)]",
      "[generic]\nhm",
    ]);
  });
});

/** A stand-in for a LangChain chat model class with an output-limit field, rebuilt from `lc_kwargs`. */
class LimitedModel {
  static built = 0;
  readonly lc_kwargs: Record<string, unknown>;
  maxTokens: number | undefined;
  maxCompletionTokens: number | undefined;
  constructor(fields: Record<string, unknown>) {
    LimitedModel.built += 1;
    this.lc_kwargs = fields;
    this.maxTokens = fields.maxTokens as number | undefined;
    this.maxCompletionTokens = fields.maxCompletionTokens as number | undefined;
  }
}

describe("holding a summary model to maxSummaryTokens", () => {
  test("a copy with the limit, remembered per model and limit; the user's model unchanged", () => {
    const model = new LimitedModel({ temperature: 0, maxTokens: 4000 });
    const first = withOutputLimit(model, 300);
    expect(first.bounded).toBe(true);
    expect(first.model).not.toBe(model);
    expect(first.model).toBeInstanceOf(LimitedModel);
    expect(first.model.maxTokens).toBe(300);
    expect(first.model.lc_kwargs).toEqual({ temperature: 0, maxTokens: 300 });
    expect(model.maxTokens).toBe(4000);
    const built = LimitedModel.built;
    expect(withOutputLimit(model, 300).model).toBe(first.model);
    expect(LimitedModel.built).toBe(built);
    const again = withOutputLimit(model, 300);
    expect(again.bounded).toBe(true);
    const other = withOutputLimit(model, 500);
    expect(other.model).not.toBe(first.model);
    expect(other.model.maxTokens).toBe(500);
    // A second limit is remembered beside the first, not in its place.
    expect(withOutputLimit(model, 300).model).toBe(first.model);
    expect(withOutputLimit(model, 500).model).toBe(other.model);
    expect(LimitedModel.built).toBe(built + 1);
  });

  test("a model already at the limit is used as it is; maxCompletionTokens follows when the user set it", () => {
    const atLimit = new LimitedModel({ maxTokens: 300 });
    const built = LimitedModel.built;
    const same = withOutputLimit(atLimit, 300);
    expect(same.model).toBe(atLimit);
    expect(same.bounded).toBe(true);
    expect(LimitedModel.built).toBe(built);
    const completion = withOutputLimit(new LimitedModel({ maxTokens: 10, maxCompletionTokens: 4000 }), 300);
    expect(completion.model.maxCompletionTokens).toBe(300);
    expect(completion.model.lc_kwargs.maxCompletionTokens).toBe(300);
    const without = withOutputLimit(new LimitedModel({ maxTokens: 10 }), 300);
    expect("maxCompletionTokens" in without.model.lc_kwargs).toBe(false);
  });

  test("maxOutputTokens is tried before maxTokens", () => {
    class GoogleLike {
      readonly lc_kwargs: Record<string, unknown>;
      maxOutputTokens: number | undefined;
      maxTokens = 1;
      constructor(fields: Record<string, unknown>) {
        this.lc_kwargs = fields;
        this.maxOutputTokens = fields.maxOutputTokens as number | undefined;
      }
    }
    const bounded = withOutputLimit(new GoogleLike({}), 300);
    expect(bounded.bounded).toBe(true);
    expect(bounded.model.maxOutputTokens).toBe(300);
  });

  test("a model that cannot be rebuilt with the limit is used as it is, unbounded (the prompt still states it)", () => {
    const noField = { lc_kwargs: {}, invoke: () => undefined };
    expect(withOutputLimit(noField, 300)).toEqual({ model: noField, bounded: false });
    for (const kwargs of [undefined, null]) {
      const model = Object.assign(new LimitedModel({ maxTokens: 1 }), { lc_kwargs: kwargs });
      expect(withOutputLimit(model, 300)).toEqual({ model, bounded: false });
    }
    class Throws {
      readonly lc_kwargs = {};
      maxTokens = 1;
      constructor(fields?: Record<string, unknown>) {
        if (fields !== undefined) throw new Error("cannot rebuild");
      }
    }
    const throws = new Throws();
    expect(withOutputLimit(throws, 300)).toEqual({ model: throws, bounded: false });
    class Ignores {
      readonly lc_kwargs = {};
      maxTokens = 1;
    }
    const ignores = new Ignores();
    expect(withOutputLimit(ignores, 300)).toEqual({ model: ignores, bounded: false });
  });

  test("a model whose request parameters cannot be read (invocationParams throws or answers no object) is used as it is", () => {
    for (const answer of [() => { throw new Error("invalid settings"); }, () => "params", () => null]) {
      const model = Object.assign(new LimitedModel({ maxTokens: 4000 }), { invocationParams: answer });
      const built = LimitedModel.built;
      expect(withOutputLimit(model, 300)).toEqual({ model, bounded: false });
      expect(LimitedModel.built).toBe(built);
    }
  });

  test("a copy whose request does not carry the limit is not used", () => {
    // Request parameters read from a field the copy does not set (as a max_tokens in invocationKwargs would win).
    class Pinned extends LimitedModel {
      invocationParams() {
        return { max_tokens: 5000 };
      }
    }
    const model = new Pinned({ maxTokens: 4000 });
    expect(withOutputLimit(model, 300)).toEqual({ model, bounded: false });
    class Follows extends LimitedModel {
      invocationParams() {
        return { max_tokens: this.maxTokens };
      }
    }
    const follows = new Follows({ maxTokens: 4000 });
    const bounded = withOutputLimit(follows, 300);
    expect(bounded.bounded).toBe(true);
    expect(bounded.model.maxTokens).toBe(300);
  });
});

describe("SummarizationCompactor options", () => {
  const model = new ScriptedSummaryModel(() => "SUM");
  test.each([
    [null, TypeError, "null"],
    [[], TypeError, "an array"],
    ["opts", TypeError, '"opts"'],
  ])("options %p are a TypeError naming them", (options, type, named) => {
    expect(() => new SummarizationCompactor(options as never)).toThrow(type);
    expect(() => new SummarizationCompactor(options as never)).toThrow(`SummarizationCompactor options must be an object with a model, got ${named}`);
  });
  test("each bad option is a typed error naming the option and the value", () => {
    const bad: [Record<string, unknown>, ErrorConstructor, RegExp][] = [
      [{ model: null }, TypeError, /model.*null/],
      [{ model: { invoke: "no" } }, TypeError, /model/],
      [{ model: "gpt" }, TypeError, /model.*gpt/],
      [{ model, minKeepSteps: -1 }, RangeError, /minKeepSteps.*-1/],
      [{ model, maxSummaryTokens: 0 }, RangeError, /maxSummaryTokens.*0/],
      [{ model, instruction: "   " }, TypeError, /instruction/],
      [{ model, instruction: 42 }, TypeError, /instruction.*42/],
      [{ model, raiseOnFailure: "yes" }, TypeError, /raiseOnFailure.*yes/],
    ];
    for (const [options, type, message] of bad) {
      expect(() => new SummarizationCompactor(options as never)).toThrow(type);
      expect(() => new SummarizationCompactor(options as never)).toThrow(message);
    }
    expect(() => new SummarizationCompactor({ model, minKeepSteps: 0, maxSummaryTokens: 1, instruction: "x", raiseOnFailure: true })).not.toThrow();
  });
  test("anything with invoke() is a model, a callable too", async () => {
    const callable = Object.assign(() => undefined, { invoke: async () => new AIMessage("S") });
    const stage = new SummarizationCompactor({ model: callable as unknown as SummaryModel, cache: null });
    const report = await stage.compactWithReport(history(), 100, lengthCounter);
    expect(report.added.map((message) => message.content)).toEqual([wrapped("S")]);
  });
  test("a bad target is a RangeError naming it, before the model is asked", async () => {
    const asked = new ScriptedSummaryModel(() => "SUM");
    await expect(new SummarizationCompactor({ model: asked }).compact([human(10)], -5, lengthCounter)).rejects.toThrow(RangeError);
    await expect(new SummarizationCompactor({ model: asked }).compact([human(10)], -5, lengthCounter)).rejects.toThrow(/targetTokens.*-5/);
    expect(asked.calls).toHaveLength(0);
  });
});

/** system 10; six turns of 100 (human 50 + answer 50); task 10. 620 tokens. */
function history(): BaseMessage[] {
  const messages: BaseMessage[] = [system()];
  for (let t = 1; t <= 6; t += 1) messages.push(human(50, `Q${t}-`), answer(50, `A${t}-`));
  messages.push(human(10, "TASK"));
  return messages;
}

describe("the summarization stage's boundaries", () => {
  test("a conversation exactly at the target is left alone, and the model is not asked", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const messages = history();
    expect(await new SummarizationCompactor({ model, cache: null }).compact(messages, tokens(messages), lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
  });

  test("the fewest turns that leave exactly room for the summary: a turn more is not taken", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const messages = history();
    // Two turns (200) leave 420; 420 + maxSummaryTokens 100 is exactly the target 520.
    const report = await new SummarizationCompactor({ model, maxSummaryTokens: 100, cache: null }).compactWithReport(messages, 520, lengthCounter);
    expect(report.removed).toEqual(messages.slice(1, 5));
  });

  test("the replaced messages are shown in their order, however many", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const messages = history();
    await new SummarizationCompactor({ model, maxSummaryTokens: 1, cache: null }).compact(messages, 25, lengthCounter);
    const transcript = transcriptOf(model.calls[0]!);
    const positions = [1, 2, 3, 4, 5, 6].flatMap((t) => [transcript.indexOf(`Q${t}-`), transcript.indexOf(`A${t}-`)]);
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  test("a summary exactly as large as what it replaces is refused; one token smaller is used", async () => {
    const messages = history();
    // One turn would leave 520 + 150 > 619, two leave 420 + 150: the first two turns are replaced (200 tokens): a summary of 200 tokens frees nothing.
    const equal = new ScriptedSummaryModel(() => "y".repeat(200 - WRAPPING));
    const refused = await new SummarizationCompactor({ model: equal, maxSummaryTokens: 150, cache: null }).compactWithReport(messages, 619, lengthCounter);
    expect(equal.calls).toHaveLength(1);
    expect(refused.messages).toBeNull();
    const raising = new SummarizationCompactor({ model: equal, maxSummaryTokens: 150, raiseOnFailure: true, cache: null });
    const error = await raising.compact(messages, 619, lengthCounter).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SummarizationError);
    expect((error as SummarizationError).reason).toBe("too_large");
    expect((error as SummarizationError).message).toContain("(200 tokens) is no smaller than the 4 messages it would replace (200 tokens)");
    const smaller = new ScriptedSummaryModel(() => "y".repeat(199 - WRAPPING));
    const used = await new SummarizationCompactor({ model: smaller, maxSummaryTokens: 150, cache: null }).compactWithReport(messages, 619, lengthCounter);
    expect(used.tokensAfter).toBe(tokens(messages) - 1);
  });

  test("an empty answer or a reply that is not a message is a failure: nothing removed, or the reason with raiseOnFailure", async () => {
    const messages = history();
    const blank = new ScriptedSummaryModel(() => "   ");
    expect(await new SummarizationCompactor({ model: blank, cache: null }).compact(messages, 100, lengthCounter)).toBeNull();
    await expect(new SummarizationCompactor({ model: blank, raiseOnFailure: true, cache: null }).compact(messages, 100, lengthCounter)).rejects.toMatchObject({
      name: "SummarizationError",
      reason: "empty",
      message: "the summary model answered no text",
    });
    const odd: SummaryModel = { invoke: async () => ({ text: "summary" }) as unknown as BaseMessage };
    expect(await new SummarizationCompactor({ model: odd, cache: null }).compact(messages, 100, lengthCounter)).toBeNull();
    const error = await new SummarizationCompactor({ model: odd, raiseOnFailure: true, cache: null }).compact(messages, 100, lengthCounter).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ reason: "not_a_message" });
    expect((error as Error).message).toContain("not a message");
  });

  test("no signal is passed to the model when the caller gave none", async () => {
    const seen: unknown[] = [];
    const model: SummaryModel = {
      invoke: async (_input, options) => {
        seen.push(options);
        return new AIMessage("S");
      },
    };
    await new SummarizationCompactor({ model, cache: null }).compact(history(), 100, lengthCounter);
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0] as object).sort()).toEqual(["runName", "tags"]);
  });

  test("task steps: none is summarized while minKeepSteps covers them all; a lone task summary is not summarized again", async () => {
    const task: BaseMessage[] = [system(), human(10, "TASK")];
    for (let s = 1; s <= 3; s += 1) task.push(calling([`s${s}`], 10), result(`s${s}`, 40));
    const model = new ScriptedSummaryModel(() => "S");
    expect(await new SummarizationCompactor({ model, minKeepSteps: 5, cache: null }).compact(task, 50, lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
    const lone = new HumanMessage({
      content: wrapped("earlier steps"),
      response_metadata: { compaction: { strategy: "summarization", summarized_messages: 4, source: "current_task_steps" } },
    });
    const withSummary = [system(), human(10, "TASK"), lone, calling(["s9"], 10), result("s9", 40)];
    expect(await new SummarizationCompactor({ model, minKeepSteps: 1, cache: null }).compact(withSummary, 20, lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
  });

  test("a message that stands twice in the input and is summarized once is removed once", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const repeated = answer(50, "R-");
    const messages: BaseMessage[] = [system(), human(50, "Q1-"), repeated, human(50, "Q2-"), answer(50, "A2-"), human(50, "Q3-"), repeated, human(10, "TASK")];
    // 320 tokens; the first turn (Q1, R: 100) is summarized into its summary, which is exactly the target.
    const summary = wrapped("S").length;
    const report = await new SummarizationCompactor({ model, maxSummaryTokens: summary, cache: null }).compactWithReport(messages, 220 + summary, lengthCounter);
    expect(model.calls).toHaveLength(1);
    expect(report.removed).toEqual([messages[1], repeated]);
    expect(report.messages?.filter((message) => message === repeated)).toHaveLength(1);
  });
});

describe("what the summary model is shown: blocks whose address or type is not what it seems", () => {
  test("a missing or empty address is no address; only a text block is shown as text", () => {
    expect(contentText([{ type: "image", url: null }] as unknown as BaseMessage["content"])).toBe("<image>");
    expect(contentText([{ type: "image_url", image_url: {} }] as unknown as BaseMessage["content"])).toBe("<image_url>");
    expect(contentText([{ type: "image_url", image_url: { url: 42 } }] as unknown as BaseMessage["content"])).toBe("<image_url>");
    expect(contentText([{ type: "reasoning", text: "private thoughts" }] as unknown as BaseMessage["content"])).toBe("<reasoning>");
  });

  test("a result that lost its call id is shown as answering an unknown call", () => {
    const orphan = new ToolMessage({ content: "r", tool_call_id: undefined as unknown as string, name: "grep" });
    expect(renderTranscript([orphan])).toBe("[tool result of grep (call unknown)]\nr");
  });
});

/** A summary the stage wrote earlier, of `n` tokens under `lengthCounter`. */
const earlierSummary = (n: number, source: string) =>
  new HumanMessage({
    content: wrapped("e".repeat(n - WRAPPING)),
    response_metadata: { compaction: { strategy: "summarization", summarized_messages: 2, source } },
  });

describe("the summarization stage: which groups may be given up", () => {
  test("a task step holding a protected message is not summarized, and the model is not asked for nothing", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const pinned = calling(["s1"], 10);
    const task = [system(), human(10, "TASK"), pinned, result("s1", 40), calling(["s2"], 10), result("s2", 40)];
    const stage = new SummarizationCompactor({ model, minKeepSteps: 1, protect: (message) => message === pinned, cache: null });
    expect(await stage.compact(task, 20, lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
  });

  test("minKeepSteps counts steps that hold more than a summary: a newer summary does not make an older step eligible", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const task = [system(), human(10, "TASK"), calling(["a"], 10), result("a", 40), earlierSummary(60, "current_task_steps")];
    expect(await new SummarizationCompactor({ model, minKeepSteps: 1, cache: null }).compact(task, 20, lengthCounter)).toBeNull();
    expect(model.calls).toHaveLength(0);
  });

  test("a step that opens with a summary but holds another message is a step that counts toward minKeepSteps", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const step = [calling(["a"], 10), result("a", 40)];
    const task = [system(), human(10, "TASK"), ...step, earlierSummary(60, "current_task_steps"), new SystemMessage("mid-task rule")];
    const report = await new SummarizationCompactor({ model, minKeepSteps: 1, cache: null }).compactWithReport(task, 20, lengthCounter);
    // Round 1 summarizes the older step (the newer one, summary and rule, is the one kept); round 2 may
    // then combine the two task summaries. Were the newer step not counted, nothing would be eligible.
    expect(model.calls.length).toBeGreaterThanOrEqual(1);
    const firstTranscript = transcriptOf(model.calls[0]!);
    expect(firstTranscript).toContain("\nTa:");
    expect(firstTranscript).not.toContain("mid-task rule");
    expect(report.removed?.slice(0, 2)).toEqual(step);
    expect(report.messages).toContain(task[task.length - 1]);
  });

  test("turns whose messages interleave (a result standing in the next turn) are shown in the conversation's order", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    // The result of Q1's call stands after Q2: it belongs to the first turn, the one whose call it answers.
    const messages: BaseMessage[] = [system(), human(50, "Q1-"), calling(["c1"], 50), human(50, "Q2-"), result("c1", 50), answer(50, "A2-"), human(10, "TASK")];
    await new SummarizationCompactor({ model, maxSummaryTokens: 1, cache: null }).compact(messages, 25, lengthCounter);
    const transcript = transcriptOf(model.calls[0]!);
    const positions = ["Q1-", "C", "Q2-", "Tc1:", "A2-"].map((marker) => transcript.indexOf(`\n${marker}`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  test("a protected turn stays protected in every later round, however far the conversation is from the target", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const pinned = human(50, "Q1-");
    const messages: BaseMessage[] = [system(), pinned, answer(50, "A1-"), human(50, "Q2-"), answer(50, "A2-"), human(10, "TASK")];
    const stage = new SummarizationCompactor({ model, maxSummaryTokens: 5, protect: (message) => message === pinned, cache: null });
    const report = await stage.compactWithReport(messages, 30, lengthCounter);
    expect(model.calls).toHaveLength(1);
    expect(report.messages).toContain(pinned);
    expect(report.removed).toEqual(messages.slice(3, 5));
  });

  test("a summary written in one round can be combined in the next, also when something else is protected", async () => {
    const model = new ScriptedSummaryModel(() => "S");
    const task = human(10, "TASK");
    const older = earlierSummary(200, "historical_turns");
    const messages: BaseMessage[] = [system(), older, human(50, "Q1-"), answer(50, "A1-"), task];
    const stage = new SummarizationCompactor({ model, maxSummaryTokens: 5, protect: (message) => message === task, cache: null });
    const report = await stage.compactWithReport(messages, 30, lengthCounter);
    // The tiers would summarize the turn, then combine the two history summaries: one call does both, sent the
    // earlier summary beside the turn (never a summary this compaction wrote).
    expect(model.calls).toHaveLength(1);
    const sent = model.calls[0]!.messages.map((message) => String(message.content)).join("\n");
    expect(sent).toContain(String(older.content));
    expect(sent).toContain("Q1-");
    expect(report.messages?.map((message) => message.content)).toEqual([messages[0]!.content, wrapped("S"), "TASKxxxxxx"]);
    expect(report.removed).toEqual(messages.slice(1, 4));
  });
});
