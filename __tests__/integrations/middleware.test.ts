/**
 * compactionMiddleware on a real `createAgent` agent from `langchain`, with a
 * real tool, a MemorySaver checkpointer and a scripted model that records
 * every request and reports usage as a provider would.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, createMiddleware } from "langchain";
import { z } from "zod/v4";
import { approximateTokenCounter, isCompactionMessage, isOmissionNote, SummarizationCompactor } from "../../src";
import type { CompactionView } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";
import type { CompactionMiddlewareOptions } from "../../src/integrations/middleware";
import { anthropicModel } from "../support/provider-wire";
import { ScriptedChatModel } from "../../src/testing";
import type { ScriptedCall } from "../../src/testing";
import { toolPairingProblems } from "../support/tool-pairing";
import { diagnostic } from "../support/diagnostics";

const SYSTEM_PROMPT = `You are a weather assistant. ${"Answer briefly and cite the tool output. ".repeat(8)}`;
const CONTEXT_WINDOW = 3_000;
const TRIGGER = CONTEXT_WINDOW * 0.7;

const weather = tool(async ({ city }: { city: string }) => `${city}: ${"sunny, 24 degrees, light wind from the west; ".repeat(14)}`, {
  name: "weather",
  description: "The weather forecast for a city.",
  schema: z.object({ city: z.string().describe("The city") }),
});

/** Calls the tool for a new task, answers once the tool result is in. */
function scriptedModel(idPrefix = "scripted"): ScriptedChatModel {
  return new ScriptedChatModel({
    usage: approximateTokenCounter,
    idPrefix,
    reply: (messages, call) => {
      const last = messages.at(-1)!;
      if (last.type === "tool") return `Forecast noted (answer ${call}).`;
      return { content: "", tool_calls: [{ id: `call-${call}`, name: "weather", args: { city: `City${call}` } }] };
    },
  });
}

function buildAgent(model: ScriptedChatModel, checkpointer: MemorySaver, options: Partial<CompactionMiddlewareOptions>, spies = false) {
  const seenState: { before: string[]; after: string[]; handedSame: boolean }[] = [];
  // Outer spy: the state's messages before and after the inner middleware ran.
  const outer = createMiddleware({
    name: "OuterSpy",
    wrapModelCall: async (request, handler) => {
      const before = request.state.messages.map((m) => `${m.id}:${m.text}`);
      const response = await handler(request);
      seenState.push({ before, after: request.state.messages.map((m) => `${m.id}:${m.text}`), handedSame: false });
      return response;
    },
  });
  // Inner spy: whether the array the model gets is the state's own array.
  const inner = createMiddleware({
    name: "InnerSpy",
    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      handed.push(request.messages === request.state.messages);
      return response;
    },
  });
  const handed: boolean[] = [];
  const middleware = spies
    ? [outer, compactionMiddleware({ contextWindow: CONTEXT_WINDOW, ...options }), inner]
    : [compactionMiddleware({ contextWindow: CONTEXT_WINDOW, ...options })];
  const agent = createAgent({ model, tools: [weather], systemPrompt: SYSTEM_PROMPT, middleware, checkpointer });
  return { agent, seenState, handed };
}

const ids = (messages: readonly BaseMessage[]) => messages.map((m) => m.id);

function isPrefix(shorter: readonly (string | undefined)[], longer: readonly (string | undefined)[]): boolean {
  return shorter.length <= longer.length && shorter.every((id, index) => longer[index] === id);
}

/** The checks every request must pass: system prompt first, valid tool pairing, within the trigger, newest message last. */
function checkRequest(model: ScriptedChatModel, call: ScriptedCall, newestId: string | undefined): void {
  expect(call.messages[0]).toBeInstanceOf(SystemMessage);
  expect(call.messages[0]!.text).toBe(SYSTEM_PROMPT);
  expect(toolPairingProblems(call.messages)).toEqual([]);
  expect(model.requestTokens(call)!).toBeLessThan(TRIGGER);
  expect(call.messages.at(-1)!.id).toBe(newestId);
}

async function runTurns(agent: ReturnType<typeof buildAgent>["agent"], thread: string, from: number, turns: number) {
  for (let turn = from; turn < from + turns; turn += 1) {
    await agent.invoke({ messages: [new HumanMessage({ content: `Task ${turn}: what is the weather?`, id: `task-${turn}` })] }, { configurable: { thread_id: thread } });
  }
}

/** The message right before each model reply in the full history: the newest message that call had to see. */
function newestBefore(history: readonly BaseMessage[], call: number): string | undefined {
  const at = history.findIndex((m) => m.id === `scripted-${call}`);
  return at > 0 ? history[at - 1]!.id : undefined;
}

describe("compactionMiddleware, view mode", () => {
  test("the model sees a compacted request, the state keeps everything, and the cut stays put", async () => {
    const model = scriptedModel();
    const checkpointer = new MemorySaver();
    const { agent, seenState, handed } = buildAgent(model, checkpointer, {}, true);
    const turns = 20;
    await runTurns(agent, "view-thread", 0, turns);

    const state = await agent.graph.getState({ configurable: { thread_id: "view-thread" } });
    const history = state.values.messages as BaseMessage[];
    // Full history: 4 messages per turn, no note, nothing removed.
    expect(history).toHaveLength(turns * 4);
    expect(history.some((m) => isOmissionNote(m))).toBe(false);
    for (let turn = 0; turn < turns; turn += 1) {
      expect(history[turn * 4]!.id).toBe(`task-${turn}`);
      expect(history[turn * 4 + 2]!.text).toContain(`City${turn * 2}: sunny`);
    }
    // The history outgrows the trigger: without compaction the later requests would not fit.
    expect(approximateTokenCounter(history)).toBeGreaterThan(TRIGGER);

    expect(model.calls).toHaveLength(turns * 2);
    let compactions = 0;
    model.calls.forEach((call, index) => {
      checkRequest(model, call, newestBefore(history, index));
      const sawNote = call.messages.some((m) => isOmissionNote(m));
      if (index > 0 && !isPrefix(ids(model.calls[index - 1]!.messages), ids(call.messages))) {
        compactions += 1;
        expect(sawNote).toBe(true);
        // Right after a compaction the whole request, system prompt and tool schemas included, is at the
        // target (the note aside): the overhead was taken off the message budget.
        const note = call.messages.find((m) => isOmissionNote(m))!;
        expect(model.requestTokens(call)!).toBeLessThanOrEqual(Math.floor(CONTEXT_WINDOW * 0.4) + approximateTokenCounter([note]));
      }
    });
    // Hysteresis: a few compactions, and between them each request extends the previous one.
    diagnostic(`view mode: ${model.calls.length} model calls, ${compactions} compactions`);
    expect(compactions).toBeGreaterThanOrEqual(2);
    expect(compactions).toBeLessThan(model.calls.length / 3);

    // The state array was never edited, and the model got a different array.
    for (const { before, after } of seenState) expect(after).toEqual(before);
    expect(handed.length).toBe(model.calls.length);
    expect(handed.every((same) => same === false)).toBe(true);

    // The remembered cut is checkpointed, note included.
    const view = state.values._compactionView as CompactionView | undefined;
    expect(view?.hiddenIds.length).toBeGreaterThan(0);
    expect(view?.added?.map(({ message }) => isOmissionNote(message))).toEqual([true]);
  });

  test("a new agent on the same checkpointer resumes the thread with the same cut", async () => {
    const model = scriptedModel();
    const checkpointer = new MemorySaver();
    const first = buildAgent(model, checkpointer, {});
    await runTurns(first.agent, "resume-thread", 0, 10);
    const lastSeen = ids(model.calls.at(-1)!.messages);
    expect(model.calls.at(-1)!.messages.some((m) => isOmissionNote(m))).toBe(true);

    const resumedModel = scriptedModel("resumed");
    const resumed = buildAgent(resumedModel, checkpointer, {});
    await runTurns(resumed.agent, "resume-thread", 10, 1);
    // No new compaction was due, so the resumed request extends the last one seen before.
    const resumedRequest = resumedModel.calls[0]!.messages;
    expect(isPrefix(lastSeen, ids(resumedRequest))).toBe(true);
    // The note came back from the checkpoint as a note, and the hidden messages stayed hidden.
    expect(resumedRequest.filter((m) => isOmissionNote(m))).toHaveLength(1);
    expect(resumedRequest.some((m) => m.id === "task-0")).toBe(false);
    const history = (await resumed.agent.graph.getState({ configurable: { thread_id: "resume-thread" } })).values.messages as BaseMessage[];
    expect(history).toHaveLength(11 * 4);
  });
});

describe("compactionMiddleware, commit mode", () => {
  test("the state is compacted with RemoveMessages and a note in place; what remains is unchanged", async () => {
    const model = scriptedModel();
    const checkpointer = new MemorySaver();
    const { agent } = buildAgent(model, checkpointer, { mode: "commit" });
    const turns = 20;
    await runTurns(agent, "commit-thread", 0, turns);
    const history = (await agent.graph.getState({ configurable: { thread_id: "commit-thread" } })).values.messages as BaseMessage[];

    expect(history.length).toBeLessThan(turns * 4);
    const notes = history.filter((m) => isOmissionNote(m));
    expect(notes).toHaveLength(1);
    expect(history[0]).toBe(notes[0]);
    expect(toolPairingProblems(history)).toEqual([]);
    // What is left is the newest messages, in order, as they were written: a suffix of the full run.
    const rest = history.slice(1);
    const lastTurn = turns - 1;
    expect(rest.at(-1)!.id).toBe(`scripted-${lastTurn * 2 + 1}`);
    const firstKept = Number(/task-(\d+)/.exec(rest[0]!.id ?? "")?.[1]);
    expect(Number.isInteger(firstKept)).toBe(true);
    expect(rest).toHaveLength((turns - firstKept) * 4);
    rest.forEach((message, index) => {
      const turn = firstKept + Math.floor(index / 4);
      const expected = [`task-${turn}`, `scripted-${turn * 2}`, undefined, `scripted-${turn * 2 + 1}`][index % 4];
      if (expected !== undefined) expect(message.id).toBe(expected);
      else expect(message.text).toContain(`City${turn * 2}: sunny`);
    });
    // The note counts every message removed so far.
    const removed = (notes[0]!.response_metadata as { compaction: { removed_messages: number } }).compaction.removed_messages;
    expect(removed).toBe(firstKept * 4);

    const state = (await agent.graph.getState({ configurable: { thread_id: "commit-thread" } })).values as { _compactionOverhead?: number };
    expect(state._compactionOverhead).toBeGreaterThan(approximateTokenCounter([new SystemMessage(SYSTEM_PROMPT)]));
    model.calls.forEach((call, index) => {
      const note = call.messages.find((m) => isOmissionNote(m));
      if (note !== undefined && !model.calls[index - 1]!.messages.some((m) => isOmissionNote(m) && m.text === note.text)) {
        expect(model.requestTokens(call)!).toBeLessThanOrEqual(Math.floor(CONTEXT_WINDOW * 0.4) + approximateTokenCounter([note]));
      }
      expect(call.messages[0]!.text).toBe(SYSTEM_PROMPT);
      expect(toolPairingProblems(call.messages)).toEqual([]);
      expect(model.requestTokens(call)!).toBeLessThan(TRIGGER);
    });
    expect(model.calls.filter((call) => call.messages.some((m) => isOmissionNote(m))).length).toBeGreaterThan(0);
  });
});

describe("compactionMiddleware, commit mode, with a summary model that thinks", () => {
  const SECRET = "SECRET-REASONING about the weather";
  const thinking = { type: "thinking", thinking: SECRET, signature: "sig" };

  /** 20 turns in commit mode whose only stage is a summary by ChatAnthropic with thinking, answering `content` offline. */
  async function run(content: unknown[], thread: string) {
    const summaries = anthropicModel(content, { maxTokens: 8000, thinking: { type: "enabled", budget_tokens: 2048 } });
    const { agent } = buildAgent(scriptedModel(), new MemorySaver(), { mode: "commit", compactor: new SummarizationCompactor({ model: summaries.model }) });
    await runTurns(agent, thread, 0, 20);
    const history = (await agent.graph.getState({ configurable: { thread_id: thread } })).values.messages as BaseMessage[];
    return { history, requests: summaries.requests };
  }

  test("a reply of thinking alone is no summary: the state keeps every message", async () => {
    const { history, requests } = await run([thinking], "thinking-only");
    // Compaction was due and the summary model was asked, every time it was due.
    expect(requests.length).toBeGreaterThan(1);
    expect(history).toHaveLength(20 * 4);
    expect(history.map((message) => message.id).filter((id) => id?.startsWith("task-"))).toEqual(Array.from({ length: 20 }, (_, turn) => `task-${turn}`));
    expect(history.some((message) => isCompactionMessage(message))).toBe(false);
    expect(history.some((message) => JSON.stringify(message.content).includes(SECRET) || JSON.stringify(message.content).includes("<thinking>"))).toBe(false);
    expect(toolPairingProblems(history)).toEqual([]);
  });

  test("the same run with text after the thinking is summarized, with the text alone; every request keeps the budget below max_tokens", async () => {
    const { history, requests } = await run([thinking, { type: "text", text: "## Objective\n- weather of many cities" }], "thinking-and-text");
    expect(history.length).toBeLessThan(20 * 4);
    const summaries = history.filter((message) => isCompactionMessage(message));
    expect(summaries.length).toBeGreaterThan(0);
    for (const summary of summaries) expect(summary.content).toBe("<conversation_summary>\n## Objective\n- weather of many cities\n</conversation_summary>");
    expect(history.some((message) => JSON.stringify(message.content).includes(SECRET))).toBe(false);
    expect(requests.length).toBeGreaterThan(0);
    for (const { body } of requests) {
      const budget = (body.thinking as { budget_tokens: number }).budget_tokens;
      expect(budget).toBe(2048);
      expect(body.max_tokens as number).toBeGreaterThan(budget);
    }
  });
});

describe("compactionMiddleware options", () => {
  test("bad options are typed errors naming the value", () => {
    expect(() => compactionMiddleware(null as unknown as CompactionMiddlewareOptions)).toThrow(TypeError);
    expect(() => compactionMiddleware({ contextWindow: 1000, mode: "edit" as "view" })).toThrow(/`mode`.*"edit"/);
    expect(() => compactionMiddleware({ contextWindow: 0 })).toThrow(RangeError);
    expect(() => compactionMiddleware({ contextWindow: 1000, compactAt: 0.3, compactTo: 0.5 })).toThrow(/compactTo/);
  });
});

describe("packaging", () => {
  test("the main entry does not load langchain; the middleware entry does", () => {
    const root = join(__dirname, "..", "..");
    const probe = (entry: string) =>
      execFileSync(
        process.execPath,
        ["--import", "tsx", "-e", `require(${JSON.stringify(entry)}); console.log(Object.keys(require.cache).some((k) => /node_modules[\\\\/]langchain[\\\\/]/.test(k)))`],
        { cwd: root, encoding: "utf8" },
      ).trim();
    expect(probe("./src/index.ts")).toBe("false");
    expect(probe("./src/integrations/middleware.ts")).toBe("true");
  });
});
