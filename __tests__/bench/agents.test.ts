/**
 * The agent benchmark's harness (bench/agents/) on tiny runs: the price
 * models on hand-made requests, the scripted model fetching again what it
 * can no longer see (the tool again, or the offload reader with the key),
 * questions scored answered only when the fact is in view, every model call
 * recorded, the step cap, and the hidden-window provider throwing the
 * integration's own overflow error.
 */
import { ContextOverflowError } from "@langchain/core/errors";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import type { AgentMiddleware } from "langchain";
import { z } from "zod/v4";
import { InMemoryStore } from "@langchain/langgraph";
import { createOffloadReaderTool, OFFLOAD_READER_TOOL_NAME, SlidingWindowCompactor, tiktokenCounter, ToolResultOffloadCompactor } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";
import { runAgentWorkload } from "../../bench/agents/harness";
import type { AgentRunResult } from "../../bench/agents/harness";
import { goals } from "../../bench/agents/report";
import type { Goal, StrategyRuns } from "../../bench/agents/report";
import { contextOverflowError } from "../../bench/agents/overflow";
import { ANTHROPIC, billOf, cachedTokens, inputCost, OPENAI, OPENAI_OLDER, outputCost, PrefixCache } from "../../bench/agents/pricing";
import type { BilledCall, RequestBlock } from "../../bench/agents/pricing";
import { RECOMMENDED, strategyOf } from "../../bench/agents/strategies";
import type { Strategy } from "../../bench/agents/strategies";
import { ScriptedSummarizer } from "../../bench/agents/summarizer";
import { CallLog } from "../../bench/agents/call-log";
import type { Workload } from "../../bench/agents/workload";
import { codingWorkload } from "../../bench/agents/workloads/coding";
import { MessageTokens } from "../../bench/agents/message-tokens";
import { providerProblem } from "../../bench/agents/validity";
import { expectPlanFollowed } from "../support/agent-runs";

jest.setTimeout(120_000);

const block = (key: string, tokens: number): RequestBlock => ({ key, tokens });

describe("price models, by hand", () => {
  test("cached prefix: Anthropic from 1,024 tokens, OpenAI from 1,024 in steps of 128", () => {
    expect(cachedTokens(ANTHROPIC, 1_023)).toBe(0);
    expect(cachedTokens(ANTHROPIC, 1_024)).toBe(1_024);
    expect(cachedTokens(ANTHROPIC, 1_300)).toBe(1_300);
    expect(cachedTokens(OPENAI, 1_023)).toBe(0);
    expect(cachedTokens(OPENAI, 1_151)).toBe(1_024);
    expect(cachedTokens(OPENAI, 1_152)).toBe(1_152);
    expect(cachedTokens(OPENAI, 1_300)).toBe(1_280);
  });

  test("a hand-made sequence of requests: the prefix shared with any earlier request, writes, reads and the minimum", () => {
    const cache = new PrefixCache();
    const tools = block("tools:a", 600);
    const system = block("system", 500);
    const ask = block("human:1", 100);
    // 1: nothing cached yet; 1,200 tokens, so the whole request is written.
    const first: BilledCall = { inputTokens: 1_200, sharedPrefixTokens: cache.add([tools, system, ask]), outputTokens: 100 };
    expect(first.sharedPrefixTokens).toBe(0);
    expect(inputCost(ANTHROPIC, first)).toBeCloseTo(1_200 * 1.25, 9);
    expect(inputCost(OPENAI, first)).toBeCloseTo(1_200, 9);
    expect(outputCost(ANTHROPIC, first)).toBe(500);
    expect(outputCost(OPENAI, first)).toBe(400);
    // 2: the first request plus a step: 1,200 read, 700 written; OpenAI caches 1,152 of the 1,200.
    const second: BilledCall = { inputTokens: 1_900, sharedPrefixTokens: cache.add([tools, system, ask, block("ai:1", 300), block("tool:1", 400)]), outputTokens: 0 };
    expect(second.sharedPrefixTokens).toBe(1_200);
    expect(inputCost(ANTHROPIC, second)).toBeCloseTo(1_200 * 0.1 + 700 * 1.25, 9);
    expect(inputCost(OPENAI, second)).toBeCloseTo(1_152 * 0.1 + 748, 9);
    expect(inputCost(OPENAI_OLDER, second)).toBeCloseTo(1_152 * 0.5 + 748, 9);
    // 3: a summary call (no tools, another system prompt): nothing shared, and under 1,024 tokens it is not cached at all.
    const summary: BilledCall = { inputTokens: 800, sharedPrefixTokens: cache.add([block("tools:", 0), block("system:summary", 200), block("human:transcript", 600)]), outputTokens: 50 };
    expect(summary.sharedPrefixTokens).toBe(0);
    expect(inputCost(ANTHROPIC, summary)).toBeCloseTo(800, 9);
    // 4: the history compacted after the system prompt: 1,100 shared, all read from the cache.
    const compacted: BilledCall = { inputTokens: 1_400, sharedPrefixTokens: cache.add([tools, system, block("human:note", 300)]), outputTokens: 0 };
    expect(compacted.sharedPrefixTokens).toBe(1_100);
    expect(inputCost(ANTHROPIC, compacted)).toBeCloseTo(1_100 * 0.1 + 300 * 1.25, 9);
    // 5: shares 1,900 with request 2, which is not the one before it: any earlier request counts.
    const back: BilledCall = { inputTokens: 2_000, sharedPrefixTokens: cache.add([tools, system, ask, block("ai:1", 300), block("tool:1", 400), block("ai:2", 100)]), outputTokens: 0 };
    expect(back.sharedPrefixTokens).toBe(1_900);
    // 6: a shared prefix under the minimum is not read: 900 tokens of tools and system, the rest differs.
    const short: BilledCall = { inputTokens: 1_500, sharedPrefixTokens: cache.add([tools, block("system:other", 300), block("human:x", 600)]), outputTokens: 0 };
    expect(short.sharedPrefixTokens).toBe(600);
    expect(inputCost(ANTHROPIC, short)).toBeCloseTo(1_500 * 1.25, 9);
    expect(inputCost(OPENAI, short)).toBeCloseTo(1_500, 9);
    // All in: agent input, summary input and every output.
    const bill = billOf(ANTHROPIC, [
      { ...first, kind: "agent" },
      { ...second, kind: "agent" },
      { ...summary, kind: "summary" },
    ]);
    expect(bill.agentInput).toBeCloseTo(1_500 + 995, 9);
    expect(bill.summaryInput).toBeCloseTo(800, 9);
    expect(bill.output).toBe(150 * 5);
    expect(bill.allIn).toBeCloseTo(1_500 + 995 + 800 + 750, 9);
  });
});

/** A strategy whose only middleware rewrites the request the model is sent. */
function editing(key: string, edit: (messages: BaseMessage[]) => BaseMessage[]): Strategy {
  const middleware = createMiddleware({ name: `Edit_${key}`, wrapModelCall: (request, handler) => handler({ ...request, messages: edit(request.messages) }) });
  return { key, label: key, kind: "baseline", color: "#000", setup: () => ({ middleware: [middleware as unknown as AgentMiddleware] }) };
}

/** Offloading then the window, with the reader tool bound: results leave the request early and are read back. */
const offloadThenWindow: Strategy = {
  key: "offload-window",
  label: "offload-window",
  kind: "ours",
  color: "#000",
  setup: (context) => {
    const store = new InMemoryStore();
    const namespace = ["test", "offload"];
    const middleware = compactionMiddleware({ contextWindow: context.contextWindow, tokenCounter: context.counter, compactor: [new ToolResultOffloadCompactor({ store, namespace }), new SlidingWindowCompactor()] });
    return { middleware: [middleware as unknown as AgentMiddleware], extraTools: [createOffloadReaderTool({ store, namespace })] };
  },
};

const reads = (run: Awaited<ReturnType<typeof runAgentWorkload>>) =>
  run.log.calls.flatMap((call) => (call.output && AIMessage.isInstance(call.output) ? (call.output.tool_calls ?? []) : [])).filter((c) => c.name === "read_file").map((c) => String(c.args.path));

describe("the scripted agent decides from what it receives", () => {
  const workload = codingWorkload(1, { quick: true });

  test("without compaction it follows its plan: one call per step, no re-fetch, every question answered", async () => {
    const run = await runAgentWorkload(strategyOf("none"), workload, { keepRequests: true });
    expectPlanFollowed(run.result, workload);
    // Every model call is recorded: the last request holds every earlier answer of the agent, and the last answer follows it.
    const last = run.log.calls.filter((c) => c.kind === "agent").at(-1)!;
    expect(last.messages!.filter((m) => AIMessage.isInstance(m)).length + 1).toBe(run.result.agentCalls);
    expect(run.log.calls.filter((c) => c.kind === "agent")).toHaveLength(run.result.agentCalls);
  });

  test("without compaction every request reads the whole request before it from the cache, across user turns too", async () => {
    // createAgent names each answer after the model returns it: the log must not remember the unnamed answer, or
    // the next turn's copy (named, from the checkpointer) no longer matches and the bill charges a rewrite.
    const run = await runAgentWorkload(strategyOf("none"), workload);
    const agentCalls = run.log.calls.filter((c) => c.kind === "agent");
    expect(new Set(agentCalls.map((c) => c.invocation)).size).toBeGreaterThan(2);
    agentCalls.slice(1).forEach((call, index) => {
      expect({ call: index + 1, shared: call.sharedPrefixTokens }).toEqual({ call: index + 1, shared: agentCalls[index]!.inputTokens });
    });
  });

  test("a read_file result it can no longer see is read again", async () => {
    // The earliest read of each file is hidden from the model; every later one stays in view.
    const hideFirstRead = editing("hide-first-read", (messages) => {
      const seen = new Set<string>();
      return messages.map((m) => {
        if (!ToolMessage.isInstance(m) || m.name !== "read_file") return m;
        const path = /^\/\/ (\S+)/.exec(String(m.content))?.[1] ?? "";
        if (seen.has(path)) return m;
        seen.add(path);
        return new ToolMessage({ tool_call_id: m.tool_call_id, name: m.name, content: "[cleared]" });
      });
    });
    const planned = reads(await runAgentWorkload(strategyOf("none"), workload, { keepRequests: true }));
    const run = await runAgentWorkload(hideFirstRead, workload, { keepRequests: true });
    const extra = [...reads(run)];
    for (const path of planned) extra.splice(extra.indexOf(path), 1);
    // Each extra read is of a file the model then wrote, whose only earlier read was hidden.
    expect(extra.length).toBeGreaterThan(0);
    expect(run.result.refetches).toEqual({ tool: extra.length, reader: 0, ask: 0 });
    expect(run.result.cappedTurns).toBe(0);
    const written = new Set(run.log.calls.flatMap((c) => (c.output && AIMessage.isInstance(c.output) ? (c.output.tool_calls ?? []) : [])).filter((c) => c.name === "write_file").map((c) => String(c.args.path)));
    for (const path of extra) expect(written.has(path)).toBe(true);
    // Each write came after the file's content was in view: the request before it shows its content-hash line.
    for (const [index, call] of run.log.calls.entries()) {
      const write = call.output && AIMessage.isInstance(call.output) ? call.output.tool_calls?.find((c) => c.name === "write_file") : undefined;
      if (!write) continue;
      const path = String(write.args.path);
      const shown = call.messages!.some((m) => ToolMessage.isInstance(m) && String(m.content).startsWith(`// ${path}`) && String(m.content).includes("content-hash:"));
      const ownWrite = call.messages!.some((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.name === "write_file" && c.args.path === path));
      expect({ index, path, inView: shown || ownWrite }).toEqual({ index, path, inView: true });
    }
  });

  test("a turn that cannot get what it needs stops at the step cap", async () => {
    const hideAll = editing("hide-reads", (messages) => messages.map((m) => (ToolMessage.isInstance(m) && m.name === "read_file" ? new ToolMessage({ tool_call_id: m.tool_call_id, name: m.name, content: "[cleared]" }) : m)));
    const run = await runAgentWorkload(hideAll, workload, { stepCap: 8 });
    expect(run.result.cappedTurns).toBeGreaterThan(0);
    const perInvocation = new Map<number, number>();
    for (const call of run.log.calls) if (call.kind === "agent") perInvocation.set(call.invocation, (perInvocation.get(call.invocation) ?? 0) + 1);
    expect(Math.max(...perInvocation.values())).toBe(8);
  });

  test("an offloaded result is read back through the reader tool with its key", async () => {
    // A window small enough that the offloading stage moves results out within a request.
    const small: Workload = { ...workload, contextWindow: 30_000 };
    const run = await runAgentWorkload(offloadThenWindow, small, { keepRequests: true });
    expect(run.result.refetches.reader).toBeGreaterThan(0);
    for (const [index, call] of run.log.calls.entries()) {
      const readers = call.output && AIMessage.isInstance(call.output) ? (call.output.tool_calls ?? []).filter((c) => c.name === OFFLOAD_READER_TOOL_NAME) : [];
      for (const reader of readers) {
        // The key is one the request showed in an offload reference, and the next request holds the original's text.
        expect(call.messages!.some((m) => ToolMessage.isInstance(m) && String(m.content).includes(JSON.stringify(reader.args.key)))).toBe(true);
        const next = run.log.calls.slice(index + 1).find((c) => c.kind === "agent")!;
        const result = next.messages!.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === reader.id)!;
        expect(String(result.content)).toMatch(/^\[characters 0 to \d+ of \d+; end of the result\]/);
      }
    }
  });
});

describe("questions are scored on what the answering request shows", () => {
  const fact = "AB-1234-CDEF";
  const never = "ZZ-9999-ZZZZ";
  const tiny: Workload = {
    key: "support",
    title: "tiny",
    seed: 1,
    contextWindow: 16_000,
    systemPrompt: "You are a test assistant.",
    tools: [{ name: "noop", description: "Does nothing.", schema: z.object({}) }],
    turns: [
      { user: `My code is ${fact}.`, steps: [{ needs: [], content: "Noted.", calls: [] }] },
      { user: "What is my code?", question: { fact, source: "user" }, steps: [{ needs: [], content: "", calls: [] }] },
      { user: "And the other code?", question: { fact: never, source: "user" }, steps: [{ needs: [], content: "", calls: [] }] },
    ],
    facts: [
      { id: fact, source: "user", label: "code" },
      { id: never, source: "user", label: "code" },
    ],
    createWorld: () => ({ run: () => "ok", info: () => ({ marker: fact, refetch: { kind: "ask", ask: "?", restatement: fact } }), beginTurn: () => {} }),
  };

  test("answered when the fact is in the request; not when it was removed; not answerable when never planted", async () => {
    const seen = await runAgentWorkload(strategyOf("none"), tiny);
    expect(seen.result.questionDetail.map((q) => [q.fact, q.answerable, q.answered])).toEqual([
      [fact, true, true],
      [never, false, false],
    ]);
    const hidden = editing("hide-fact", (messages) => messages.map((m) => (m.type === "human" && String(m.content).includes(fact) ? new HumanMessage("My code is in my notes.") : m)));
    const lost = await runAgentWorkload(hidden, tiny);
    expect(lost.result.questionDetail.map((q) => [q.fact, q.answerable, q.answered])).toEqual([
      [fact, true, false],
      [never, false, false],
    ]);
    expect(lost.result.questions).toEqual({ asked: 2, answerable: 1, answered: 0 });
  });
});

describe("summary calls", () => {
  test("the summarizer keeps identifiers in order up to its limit, and a copy rebuilt from lc_kwargs records into the same log", async () => {
    const log = new CallLog(new MessageTokens(tiktokenCounter("o200k_base")), { keepRequests: true });
    const summarizer = new ScriptedSummarizer({ log });
    const ids = Array.from({ length: 40 }, (_, i) => `EC-${String(1000 + i)}-ABCD`);
    const input = [new HumanMessage(ids.map((id) => `The failure ${id} was seen in the logs of the nightly build.`).join("\n"))];
    const full = summarizer.summarize(input);
    expect(ids.every((id) => full.includes(id))).toBe(true);
    const Ctor = summarizer.constructor as new (fields: Record<string, unknown>) => ScriptedSummarizer;
    const bounded = new Ctor({ ...(summarizer.lc_kwargs as Record<string, unknown>), maxTokens: 120 });
    const short = (await bounded.invoke(input)).text;
    const kept = ids.filter((id) => short.includes(id));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(ids.length);
    expect(kept).toEqual(ids.slice(0, kept.length));
    expect(log.tokens.of(new AIMessage(short))).toBeLessThanOrEqual(120);
    expect(log.calls).toHaveLength(1);
    expect(log.calls[0]!.kind).toBe("summary");
  });

  test("every summary a strategy puts in front of the agent came from a recorded summary call", async () => {
    const workload: Workload = { ...codingWorkload(1, { quick: true }), contextWindow: 30_000 };
    for (const key of ["ours-sum-window", "lc-summarization"]) {
      const run = await runAgentWorkload(strategyOf(key), workload, { keepRequests: true });
      const outputs = run.log.calls.filter((c) => c.kind === "summary").map((c) => String(c.output!.content));
      expect(outputs.length).toBe(run.result.summaryCalls);
      expect(outputs.length).toBeGreaterThan(0);
      const shown = new Set(
        run.log.calls
          .filter((c) => c.kind === "agent")
          .flatMap((c) => c.messages!)
          .map((m) => String(m.content))
          .filter((text) => text.includes("Earlier, the user and the assistant exchanged")),
      );
      expect(shown.size).toBeGreaterThan(0);
      for (const text of shown) expect(outputs.some((output) => text.includes(output.trim()))).toBe(true);
    }
  });
});

describe("a summary call that resends the conversation (agentCompactor's default)", () => {
  test("it is sent with the agent's tools and shares the agent's last request as its cached prefix; a transcript shares none", async () => {
    const workload: Workload = { ...codingWorkload(1, { quick: true }), contextWindow: 30_000 };
    const shared = async (key: string) => {
      const run = await runAgentWorkload(strategyOf(key), workload, { keepRequests: true });
      const summaries = run.log.calls.map((call, index) => ({ call, index })).filter((x) => x.call.kind === "summary");
      expect(summaries.length).toBeGreaterThan(0);
      const first = summaries[0]!;
      const before = run.log.calls.slice(0, first.index).filter((c) => c.kind === "agent").at(-1)!;
      return { first: first.call, before };
    };
    const conversation = await shared("lever-conversation");
    expect(conversation.first.toolSchemaText).toBe(conversation.before.toolSchemaText);
    // The whole request the agent last sent (tools, system prompt, every message) is read from the cache.
    expect(conversation.first.sharedPrefixTokens).toBe(conversation.before.inputTokens);
    const transcript = await shared("ours-sum-window");
    expect(transcript.first.sharedPrefixTokens).toBe(0);
  });
});

describe("the hidden-window provider", () => {
  test("throws what ChatAnthropic and ChatOpenAI throw for an over-long request: a ContextOverflowError", async () => {
    const anthropic = await contextOverflowError("anthropic", 1_000, 900);
    expect(ContextOverflowError.isInstance(anthropic)).toBe(true);
    expect(anthropic.message).toContain("prompt is too long: 1000 tokens > 900 maximum");
    const openai = await contextOverflowError("openai", 1_000, 900);
    expect(ContextOverflowError.isInstance(openai)).toBe(true);
    expect((openai as { cause?: { code?: string } }).cause?.code).toBe("context_length_exceeded");
  });

  test("a run over the real window fails with that error; the refused request is recorded and not billed", async () => {
    const workload = codingWorkload(1, { quick: true });
    const normal = await runAgentWorkload(strategyOf("none"), workload);
    const run = await runAgentWorkload(strategyOf("none"), workload, { hiddenWindowFraction: 0.5 });
    const limit = workload.contextWindow * 0.5;
    expect(normal.result.peakTokens).toBeGreaterThan(limit);
    expect(run.result.failed).not.toBeNull();
    expect(run.result.failed!.overflow).toBe(true);
    expect(run.result.failed!.error).toMatch(/^ContextOverflowError/);
    const refused = run.log.calls.filter((c) => c.rejected);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.inputTokens).toBeGreaterThan(limit);
    expect(run.log.calls.filter((c) => !c.rejected).every((c) => c.inputTokens <= limit)).toBe(true);
    // The same requests as the normal run up to the refusal, so the refused one is its first over the limit.
    expect(run.result.failed!.agentCall).toBe(normal.log.calls.findIndex((c) => c.kind === "agent" && c.inputTokens > limit) + 1);
    expect(run.result.bills.anthropic.allIn).toBeLessThan(normal.result.bills.anthropic.allIn);
  });

  test("below every trigger, the recommended row recovers (refused, compacted, sent again) where context editing's run fails", async () => {
    const workload = codingWorkload(1, { quick: true });
    const ours = await runAgentWorkload(strategyOf(RECOMMENDED), workload, { hiddenWindowFraction: 0.5 });
    expect(ours.result.refused).toBeGreaterThan(0);
    expect(ours.result.failed).toBeNull();
    expect(ours.result.overWindow).toBe(0);
    expect(ours.result.invalid).toBe(0);
    const peer = await runAgentWorkload(strategyOf("lc-context-editing"), workload, { hiddenWindowFraction: 0.5 });
    expect(peer.result.failed).not.toBeNull();
    expect(peer.result.failed!.overflow).toBe(true);
  });
});

describe("provider validity check", () => {
  const call = () => new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read_file", args: {}, type: "tool_call" }] });
  const result = () => new ToolMessage({ tool_call_id: "c1", content: "r" });
  const cases: [string, BaseMessage[]][] = [
    ["a result without its call", [new SystemMessage("s"), new HumanMessage("q"), result()]],
    ["a call not answered", [new SystemMessage("s"), new HumanMessage("q"), call(), new HumanMessage("again")]],
    ["no user message", [new SystemMessage("s")]],
    ["an assistant first", [new SystemMessage("s"), new AIMessage("hi")]],
  ];
  test.each(cases)("rejects %s", (_name, messages) => {
    expect(providerProblem(messages)).not.toBeNull();
  });
  test("accepts a well-formed request", () => {
    expect(providerProblem([new SystemMessage("s"), new HumanMessage("q"), call(), result(), new AIMessage("done")])).toBeNull();
  });
});

describe("goals are judged on the results", () => {
  const bill = (allIn: number) => ({ agentInput: allIn * 0.6, summaryInput: allIn * 0.2, output: allIn * 0.2, allIn });
  const result = (strategy: string, fields: { overWindow?: number; answered?: number; bill?: number }): AgentRunResult => ({
    strategy,
    workload: "coding",
    seed: 1,
    hiddenWindowFraction: null,
    failed: null,
    invocations: 1,
    agentCalls: 10,
    summaryCalls: 0,
    refused: 0,
    overWindow: fields.overWindow ?? 0,
    invalid: 0,
    firstProblem: null,
    peakTokens: 0,
    cappedTurns: 0,
    gaveUpTurns: 0,
    refetches: { tool: 0, reader: 0, ask: 0 },
    questions: { asked: 3, answerable: 3, answered: fields.answered ?? 3 },
    questionDetail: [],
    tokens: { agentInput: 0, summaryInput: 0, agentOutput: 0, summaryOutput: 0 },
    bills: { anthropic: bill(fields.bill ?? 100), openai: bill(fields.bill ?? 100), "openai-older": bill(fields.bill ?? 100) },
    cumulativeAnthropic: [],
    wallMs: 0,
  });
  const rows = (mine: Parameters<typeof result>[1], peers: Record<string, Parameters<typeof result>[1]>): StrategyRuns[] => [
    { strategy: strategyOf(RECOMMENDED), runs: [result(RECOMMENDED, mine)] },
    ...Object.entries(peers).map(([key, fields]) => ({ strategy: strategyOf(key), runs: [result(key, fields)] })),
  ];
  const met = (list: Goal[]) => list.map((goal) => goal.met);

  test("the bill is compared with the cheapest VALID peer only; a cheaper peer over the window does not count", () => {
    const list = goals(rows({ bill: 100 }, { "lc-summarization": { bill: 120 }, "lc-context-editing": { bill: 50, overWindow: 4 } }), "test");
    expect(met(list)).toEqual([true, true, true, true, true]);
    expect(list[2]!.measured).toContain("LangChain summarizationMiddleware");
  });

  test("a miss is reported with what it is made of; fewer questions than a peer, or a request over the window, misses", () => {
    const list = goals(rows({ bill: 130_000, answered: 2, overWindow: 1 }, { "lc-summarization": { bill: 120_000, answered: 3 } }), "test");
    expect(met(list)).toEqual([false, false, false, false, false]);
    expect(list[2]!.measured).toMatch(/\(8\.3%\); the difference is agent input \+6k/);
  });
});
