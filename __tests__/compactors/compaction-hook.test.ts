import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import fc from "fast-check";
import { approximateTokenCounter, CompactionHook, isOmissionNote, SlidingWindowCompactor } from "../../src";
import { advanceCompactionView, applyCompactionView } from "../../src/integrations/view-window";
import type { CompactionView } from "../../src/integrations/view-window";
import { assertOnSeedsAsync } from "../support/seeds";
// One token per character of string content: easy to reason about exactly.
import { lengthCounter as charCounter } from "../support/stages";
import { assertToolPairs } from "../support/tool-pairing";


const lookup = tool(async ({ query }: { query: string }) => `result for ${query}`, {
  name: "lookup",
  description: "Looks something up in the archive and returns the matching records.",
  schema: { type: "object", properties: { query: { type: "string", description: "what to look for" } }, required: ["query"] },
});

describe("CompactionHook: trigger and target", () => {
  it("fires at contextWindow × compactAt", async () => {
    const hook = new CompactionHook({ contextWindow: 100, compactAt: 0.5, compactTo: 0.2, tokenCounter: charCounter });
    expect(hook.triggerTokens).toBe(50);
    const below = [new HumanMessage("x".repeat(49))];
    const at = [new HumanMessage("x".repeat(50))];
    expect(await hook.estimateTokens(below)).toBe(49);
    expect(await hook.shouldCompact(below)).toBe(false);
    expect(await hook.shouldCompact(at)).toBe(true);
    // Overhead counts toward the trigger when the estimate is local.
    expect(await hook.shouldCompact(below, 1)).toBe(true);
    expect(await hook.run(below)).toBeNull();
  });

  it("targets max(floor(contextWindow × compactTo) − overhead, 0)", () => {
    const hook = new CompactionHook({ contextWindow: 1_001, compactAt: 0.9, compactTo: 0.33 });
    expect(hook.targetTokens()).toBe(330);
    expect(hook.targetTokens(30)).toBe(300);
    expect(hook.targetTokens(330)).toBe(0);
    expect(hook.targetTokens(5_000)).toBe(0);
    expect(() => hook.targetTokens(-1)).toThrow(RangeError);
    expect(() => hook.targetTokens(Number.POSITIVE_INFINITY)).toThrow(/overheadTokens.*Infinity/);
  });

  it("uses the defaults 0.7 and 0.4", () => {
    const hook = new CompactionHook({ contextWindow: 10_000 });
    expect(hook.triggerTokens).toBe(7_000);
    expect(hook.targetTokens()).toBe(4_000);
  });

  it("compacts to the target minus the overhead when fired", async () => {
    const hook = new CompactionHook({ contextWindow: 200, compactAt: 0.5, compactTo: 0.3, tokenCounter: charCounter });
    const messages: BaseMessage[] = [new SystemMessage("sys")];
    for (let turn = 0; turn < 10; turn += 1) messages.push(new HumanMessage(`q${turn}`.padEnd(10, ".")), new AIMessage(`a${turn}`.padEnd(10, ".")));
    messages.push(new HumanMessage("task"));
    const report = (await hook.run(messages, { extraTokens: 20 }))!;
    expect(report).not.toBeNull();
    const kept = report.messages!.filter((message) => !isOmissionNote(message));
    const last = messages.length - 1; // the task; the turns are at 1..20, turn k at 1 + 2k
    // Target 60 − 20 = 40: sys(3) + task(4) + the newest 1 turn (20) fit, a second turn (20) would not.
    expect(kept).toHaveLength(4);
    kept.forEach((message, index) => expect(message).toBe([messages[0], messages[last - 2], messages[last - 1], messages[last]][index]));
    expect(charCounter(kept)).toBe(3 + 4 + 20);
    expect(report.keptCount).toBe(4);
    // Without the extra 20: target 60 holds two turns (3 + 4 + 40 = 47), not three (67).
    const generous = (await hook.run(messages))!;
    const generousKept = generous.messages!.filter((message) => !isOmissionNote(message));
    expect(generousKept).toHaveLength(6);
    generousKept.forEach((message, index) => expect(message).toBe([messages[0], ...messages.slice(last - 4)][index]));
    expect(charCounter(generousKept)).toBe(3 + 4 + 40);
    expect(generous.keptCount).toBe(6);
  });
});

describe("CompactionHook: the estimate", () => {
  it("anchors on the last AI message's usage_metadata plus a local count after it", async () => {
    const hook = new CompactionHook({ contextWindow: 10_000, tokenCounter: charCounter });
    const messages: BaseMessage[] = [
      new HumanMessage("x".repeat(500)),
      new AIMessage({ content: "old", usage_metadata: { input_tokens: 9, output_tokens: 1, total_tokens: 10 } }),
      new HumanMessage("y".repeat(300)),
      new AIMessage({
        content: "",
        tool_calls: [{ id: "c1", name: "lookup", args: { query: "q" } }],
        usage_metadata: { input_tokens: 1_200, output_tokens: 34, total_tokens: 1_234 },
      }),
      new ToolMessage({ tool_call_id: "c1", content: "z".repeat(77) }),
      new HumanMessage("w".repeat(11)),
    ];
    expect(await hook.estimateTokens(messages)).toBe(1_234 + 77 + 11);
    // The provider's count already includes tools and system prompt: local overhead is not added again.
    expect(await hook.estimateTokens(messages, 999)).toBe(1_234 + 77 + 11);
    // The newest AI message with usage wins, even when it is the last message.
    expect(await hook.estimateTokens(messages.slice(0, 4))).toBe(1_234);
    expect(await hook.estimateTokens(messages.slice(0, 3))).toBe(10 + 300);
  });

  it("skips AI messages whose usage is empty and counts locally when there is none", async () => {
    const hook = new CompactionHook({ contextWindow: 10_000, tokenCounter: charCounter });
    const messages: BaseMessage[] = [
      new HumanMessage("x".repeat(40)),
      new AIMessage({ content: "a".repeat(5), usage_metadata: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } }),
      new HumanMessage("y".repeat(6)),
    ];
    expect(await hook.estimateTokens(messages)).toBe(51);
    expect(await hook.estimateTokens(messages, 100)).toBe(151);
  });

  it("counts tool schemas, an outside system prompt and extras as overhead", async () => {
    const hook = new CompactionHook({ contextWindow: 100_000 });
    const none = await hook.overheadTokens();
    expect(none).toBe(0);
    // Tool schemas are counted as the provider is sent them: the OpenAI definitions as JSON, read as one
    // system message by the approximate rule (3 + 1 token per 4 characters).
    const asSent = (definitions: unknown[]) => 3 + Math.ceil(JSON.stringify(definitions).length / 4);
    const oneTool = await hook.overheadTokens({ tools: [lookup] });
    expect(oneTool).toBe(asSent([convertToOpenAITool(lookup)]));
    const withPrompt = await hook.overheadTokens({ tools: [lookup], systemMessage: "Be brief. ".repeat(40) });
    expect(withPrompt - oneTool).toBe(approximateTokenCounter([new SystemMessage("Be brief. ".repeat(40))]));
    const asMessage = await hook.overheadTokens({ tools: [lookup], systemMessage: new SystemMessage("Be brief. ".repeat(40)), extraTokens: 7 });
    expect(asMessage).toBe(withPrompt + 7);
    const other = { type: "function", function: { name: "other", description: "d".repeat(200), parameters: {} } };
    const twoTools = await hook.overheadTokens({ tools: [lookup, other] });
    expect(twoTools).toBe(asSent([convertToOpenAITool(lookup), other]));
    expect(twoTools).toBeGreaterThan(oneTool + 200 / 4);

    // Without usage, the local estimate includes the overhead and so can fire on tools alone.
    const small = new CompactionHook({ contextWindow: oneTool + 2, compactAt: 1, compactTo: 0.5 });
    const messages = [new HumanMessage("hi")];
    expect(await small.estimateTokens(messages, oneTool)).toBe(oneTool + approximateTokenCounter(messages));
    expect(await small.shouldCompact(messages)).toBe(false);
    expect(await small.shouldCompact(messages, await small.overheadTokens({ tools: [lookup] }))).toBe(true);
  });

  it("rejects bad overhead with typed errors", async () => {
    const hook = new CompactionHook({ contextWindow: 1_000 });
    await expect(hook.overheadTokens({ extraTokens: -3 })).rejects.toThrow(/extraTokens.*-3/);
    await expect(hook.overheadTokens({ tools: "lookup" as never })).rejects.toThrow(new TypeError('`tools` must be an array, got "lookup"'));
    await expect(hook.overheadTokens({ systemMessage: 5 as never })).rejects.toThrow(/systemMessage.*5/);
    await expect(hook.estimateTokens("nope" as never)).rejects.toThrow(TypeError);
  });
});

describe("CompactionHook: validation", () => {
  it.each([
    [{ contextWindow: 0 }, /contextWindow.*positive whole number.*got 0/],
    [{ contextWindow: -10 }, /got -10/],
    [{ contextWindow: 1.5 }, /got 1\.5/],
    [{ contextWindow: Number.NaN }, /got NaN/],
    [{ contextWindow: "8000" }, /got "8000"/],
    [{ contextWindow: 100, compactAt: 0 }, /compactAt.*\(0, 1\].*got 0/],
    [{ contextWindow: 100, compactAt: 1.2 }, /compactAt.*got 1\.2/],
    [{ contextWindow: 100, compactTo: -0.1 }, /compactTo.*got -0\.1/],
    [{ contextWindow: 100, compactAt: 0.5, compactTo: 0.5 }, /compactTo.*\(0\.5\).*below.*compactAt.*\(0\.5\).*would compact on every step/],
    [{ contextWindow: 100, compactAt: 0.3 }, /`compactTo` \(0\.4\) must be below `compactAt` \(0\.3\)/],
  ])("throws a RangeError saying why for %p", (options, reason) => {
    expect(() => new CompactionHook(options as never)).toThrow(RangeError);
    expect(() => new CompactionHook(options as never)).toThrow(reason);
  });

  it("throws TypeErrors for a missing options object or a wrong compactor", () => {
    expect(() => new CompactionHook(undefined as never)).toThrow(TypeError);
    expect(() => new CompactionHook({ contextWindow: 100, compactor: {} as never })).toThrow(
      new TypeError("`compactor` must be a compactor (an object with compact and compactWithReport) or an array of them, got an object"),
    );
    expect(() => new CompactionHook({ contextWindow: 100, compactor: [new SlidingWindowCompactor(), { compact: () => null }] as never })).toThrow(
      /`compactor\[1\]` must be a compactor .*got an object/,
    );
    expect(() => new CompactionHook({ contextWindow: 100, tokenCounter: "tiktoken" as never })).toThrow(TypeError);
  });

  it("accepts compactAt = 1", () => {
    expect(new CompactionHook({ contextWindow: 100, compactAt: 1, compactTo: 0.99 }).triggerTokens).toBe(100);
  });
});

// ---------------------------------------------------------------------------
// Hysteresis: an agent loop against a model that reports what it received.

interface LoopOptions {
  steps: number;
  /** Size (characters) of the tool result at each step. */
  resultChars: (step: number) => number;
  /** A new user turn every `turnEvery` steps. */
  turnEvery: number;
}

interface Request {
  messages: BaseMessage[];
  compacted: boolean;
  estimate: number;
}

/** The conversation the loop grows: one tool call and its result per step, a user turn now and then. */
function growStep(history: BaseMessage[], step: number, options: LoopOptions, reply: AIMessage): void {
  history.push(reply);
  history.push(new ToolMessage({ id: `tool-${step}`, tool_call_id: `call-${step}`, content: `r${step} ${"data ".repeat(options.resultChars(step) / 5)}` }));
  if ((step + 1) % options.turnEvery === 0) history.push(new HumanMessage({ id: `human-${step}`, content: `Next question after step ${step}?` }));
}

function reply(step: number, received: BaseMessage[]): AIMessage {
  const content = `step ${step}`;
  const draft = new AIMessage({ content, tool_calls: [{ id: `call-${step}`, name: "lookup", args: { step } }] });
  const input = approximateTokenCounter(received);
  const output = approximateTokenCounter([draft]);
  return new AIMessage({
    id: `ai-${step}`,
    content,
    tool_calls: [{ id: `call-${step}`, name: "lookup", args: { step } }],
    usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
  });
}

function initialHistory(): BaseMessage[] {
  return [new SystemMessage({ id: "sys", content: "You are a research agent." }), new HumanMessage({ id: "human-start", content: "Collect everything about the archive." })];
}

/** The hook with a remembered view, as the integrations run it. */
async function runWithHook(hook: CompactionHook, options: LoopOptions): Promise<Request[]> {
  const history = initialHistory();
  let view: CompactionView | null = null;
  const requests: Request[] = [];
  for (let step = 0; step < options.steps; step += 1) {
    const estimate = await hook.estimateTokens(applyCompactionView(history, view));
    const advance = await advanceCompactionView(hook, history, view);
    view = advance.view;
    requests.push({ messages: advance.messages, compacted: advance.report !== null, estimate });
    growStep(history, step, options, reply(step, advance.messages));
  }
  return requests;
}

/** The strategy hysteresis avoids: cut to just under the limit on every call. */
async function runNaive(limit: number, options: LoopOptions): Promise<Request[]> {
  const compactor = new SlidingWindowCompactor();
  const history = initialHistory();
  const requests: Request[] = [];
  for (let step = 0; step < options.steps; step += 1) {
    const compacted = await compactor.compact(history, limit - 1);
    const messages = compacted ?? [...history];
    requests.push({ messages, compacted: compacted !== null, estimate: Number.NaN });
    growStep(history, step, options, reply(step, messages));
  }
  return requests;
}

function startsWith(request: BaseMessage[], prefix: BaseMessage[]): boolean {
  return prefix.length <= request.length && prefix.every((message, index) => request[index] === message);
}

describe("CompactionHook: hysteresis", () => {
  const contextWindow = 4_000;
  const options: LoopOptions = { steps: 120, resultChars: (step) => 200 + (step % 7) * 60, turnEvery: 6 };

  it("shows a stable, growing prefix between compactions and compacts rarely", async () => {
    const hook = new CompactionHook({ contextWindow, compactAt: 0.75, compactTo: 0.35, compactor: new SlidingWindowCompactor({ minKeepSteps: 1 }) });
    const requests = await runWithHook(hook, options);
    const compactions = requests.filter((request) => request.compacted).length;
    expect(compactions).toBeGreaterThanOrEqual(2);
    expect(compactions).toBeLessThanOrEqual(options.steps / 8);

    for (let index = 0; index < requests.length; index += 1) {
      const request = requests[index]!;
      // Fires exactly when the trigger is reached.
      expect(request.compacted).toBe(request.estimate >= hook.triggerTokens);
      // Never sent over the trigger, and after a compaction within the target (the note aside).
      expect(approximateTokenCounter(request.messages)).toBeLessThan(hook.triggerTokens);
      if (request.compacted) {
        expect(approximateTokenCounter(request.messages.filter((m) => !isOmissionNote(m)))).toBeLessThanOrEqual(hook.targetTokens());
      }
      assertToolPairs(request.messages);
      if (index === 0 || request.compacted) continue;
      const previous = requests[index - 1]!.messages;
      expect(startsWith(request.messages, previous)).toBe(true);
      expect(request.messages.length).toBeGreaterThan(previous.length);
    }
  });

  it("is what a naive cut to just under the limit lacks: its prefix moves on almost every call", async () => {
    const limit = contextWindow * 0.75;
    const requests = await runNaive(limit, options);
    let moved = 0;
    let overflowing = 0;
    for (let index = 1; index < requests.length; index += 1) {
      if (!requests[index]!.compacted) continue;
      overflowing += 1;
      if (!startsWith(requests[index]!.messages, requests[index - 1]!.messages)) moved += 1;
    }
    expect(overflowing).toBeGreaterThan(options.steps / 2);
    expect(moved).toBeGreaterThan(overflowing * 0.8);

    const hook = new CompactionHook({ contextWindow, compactAt: 0.75, compactTo: 0.35 });
    const withHook = await runWithHook(hook, options);
    const movedWithHook = withHook.filter((request, index) => index > 0 && !startsWith(request.messages, withHook[index - 1]!.messages)).length;
    expect(movedWithHook).toBe(withHook.filter((request) => request.compacted).length);
    expect(movedWithHook * 5).toBeLessThan(moved);
  });

  it("holds for random tool-result sizes and turn lengths (property)", async () => {
    await assertOnSeedsAsync(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 20, max: 900 }), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom([0.7, 0.4], [0.9, 0.5], [0.6, 0.2]),
        async (sizes, turnEvery, [compactAt, compactTo]) => {
          const hook = new CompactionHook({ contextWindow: 3_000, compactAt: compactAt!, compactTo: compactTo! });
          const requests = await runWithHook(hook, { steps: sizes.length, resultChars: (step) => sizes[step]!, turnEvery });
          requests.forEach((request, index) => {
            expect(request.compacted).toBe(request.estimate >= hook.triggerTokens);
            assertToolPairs(request.messages);
            if (index > 0 && !request.compacted) expect(startsWith(request.messages, requests[index - 1]!.messages)).toBe(true);
          });
        },
      ),
      25,
    );
  });
});
