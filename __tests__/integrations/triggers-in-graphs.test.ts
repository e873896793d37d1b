/**
 * Triggers on messages and on user turns, combined with any/all, with a
 * target in the same units, on real graphs with a checkpointer: the
 * middleware and the node, view and commit mode. The window is large, so
 * tokens alone would never compact: what the model is sent is bounded by
 * the trigger, and a compaction keeps what the target says.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { isCompactionMessage } from "../../src";
import type { CompactionTarget, CompactionTrigger } from "../../src";
import type { ScriptedChatModel } from "../../src/testing";
import { ask, middlewareAgent, nodeAgent, thread, weatherModel } from "../support/runtime-agents";
import type { AgentGraph } from "../support/runtime-agents";
import { toolPairingProblems } from "../support/tool-pairing";

const WINDOW = 1_000_000;
const QUESTIONS = 10;

type Setup = "middleware view" | "middleware commit" | "node view" | "node commit";
const SETUPS: Setup[] = ["middleware view", "middleware commit", "node view", "node commit"];

function build(setup: Setup, model: ScriptedChatModel, trigger: CompactionTrigger, target: CompactionTarget): AgentGraph {
  const mode = setup.endsWith("commit") ? "commit" : "view";
  const options = { contextWindow: WINDOW, mode, trigger, target } as const;
  return setup.startsWith("middleware") ? middlewareAgent(model, options).agent : nodeAgent(model, options).agent;
}

/** The conversation of a request: no system prompt. */
const conversation = (messages: BaseMessage[]) => messages.filter((m) => m.type !== "system");
/** The real user turns: human messages that are not a compaction's note or summary. */
const turns = (messages: BaseMessage[]) => messages.filter((m) => m.type === "human" && !isCompactionMessage(m)).length;
const compacted = (messages: BaseMessage[]) => messages.some((m) => isCompactionMessage(m));

describe.each(SETUPS)("%s", (setup) => {
  test("{ messages: 12 } down to { messages: 6 }: no request reaches 12 messages, and a compaction keeps at most 6", async () => {
    const model = weatherModel();
    const agent = build(setup, model, { messages: 12 }, { messages: 6 });
    await ask(agent, "t", QUESTIONS);
    const requests = model.calls.map((call) => conversation(call.messages));
    // Without compaction the last request would hold 4 × 10 - 1 messages.
    for (const request of requests) expect(request.length).toBeLessThan(12);
    const first = requests.find((request) => compacted(request))!;
    expect(first).toBeDefined();
    expect(first.filter((m) => !isCompactionMessage(m)).length).toBeLessThanOrEqual(6);
    for (const request of requests) expect(toolPairingProblems(request)).toEqual([]);
  });

  test("{ turns: 4 } down to { turns: 2 }: no request holds 4 user turns; a compaction keeps the newest 2", async () => {
    const model = weatherModel();
    const agent = build(setup, model, { turns: 4 }, { turns: 2 });
    await ask(agent, "t", QUESTIONS);
    const requests = model.calls.map((call) => conversation(call.messages));
    for (const request of requests) expect(turns(request)).toBeLessThan(4);
    const first = requests.find((request) => compacted(request))!;
    expect(turns(first)).toBe(2);
    // The newest question is always there.
    const lastAsked = `What is the weather in place ${QUESTIONS - 1}?`;
    expect(requests.at(-1)!.some((m) => m.text === lastAsked)).toBe(true);
    if (setup.endsWith("commit")) {
      const state = ((await agent.getState(thread("t"))).values as { messages: BaseMessage[] }).messages;
      expect(turns(state)).toBeLessThanOrEqual(4);
      expect(compacted(state)).toBe(true);
    }
  });

  test("any: the first condition that holds fires; all: every one must hold", async () => {
    const anyModel = weatherModel();
    await ask(build(setup, anyModel, { any: [{ tokens: WINDOW / 2 }, { turns: 4 }] }, { turns: 2 }), "t", QUESTIONS);
    expect(anyModel.calls.some((call) => compacted(call.messages))).toBe(true);
    for (const call of anyModel.calls) expect(turns(conversation(call.messages))).toBeLessThan(4);

    // Four turns are reached, the tokens never: nothing compacts.
    const allModel = weatherModel();
    await ask(build(setup, allModel, { all: [{ turns: 4 }, { tokens: WINDOW / 2 }] }, { turns: 2 }), "t", QUESTIONS);
    expect(allModel.calls.some((call) => compacted(call.messages))).toBe(false);
    expect(turns(conversation(allModel.calls.at(-1)!.messages))).toBe(QUESTIONS);

    // Both hold: it compacts.
    const bothModel = weatherModel();
    await ask(build(setup, bothModel, { all: [{ turns: 4 }, { messages: 10 }] }, { turns: 2 }), "t", QUESTIONS);
    expect(bothModel.calls.some((call) => compacted(call.messages))).toBe(true);
  });
});
