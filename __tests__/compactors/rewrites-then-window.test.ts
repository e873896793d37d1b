/**
 * `CompactionPipeline([pruning, sliding window])` runs the two stages together through their capabilities
 * (`rewritesInPlace`, `compactAfterRewrites`: `src/compactors/rewrites-then-window.ts`), deciding only the results
 * the window can keep. Its result must be the list the two stages give when run one after the other, as the
 * pipeline runs any other stages: checked on messy histories, with every option the shortcut depends on, and with
 * how often the shortcut was taken printed and required (a property that never takes it would prove nothing).
 *
 * Replay a failure with `FC_SEED=<printed seed>`.
 */
import type { BaseMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import { CompactionPipeline, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import type { Compactor, TokenCounterLike } from "../../src";
import type { CompactionReport } from "../../src";
import { agentConversation } from "../../bench/conversations";
import { assertOnSeedsAsync } from "../support/seeds";
import { counterFor, messyPlanArbitrary, prepareMessyInput, resolveTarget, targetArbitrary, totalTokens } from "../support/messy";
import { diagnostic } from "../support/diagnostics";

const numRuns = Number(process.env.FC_RUNS ?? 300);

/** What a message is, field by field: a replacement made twice is a different object with the same fields. */
function fieldsOf(message: BaseMessage): unknown {
  const { type, content, id, name, additional_kwargs: kwargs, response_metadata: metadata } = message;
  const extra = message as { tool_call_id?: unknown; tool_calls?: unknown; status?: unknown };
  return { type, content, id, name, kwargs, metadata, toolCallId: extra.tool_call_id, toolCalls: extra.tool_calls, status: extra.status };
}

/** The two stages run together through their capabilities, as the pipeline runs them; `undefined` when the shortcut does not apply. */
async function together(pruning: ToolResultPruningCompactor, window: SlidingWindowCompactor, messages: BaseMessage[], target: number, counter: TokenCounterLike, withReport: boolean) {
  const rewrites = pruning.rewritesInPlace(messages, counter);
  if (rewrites === undefined) return undefined;
  const report = await window.compactAfterRewrites(rewrites, messages, target, counter, undefined, withReport);
  return report === undefined ? undefined : { report, decided: rewrites.decided() };
}

/** Stages that do not offer the shortcut: the pipeline runs them one after the other. */
class PlainPruning extends ToolResultPruningCompactor {
  override rewritesInPlace(): undefined {
    return undefined;
  }
}
class PlainWindow extends SlidingWindowCompactor {
  override async compactAfterRewrites(): Promise<undefined> {
    return undefined;
  }
}

/** The pipeline's own definition: each stage on the previous one's output, stopping once the list fits. */
async function oneAfterTheOther(stages: Compactor[], messages: BaseMessage[], target: number, counter: TokenCounterLike): Promise<BaseMessage[] | null> {
  if ((await totalTokens(counter, messages)) <= target) return null;
  let current = messages;
  let changed = false;
  for (const stage of stages) {
    const result = await stage.compact(current, target, counter);
    if (result === null) continue;
    current = result;
    changed = true;
    if ((await totalTokens(counter, current)) <= target) break;
  }
  return changed ? current : null;
}

/** The counters and the stages' options both properties draw from. */
const counterNameArbitrary = fc.constantFrom("approximate" as const, "tiktoken-o200k" as const);
const optionsArbitrary = fc.record({ minKeepResults: fc.integer({ min: 1, max: 4 }), minTokens: fc.integer({ min: 0, max: 60 }), minKeepSteps: fc.integer({ min: 0, max: 2 }) });

describe("pruning then the sliding window, deciding only what the window keeps", () => {
  test("gives the list the two stages give one after the other, on messy histories", async () => {
    let shortcuts = 0;
    let cases = 0;
    await assertOnSeedsAsync(
      fc.asyncProperty(
        messyPlanArbitrary(40),
        targetArbitrary,
        counterNameArbitrary,
        optionsArbitrary,
        async (plan, targetPlan, counterName, options) => {
          const counter = counterFor(counterName);
          const messages = await prepareMessyInput(plan, counter);
          const target = resolveTarget(targetPlan, await totalTokens(counter, messages));
          const stages = () => [
            new ToolResultPruningCompactor({ cache: null, minKeepResults: options.minKeepResults, minTokens: options.minTokens }),
            new SlidingWindowCompactor({ cache: null, minKeepSteps: options.minKeepSteps }),
          ];
          const expected = await oneAfterTheOther(stages(), messages, target, counter);
          const [pruning, window] = stages() as [ToolResultPruningCompactor, SlidingWindowCompactor];
          const shortcut = (await together(pruning, window, messages, target, counter, false))?.report.messages ?? undefined;
          const actual = await new CompactionPipeline(stages(), { cache: null }).compact(messages, target, counter);
          cases += 1;
          if (shortcut !== undefined) {
            shortcuts += 1;
            expect(shortcut.map(fieldsOf)).toEqual(expected?.map(fieldsOf));
          }
          if (!isDeepStrictEqual(actual?.map(fieldsOf), expected?.map(fieldsOf))) expect(actual?.map(fieldsOf)).toEqual(expected?.map(fieldsOf));
        },
      ),
      numRuns,
    );
    diagnostic(`shortcut taken in ${shortcuts} of ${cases} cases`);
    expect(shortcuts).toBeGreaterThan(cases / 20);
  }, 600_000);

  test("its report is the report of the two stages run one after the other, on messy histories", async () => {
    // Stages without the shortcut are run stage by stage: the reference.
    /** What the pipeline's own report says, with input messages by identity and made ones by their fields. */
    const ownFields = (report: CompactionReport, input: readonly BaseMessage[]) => ({
      messages: report.messages?.map(fieldsOf) ?? null,
      removed: report.removed.map((message) => input.indexOf(message)),
      rewritten: report.rewritten.map(({ original, replacement }) => [input.indexOf(original), fieldsOf(replacement)]),
      added: report.added.map(fieldsOf),
      tokens: [report.tokensBefore, report.tokensAfter],
      keptCount: report.keptCount,
      note: report.note === null ? null : fieldsOf(report.note),
      stepsTrimmed: report.stepsTrimmed,
      strategies: report.stages.map((stage) => stage.strategy),
    });
    let shortcuts = 0;
    let cases = 0;
    await assertOnSeedsAsync(
      fc.asyncProperty(
        messyPlanArbitrary(40),
        targetArbitrary,
        counterNameArbitrary,
        optionsArbitrary,
        async (plan, targetPlan, counterName, options) => {
          const counter = counterFor(counterName);
          const messages = await prepareMessyInput(plan, counter);
          const tokensBefore = await totalTokens(counter, messages);
          const target = resolveTarget(targetPlan, tokensBefore);
          const pruningOptions = { cache: null, minKeepResults: options.minKeepResults, minTokens: options.minTokens };
          const windowOptions = { cache: null, minKeepSteps: options.minKeepSteps };
          const expected = await new CompactionPipeline([new PlainPruning(pruningOptions), new PlainWindow(windowOptions)], { cache: null })
            .compactWithReport(messages, target, counter);
          const pruning = new ToolResultPruningCompactor(pruningOptions);
          const window = new SlidingWindowCompactor(windowOptions);
          const shortcut = await together(new ToolResultPruningCompactor(pruningOptions), new SlidingWindowCompactor(windowOptions), messages, target, counter, true);
          const actual = await new CompactionPipeline([pruning, window], { cache: null }).compactWithReport(messages, target, counter);
          cases += 1;
          expect(ownFields(actual, messages)).toEqual(ownFields(expected, messages));
          if (shortcut === undefined) return;
          shortcuts += 1;
          const { report: windowed, decided: pruned } = shortcut;
          // The pruning decided only results the window reads: a subset of what pruning alone rewrites.
          const allRewritten = new Set(expected.stages[0]!.rewritten.map(({ original }) => original));
          for (const { original } of pruned.rewritten) expect(allRewritten.has(original)).toBe(true);
          // The two chain: the window read the list the decided rewrites leave, of the size they free.
          const windowInput = pruned.messages;
          expect(tokensBefore - pruned.saved).toBe(await totalTokens(counter, windowInput));
          expect(windowed.tokensBefore).toBe(tokensBefore - pruned.saved);
          expect(windowed.messages?.map(fieldsOf)).toEqual(expected.messages?.map(fieldsOf));
          for (const message of windowed.removed) expect(windowInput).toContain(message);
        },
      ),
      numRuns,
    );
    diagnostic(`report shortcut taken in ${shortcuts} of ${cases} cases`);
    expect(shortcuts).toBeGreaterThan(cases / 20);
  }, 600_000);

  test("on a long agent history it decides far fewer results than pruning alone, with the same result", async () => {
    const messages = agentConversation(1_200, 5);
    const counter = counterFor("approximate");
    const stages = () => [new ToolResultPruningCompactor({ cache: null }), new SlidingWindowCompactor({ cache: null })];
    let counted = 0;
    const countingCounter = (list: BaseMessage[]) => {
      counted += list.length;
      return (counter as (list: BaseMessage[]) => number)(list);
    };
    const expected = await oneAfterTheOther(stages(), messages, 20_000, counter);
    const actual = await new CompactionPipeline(stages(), { cache: null }).compact(messages, 20_000, countingCounter);
    expect(actual?.map(fieldsOf)).toEqual(expected?.map(fieldsOf));
    // The stages one after the other count every message at least once; the shortcut, what the window reads and a little more.
    expect(counted).toBeLessThan(messages.length / 2);
  });

  test("the shortcut is a capability: a stage that does not offer it (or opts out) is run as it is written", async () => {
    const messages = agentConversation(1_200, 5);
    const calls: string[] = [];
    class LoggedWindow extends PlainWindow {
      override async compact(...args: Parameters<SlidingWindowCompactor["compact"]>): Promise<BaseMessage[] | null> {
        calls.push("window");
        return super.compact(...args);
      }
    }
    class LoggedPruning extends PlainPruning {
      override async compact(...args: Parameters<ToolResultPruningCompactor["compact"]>): Promise<BaseMessage[] | null> {
        calls.push("pruning");
        return super.compact(...args);
      }
    }
    await new CompactionPipeline([new ToolResultPruningCompactor({ cache: null }), new LoggedWindow({ cache: null })]).compact(messages, 20_000);
    expect(calls).toEqual(["window"]);
    await new CompactionPipeline([new LoggedPruning({ cache: null }), new SlidingWindowCompactor({ cache: null })]).compact(messages, 20_000);
    expect(calls).toEqual(["window", "pruning"]);
    // Offered by both (a stage of your own may offer them too): the stages' own compact is not called.
    calls.length = 0;
    class OfferingWindow extends SlidingWindowCompactor {
      override async compact(...args: Parameters<SlidingWindowCompactor["compact"]>): Promise<BaseMessage[] | null> {
        calls.push("window");
        return super.compact(...args);
      }
    }
    await new CompactionPipeline([new ToolResultPruningCompactor({ cache: null }), new OfferingWindow({ cache: null })]).compact(messages, 20_000);
    expect(calls).toEqual([]);
  });
});
