/**
 * Overflow recovery on real graphs with a checkpointer: `createAgent` with the
 * compaction middleware (view and commit mode) and `createReactAgent` with
 * the compaction node and `withOverflowRecovery` (view and commit mode). The
 * scripted model throws each provider's "request too long" error, built
 * offline as the provider's SDK builds it; the integration must learn from
 * it, compact lower and send the request once more, and a second refusal
 * must reach the caller as the provider's own error object.
 */
import { ContextOverflowError } from "@langchain/core/errors";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { CompactionGraphAnnotation, createCompactionNode, withOverflowRecovery } from "../../src/integrations/langgraph";
import { approximateTokenCounter, COMPACTION_OVERFLOW_RETRY_EVENT, isOmissionNote } from "../../src";
import type { ScriptedChatModel } from "../../src/testing";
import { anthropicOverflow, bedrockOverflow, geminiOverflow, openAIOverflow } from "../support/provider-errors";
import { ask, eventListener, middlewareAgent, nodeAgent, question, thread, weatherModel } from "../support/runtime-agents";
import type { AgentGraph, Fault } from "../support/runtime-agents";
import { toolPairingProblems } from "../support/tool-pairing";

const COMPACT_TO = 0.4;
/** Questions asked before the one whose first model call is refused (two model calls each). */
const HISTORY = 6;
const FAIL_AT = HISTORY * 2;
/** What the refusal says: the request as the provider counted it, and its limit. */
const PROVIDER_COUNT = 3_000;
const PROVIDER_LIMIT = 2_600;

interface ProviderError {
  name: string;
  /** Whether its message gives the provider's count and limit. */
  counts: boolean;
  make(requestTokens: number, limitTokens: number): Promise<unknown>;
}

const openAIMessage = (n: number, m: number) =>
  `This model's maximum context length is ${m} tokens. However, your messages resulted in ${n} tokens. Please reduce the length of the messages.`;
const causeOf = (error: unknown) => (error as { cause?: unknown }).cause;

const PROVIDERS: ProviderError[] = [
  { name: "core ContextOverflowError (as ChatOpenAI throws it)", counts: true, make: (n, m) => openAIOverflow(openAIMessage(n, m)) },
  { name: "core ContextOverflowError without counts", counts: false, make: async () => new ContextOverflowError("The input exceeds the model's context window.") },
  {
    name: "raw OpenAI 400 BadRequestError, code context_length_exceeded",
    counts: true,
    // The SDK's own error, as its client builds it from the 400 response (ChatOpenAI keeps it as `cause`).
    make: async (n, m) => causeOf(await openAIOverflow(openAIMessage(n, m))),
  },
  { name: "raw Anthropic 400 BadRequestError, prompt is too long", counts: true, make: async (n, m) => causeOf(await anthropicOverflow(`prompt is too long: ${n} tokens > ${m} maximum`)) },
  { name: "Google Gemini fetch error", counts: true, make: (n, m) => geminiOverflow(`The input token count (${n}) exceeds the maximum number of tokens allowed (${m}).`) },
  { name: "Bedrock ValidationException", counts: false, make: async () => bedrockOverflow() },
];

test("the provider errors are what their SDKs throw, not our own stand-ins", async () => {
  const [core, , rawOpenAI, rawAnthropic, gemini] = await Promise.all(PROVIDERS.map((provider) => provider.make(PROVIDER_COUNT, PROVIDER_LIMIT)));
  expect((core as Error).name).toBe("ContextOverflowError");
  for (const raw of [rawOpenAI, rawAnthropic]) {
    expect((raw as Error).constructor.name).toBe("BadRequestError");
    expect((raw as { status?: number }).status).toBe(400);
  }
  expect((rawOpenAI as { code?: string }).code).toBe("context_length_exceeded");
  expect((gemini as Error).name).not.toBe("ContextOverflowError");
});

type Setup = "middleware view" | "middleware commit" | "node view" | "node view (CompactionAnnotation)" | "node commit";
const SETUPS: Setup[] = ["middleware view", "middleware commit", "node view", "node view (CompactionAnnotation)", "node commit"];

function build(setup: Setup, model: ScriptedChatModel, options: Record<string, unknown> = {}): AgentGraph {
  const mode = setup.endsWith("commit") ? "commit" : "view";
  if (setup.startsWith("middleware")) return middlewareAgent(model, { mode, ...options }).agent;
  return nodeAgent(model, { mode, ...options }, [], undefined, setup.endsWith("(CompactionAnnotation)")).agent;
}

/** The request's size as our counter sees it: its messages and its tool schemas. */
/**
 * The provider's error as the caller gets it: `createAgent` wraps whatever a middleware's `wrapModelCall` throws in
 * its own `MiddlewareError` (with or without this package's middleware), keeping the error as `cause`.
 */
function providerErrorOf(thrown: unknown): unknown {
  return (thrown as { "~brand"?: unknown })["~brand"] === "MiddlewareError" ? (thrown as Error).cause : thrown;
}

async function rejectionOf(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (error) {
    return error;
  }
  throw new Error("the run did not fail");
}

const tokensOf = (model: ScriptedChatModel, call: number) => model.requestTokens(model.calls[call]!)!;

async function refusedOnce(setup: Setup, provider: ProviderError) {
  const error = await provider.make(PROVIDER_COUNT, PROVIDER_LIMIT);
  const model = weatherModel({ fault: (call) => (call === FAIL_AT ? error : undefined) });
  const agent = build(setup, model);
  await ask(agent, "t", HISTORY);
  const listener = eventListener();
  const result = await agent.invoke(question("And in Oslo?"), thread("t", { callbacks: [listener.handler] }));
  return { model, agent, result, events: listener.events, error };
}

describe.each(SETUPS)("%s", (setup) => {
  test.each(PROVIDERS)("$name: compacts lower, calibrated by the error, and sends the request once more", async (provider) => {
    const { model, agent, result, events } = await refusedOnce(setup, provider);
    // The refused call, its retry, and the answer after the tool: the run went on.
    expect(model.calls).toHaveLength(FAIL_AT + 3);
    expect(result.messages.at(-1)!.type).toBe("ai");
    const refused = tokensOf(model, FAIL_AT);
    const retried = tokensOf(model, FAIL_AT + 1);
    expect(retried).toBeLessThan(refused);
    expect(model.calls[FAIL_AT + 1]!.messages.some((m) => isOmissionNote(m))).toBe(true);
    expect(toolPairingProblems(model.calls[FAIL_AT + 1]!.messages)).toEqual([]);

    // The retry is visible, with what the provider said.
    const retries = events.filter((event) => event.name === COMPACTION_OVERFLOW_RETRY_EVENT);
    expect(retries).toHaveLength(1);
    const data = retries[0]!.data;
    expect(data.forced).toBe(true);
    expect(data.integration).toBe(setup.startsWith("middleware") ? "middleware" : "langgraph");
    expect(data.tokensAfter).toBeLessThan(data.tokensBefore);
    const estimated = data.overflow!.estimatedTokens;
    if (provider.counts) expect(data.overflow).toMatchObject({ requestTokens: PROVIDER_COUNT, limitTokens: PROVIDER_LIMIT });
    else expect(data.overflow!.requestTokens).toBeUndefined();

    // Calibrated: the retry fits the target fraction of the provider's window in the provider's own counts
    // (local counts scaled by what it counted; without counts, nine tenths of what it refused).
    const window = provider.counts ? PROVIDER_LIMIT : Math.floor(estimated * 0.9);
    const scale = provider.counts ? Math.max(1, PROVIDER_COUNT / estimated) : 1;
    expect(retried * scale).toBeLessThanOrEqual(window * COMPACT_TO + 1);

    const state = (await agent.getState(thread("t"))).values as { messages: BaseMessage[] };
    if (!setup.endsWith("commit")) {
      // View mode: the state keeps the whole history; the compaction was the model's request only.
      expect(state.messages.filter((m) => m.type === "human")).toHaveLength(HISTORY + 1);
      expect(state.messages.some((m) => isOmissionNote(m))).toBe(false);
    }
  });

  test("a second refusal reaches the caller as the provider's own error, after exactly one retry", async () => {
    const error = await PROVIDERS[3]!.make(PROVIDER_COUNT, PROVIDER_LIMIT);
    const model = weatherModel({ fault: (call) => (call >= FAIL_AT ? error : undefined) });
    const agent = build(setup, model);
    await ask(agent, "t", HISTORY);
    expect(providerErrorOf(await rejectionOf(agent.invoke(question("And in Oslo?"), thread("t"))))).toBe(error);
    expect(model.calls).toHaveLength(FAIL_AT + 2);
    expect(tokensOf(model, FAIL_AT + 1)).toBeLessThan(tokensOf(model, FAIL_AT));
  });

  test("an error that is not an overflow is not retried", async () => {
    const error = Object.assign(new Error("429 Rate limit reached for requests"), { status: 429 });
    const model = weatherModel({ fault: (call) => (call === FAIL_AT ? error : undefined) });
    const agent = build(setup, model);
    await ask(agent, "t", HISTORY);
    const listener = eventListener();
    expect(providerErrorOf(await rejectionOf(agent.invoke(question("And in Oslo?"), thread("t", { callbacks: [listener.handler] }))))).toBe(error);
    expect(model.calls).toHaveLength(FAIL_AT + 1);
    expect(listener.events.filter((event) => event.name === COMPACTION_OVERFLOW_RETRY_EVENT)).toEqual([]);
  });
});

test.each(["view", "commit"] as const)("middleware %s mode with recoverOverflow: false does not retry", async (mode) => {
  const error = await PROVIDERS[0]!.make(PROVIDER_COUNT, PROVIDER_LIMIT);
  const model = weatherModel({ fault: (call) => (call === FAIL_AT ? error : undefined) });
  const { agent } = middlewareAgent(model, { mode, recoverOverflow: false });
  await ask(agent, "t", HISTORY);
  expect(providerErrorOf(await rejectionOf(agent.invoke(question("And in Oslo?"), thread("t"))))).toBe(error);
  expect(model.calls).toHaveLength(FAIL_AT + 1);
});

test("commit mode writes the retry's compaction to the checkpointed state", async () => {
  for (const setup of ["middleware commit"] as const) {
    const { agent } = await refusedOnce(setup, PROVIDERS[3]!);
    const state = (await agent.getState(thread("t"))).values as { messages: BaseMessage[] };
    expect(state.messages.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(state.messages.filter((m) => m.type === "human" && !isOmissionNote(m)).length).toBeLessThan(HISTORY + 1);
    expect(toolPairingProblems(state.messages)).toEqual([]);
  }
});
/**
 * A provider whose real window is smaller than the one configured and whose
 * tokenizer counts twice what ours does: it refuses every request over its
 * window, reporting its count and limit as Anthropic does, and reports usage
 * in its own counts.
 */
function hiddenWindowModel(limit: number, errors: unknown[]): { model: ScriptedChatModel; refusals: number[] } {
  const refusals: number[] = [];
  const providerCount = (messages: BaseMessage[]) => 2 * approximateTokenCounter(messages);
  let model: ScriptedChatModel;
  const fault: Fault = (call) => {
    // The model's usage counter is the provider's, so this is the request as the provider counts it.
    const tokens = model.requestTokens(model.calls[call]!)!;
    if (tokens <= limit) return undefined;
    refusals.push(call);
    const error = Object.assign(new Error(`400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: ${tokens} tokens > ${limit} maximum"}}`), { status: 400 });
    errors.push(error);
    return error;
  };
  // Usage as the provider reports it: in its own counts.
  model = weatherModel({ fault, usage: providerCount });
  return { model, refusals };
}

describe.each(SETUPS)("%s, on a provider with a smaller hidden window", (setup) => {
  test("one refusal, then every later request fits the provider's window", async () => {
    const errors: unknown[] = [];
    // Configured: 8,000 tokens (the trigger never fires on its own before the provider refuses); real: 3,000 of its tokens.
    const { model, refusals } = hiddenWindowModel(3_000, errors);
    const agent = build(setup, model, { contextWindow: 8_000 });
    await ask(agent, "t", 16);
    expect(model.calls.length).toBeGreaterThanOrEqual(32);
    expect(refusals.length).toBeGreaterThan(0);
    // Once the provider has said what it counts and where its limit is, it is not refused again.
    expect(refusals).toHaveLength(1);
  });
});

describe.each(["view", "commit"] as const)("a custom StateGraph (compaction node, then a model node calling withOverflowRecovery's model), %s mode", (mode) => {
  test("on a provider with a smaller hidden window: one refusal, every later request fits", async () => {
    const errors: unknown[] = [];
    const { model, refusals } = hiddenWindowModel(3_000, errors);
    const node = createCompactionNode({ contextWindow: 8_000, mode });
    const llm = withOverflowRecovery(model, node);
    const graph = new StateGraph(CompactionGraphAnnotation)
      .addNode("compact", node)
      .addNode("model", async (state: typeof CompactionGraphAnnotation.State) => ({
        messages: [await llm.invoke(mode === "view" ? state.llmInputMessages : state.messages)],
      }))
      .addEdge(START, "compact")
      .addEdge("compact", "model")
      .addEdge("model", END)
      .compile({ checkpointer: new MemorySaver() });
    // A chat without tools: every turn is a question and a long answer.
    for (let turn = 0; turn < 20; turn += 1) {
      await graph.invoke({ messages: [new HumanMessage(`Tell me about city ${turn}. ${"Be thorough. ".repeat(20)}`)] }, { configurable: { thread_id: "g" } });
    }
    expect(model.calls.length).toBeGreaterThanOrEqual(20);
    expect(refusals).toHaveLength(1);
    const state = (await graph.getState({ configurable: { thread_id: "g" } })).values as { messages: BaseMessage[] };
    const questions = state.messages.filter((m) => m.type === "human" && !isOmissionNote(m)).length;
    // View mode keeps the state whole; commit mode has compacted it.
    if (mode === "view") expect(questions).toBe(20);
    else expect(questions).toBeLessThan(20);
  });
});
