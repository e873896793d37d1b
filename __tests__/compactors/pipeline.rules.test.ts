/**
 * The pipeline's own rules, one test each (survivors of the
 * mutation run of `src/compactors/pipeline.ts`): when a stage's result is
 * enough (at exactly the target too), what the pipeline's report takes from
 * its stages' reports (the note, `stepsTrimmed`, the stage entries), how an
 * input message that stands twice is accounted for, and when the fused
 * pruning → window path is taken. Stages are scripted so that every expected
 * value is worked out from the input.
 */
import { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { CompactionPipeline, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import type { CompactionReport, Compactor } from "../../src";
import { answer, calling, human, lengthCounter, result, system, tokens } from "../support/stages";

interface Step {
  messages: BaseMessage[] | null;
  added?: BaseMessage[];
  note?: HumanMessage | null;
  stepsTrimmed?: boolean;
}

/** A stage that does what `step` says to its input and reports it; `stages: []` as a hand-written compactor might. */
function scripted(step: (messages: BaseMessage[]) => Step): Compactor & { calls: number } {
  const stage = {
    calls: 0,
    async compact(messages: BaseMessage[]) {
      stage.calls += 1;
      return step(messages).messages;
    },
    async compactWithReport(messages: BaseMessage[]): Promise<CompactionReport> {
      stage.calls += 1;
      const outcome = step(messages);
      const output = outcome.messages;
      const removed = output === null ? [] : messages.filter((message) => !output.includes(message));
      return {
        strategy: "scripted",
        messages: output,
        removed,
        rewritten: [],
        added: outcome.added ?? [],
        tokensBefore: tokens(messages),
        tokensAfter: tokens(output ?? messages),
        keptCount: messages.length - removed.length,
        note: outcome.note ?? null,
        stepsTrimmed: outcome.stepsTrimmed ?? false,
        stages: [],
      };
    },
  };
  return stage;
}

/** A stage that must not run. */
const untouched = () => scripted(() => ({ messages: null }));
const without = (gone: BaseMessage) => (messages: BaseMessage[]) => messages.filter((message) => message !== gone);
const dropping = (gone: BaseMessage) => (messages: BaseMessage[]): Step => ({ messages: without(gone)(messages) });

function conversation(): BaseMessage[] {
  return [system(10), human(20, "Q1"), answer(30, "A1"), human(20, "Q2"), answer(30, "A2"), human(10, "TASK")];
}

describe("CompactionPipeline: bad arguments", () => {
  const stage = new SlidingWindowCompactor({ cache: null });

  test("stages that are no array are a TypeError naming them; an empty array is a RangeError", () => {
    expect(() => new CompactionPipeline(stage as unknown as Compactor[])).toThrow(TypeError);
    expect(() => new CompactionPipeline(stage as unknown as Compactor[])).toThrow(/^CompactionPipeline stages must be an array of compactors, got /);
    expect(() => new CompactionPipeline([])).toThrow(new RangeError("CompactionPipeline needs at least one stage, got an empty array"));
  });

  test.each([null, "fast", 3])("options %p are a TypeError naming them", (options) => {
    const make = () => new CompactionPipeline([stage], options as unknown as object);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(/^CompactionPipeline options must be an object, got /);
  });

  test("a bad target is a RangeError naming targetTokens", async () => {
    await expect(new CompactionPipeline([stage]).compact(conversation(), -1, lengthCounter)).rejects.toThrow(/`targetTokens` must be/);
  });
});

describe("CompactionPipeline: when a stage is enough", () => {
  test("a stage that leaves exactly the target stops the pipeline, in both forms", async () => {
    const messages = conversation();
    const first = scripted(dropping(messages[2]!));
    const last = untouched();
    const pipeline = new CompactionPipeline([first, last], { cache: null });
    const target = tokens(messages) - 30;
    expect(await pipeline.compact(messages, target, lengthCounter)).toEqual(without(messages[2]!)(messages));
    const report = await pipeline.compactWithReport(messages, target, lengthCounter);
    expect(report.tokensAfter).toBe(target);
    expect(report.stages.map((entry) => entry.strategy)).toEqual(["scripted"]);
    expect(last.calls).toBe(0);
  });

  test("an input exactly at the target runs no stage and reports none", async () => {
    const messages = conversation();
    const first = untouched();
    const report = await new CompactionPipeline([first, untouched()], { cache: null }).compactWithReport(messages, tokens(messages), lengthCounter);
    expect(first.calls).toBe(0);
    expect(report).toMatchObject({ messages: null, stages: [], stepsTrimmed: false, note: null, tokensAfter: tokens(messages) });
  });

  test("the fused pruning → window pair too: at exactly the target no stage entry, nothing changed", async () => {
    const messages = [system(), human(), calling(["c1"]), result("c1", 400), answer(), human(), calling(["c2"]), result("c2", 10), answer(), human(10, "TASK")];
    const pipeline = new CompactionPipeline([new ToolResultPruningCompactor({ cache: null, minKeepResults: 1 }), new SlidingWindowCompactor({ cache: null })], { cache: null });
    const report = await pipeline.compactWithReport(messages, tokens(messages), lengthCounter);
    expect(report).toMatchObject({ messages: null, stages: [], removed: [], rewritten: [] });
  });
});

describe("CompactionPipeline: what its report takes from the stages'", () => {
  test("every stage that ran has its entry, also one whose own report lists no stages", async () => {
    const messages = conversation();
    const report = await new CompactionPipeline([scripted(dropping(messages[1]!)), scripted(dropping(messages[2]!))], { cache: null }).compactWithReport(
      messages,
      0,
      lengthCounter,
    );
    expect(report.stages.map((entry) => entry.removed)).toEqual([[messages[1]], [messages[2]]]);
  });

  test("stepsTrimmed is true when any stage trimmed steps, false when none did", async () => {
    const messages = conversation();
    const trims = scripted((input) => ({ messages: without(messages[1]!)(input), stepsTrimmed: true }));
    const plain = scripted((input) => ({ messages: without(messages[2]!)(input), stepsTrimmed: false }));
    expect((await new CompactionPipeline([trims, plain], { cache: null }).compactWithReport(messages, 0, lengthCounter)).stepsTrimmed).toBe(true);
    const alone = scripted((input) => ({ messages: without(messages[2]!)(input) }));
    expect((await new CompactionPipeline([alone], { cache: null }).compactWithReport(messages, 0, lengthCounter)).stepsTrimmed).toBe(false);
  });

  test("the note of an earlier stage is the pipeline's when a later stage adds none and keeps it", async () => {
    const messages = conversation();
    const note = new HumanMessage("[2 messages omitted]");
    const notes = scripted((input) => ({ messages: [input[0]!, note, ...input.slice(3)], added: [note], note }));
    const later = scripted((input) => ({ messages: input.filter((message) => message !== messages[3]) }));
    const report = await new CompactionPipeline([notes, later], { cache: null }).compactWithReport(messages, 0, lengthCounter);
    expect(report.note).toBe(note);
    expect(report.added).toEqual([note]);
  });

  test("a note a later stage removed is no longer the pipeline's note", async () => {
    const messages = conversation();
    const note = new HumanMessage("[2 messages omitted]");
    const notes = scripted((input) => ({ messages: [input[0]!, note, ...input.slice(3)], added: [note], note }));
    const drops = scripted((input) => ({ messages: input.filter((message) => message !== note) }));
    const report = await new CompactionPipeline([notes, drops], { cache: null }).compactWithReport(messages, 0, lengthCounter);
    expect(report.note).toBeNull();
    expect(report.added).toEqual([]);
    expect(report.removed).toEqual(messages.slice(1, 3));
  });

  test("an input message that stands twice and is kept once is removed once", async () => {
    const messages = conversation();
    const twice = [...messages.slice(0, 3), messages[2]!, ...messages.slice(3)];
    const once = scripted((input) => ({ messages: [...input.slice(0, 3), ...input.slice(4)] }));
    const report = await new CompactionPipeline([once], { cache: null }).compactWithReport(twice, 0, lengthCounter);
    expect(report.removed).toEqual([messages[2]]);
    expect(report.keptCount).toBe(twice.length - 1);
  });
});

describe("CompactionPipeline: the fused pruning → window path", () => {
  /** Ten old turns, each with a 300-token result, then the task. */
  function agentHistory(): BaseMessage[] {
    const messages: BaseMessage[] = [system()];
    for (let turn = 0; turn < 10; turn += 1) messages.push(human(), calling([`c${turn}`]), result(`c${turn}`, 300), answer());
    messages.push(human(10, "TASK"), calling(["t0"]), result("t0", 10));
    return messages;
  }
  const stages = () => [new ToolResultPruningCompactor({ cache: null, minKeepResults: 1, minTokens: 50 }), new SlidingWindowCompactor({ cache: null })];

  test("on a history the window cuts anyway, the pruning entry lists only the results the window reads", async () => {
    const messages = agentHistory();
    const report = await new CompactionPipeline(stages(), { cache: null }).compactWithReport(messages, 400, lengthCounter);
    const [pruningEntry, windowEntry] = report.stages;
    expect([pruningEntry!.strategy, windowEntry!.strategy]).toEqual(["tool_result_pruning", "sliding_window"]);
    // The window reads the groups newest first and stops at the first that no longer fits: the entry holds the
    // results it keeps and the one of the turn where it stopped (one result a turn here), none older.
    const kept = pruningEntry!.rewritten.filter(({ replacement }) => report.messages!.includes(replacement));
    expect(kept.length).toBeGreaterThan(0);
    expect(pruningEntry!.rewritten.length).toBe(kept.length + 1);
    expect(pruningEntry!.rewritten.slice(1)).toEqual(kept);
    // Stage by stage, pruning rewrites every old result but the newest, most of which the window then drops.
    const alone = await stages()[0]!.compactWithReport(messages, 400, lengthCounter);
    expect(alone.rewritten).toHaveLength(10);
    expect(report.rewritten).toEqual(kept);
  });

  test("a third stage after the pair still runs when the pair does not reach the target", async () => {
    const messages = agentHistory();
    const third = scripted((input) => ({ messages: input.slice(0, 1).concat(input.slice(-3)) }));
    const pipeline = new CompactionPipeline([...stages(), third], { cache: null });
    // The task alone (10 + 10 + 10) and the system message exceed 20: the window keeps them, the third stage is asked.
    await pipeline.compactWithReport(messages, 20, lengthCounter);
    expect(third.calls).toBe(1);
    await pipeline.compact(messages, 20, lengthCounter);
    expect(third.calls).toBe(2);
  });
});
