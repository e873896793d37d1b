/**
 * Every stage through the real graphs: `createReactAgent` with the
 * compaction node as pre-model hook (its default state, and
 * `CompactionAnnotation`), and `createAgent` with the compaction middleware,
 * in view mode and in commit mode, with the pruning, summarization and
 * offloading pipelines (each ending in the sliding window), over a
 * `MemorySaver`. A scripted model records every request; the rules are
 * checked on those requests and on the checkpoints.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { approximateTokenCounter, DEFAULT_OFFLOAD_NAMESPACE, isCompactionMessage, SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import type { ScriptedCall, ScriptedChatModel } from "../../src/testing";
import { assertConvertsEverywhere } from "../support/providers";
import {
  agentModel,
  buildAgent,
  checkpointMessages,
  COMPACT_AT,
  compactionOf,
  CONTEXT_WINDOW,
  contentKey,
  isPrefixOf,
  logText,
  messageKey,
  RecordingCompactor,
  runTasks,
  stageKit,
  STRATEGY,
} from "../support/stage-agents";
import type { AgentGraph, Integration, RecordedCompaction, StageKit, StageName } from "../support/stage-agents";

const TASKS = 10;
const STAGES: StageName[] = ["pruning", "summarization", "offloading"];
const TRIGGER = CONTEXT_WINDOW * COMPACT_AT;

interface Run {
  model: ScriptedChatModel;
  kit: StageKit;
  recorder: RecordingCompactor;
  agent: AgentGraph;
  history: BaseMessage[];
  checkpoints: BaseMessage[][];
}

async function run(integration: Integration, stage: StageName, mode: "view" | "commit", minGainTokens = 0): Promise<Run> {
  const model = agentModel();
  const kit = stageKit(stage);
  const recorder = new RecordingCompactor(kit.stages, model);
  const agent = buildAgent(integration, model, { mode, compactor: recorder, minGainTokens });
  await runTasks(agent, "thread", 0, TASKS);
  const history = ((await agent.getState({ configurable: { thread_id: "thread" } })).values as { messages: BaseMessage[] }).messages;
  return { model, kit, recorder, agent, history, checkpoints: await checkpointMessages(agent, "thread") };
}

const keys = (messages: readonly BaseMessage[]) => messages.map(messageKey);
/** A request without the system prompt the agent puts in front of it. */
const conversationOf = (call: ScriptedCall) => call.messages.filter((m, index) => !(index === 0 && SystemMessage.isInstance(m)));

/** Every request passes the strict ordering check and every provider's converter, and fits the window. */
function expectRequestsValid(model: ScriptedChatModel): void {
  for (const [index, call] of model.calls.entries()) {
    expect(() => assertConvertsEverywhere(call.messages)).not.toThrow();
    if (model.requestTokens(call)! >= CONTEXT_WINDOW) throw new Error(`request ${index} has ${model.requestTokens(call)} tokens, the window is ${CONTEXT_WINDOW}`);
  }
}

/** The model calls a compaction was applied before. */
function compactedCalls(records: readonly RecordedCompaction[]): Set<number> {
  return new Set(records.map((record) => record.beforeCall));
}

/**
 * Between two compactions each request is the previous one plus what is new,
 * rewritten and added messages included (compared by kind, id, content and
 * metadata); and a compaction is never needed at the very next call (the
 * hysteresis: the view it left is well under the trigger).
 */
function expectStablePrefix(model: ScriptedChatModel, records: readonly RecordedCompaction[]): void {
  const compacted = compactedCalls(records);
  for (let call = 1; call < model.calls.length; call += 1) {
    if (compacted.has(call)) {
      expect(compacted.has(call - 1)).toBe(false);
      continue;
    }
    if (!isPrefixOf(keys(model.calls[call - 1]!.messages), keys(model.calls[call]!.messages))) {
      throw new Error(`request ${call} does not extend request ${call - 1}, and no compaction ran in between`);
    }
  }
}

/** The history the agent produced, as it was produced: every task, every reply, every tool result whole. */
function expectOriginalHistory(history: readonly BaseMessage[], model: ScriptedChatModel): void {
  expect(history.filter((m) => compactionOf(m) !== null)).toEqual([]);
  expect(history.filter((m) => m.type === "human").map((m) => m.id)).toEqual(Array.from({ length: TASKS }, (_, task) => `task-${task}`));
  expect(history.filter((m) => AIMessage.isInstance(m)).map((m) => m.id)).toEqual(model.calls.map((_, call) => `scripted-${call}`));
  const files = new Map<string, string>();
  for (const message of history) {
    if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) files.set(call.id!, (call.args as { file: string }).file);
  }
  const results = history.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  expect(results).toHaveLength(2 * TASKS);
  for (const result of results) expect(result.content).toBe(logText(files.get(result.tool_call_id)!));
  expect(history).toHaveLength(TASKS + model.calls.length + 2 * TASKS);
}

/** The checkpoint right after the compaction node applied `record` (the first one after the last holding its input). */
function checkpointAfter(checkpoints: readonly BaseMessage[][], record: RecordedCompaction): BaseMessage[] {
  const input = keys(record.input).join("\n");
  let at = -1;
  checkpoints.forEach((messages, index) => {
    if (keys(messages).join("\n") === input) at = index;
  });
  if (at < 0 || at + 1 >= checkpoints.length) throw new Error(`no checkpoint holds the input of the compaction before call ${record.beforeCall}`);
  return checkpoints[at + 1]!;
}

/**
 * Commit mode, one compaction: the checkpointed state is the compaction's
 * result; a rewritten message stands where its original stood, under its id;
 * an added summary or note took over the id of a removed message between the
 * same kept neighbours (its place); nothing else is gone.
 */
function expectCommitted(record: RecordedCompaction, after: readonly BaseMessage[]): void {
  const { input, report } = record;
  const result = report.messages!;
  expect(after.map(contentKey)).toEqual(result.map(contentKey));
  const positionOf = new Map(input.map((message, index) => [message.id!, index]));
  const removedIds = new Set(report.removed.map((message) => message.id!));
  const originalOf = new Map(report.rewritten.map(({ original, replacement }) => [replacement, original]));
  const added = new Set(report.added);
  const hosts: string[] = [];
  result.forEach((message, index) => {
    const stored = after[index]!;
    if (originalOf.has(message)) {
      expect(stored.id).toBe(originalOf.get(message)!.id);
      return;
    }
    if (!added.has(message)) {
      expect(stored.id).toBe(message.id);
      return;
    }
    expect(removedIds.has(stored.id!)).toBe(true);
    hosts.push(stored.id!);
    // Its place: between the input positions of its kept neighbours in the result.
    const before = after.slice(0, index).reverse().find((m) => !removedIds.has(m.id!));
    const next = after.slice(index + 1).find((m) => !removedIds.has(m.id!));
    const host = positionOf.get(stored.id!)!;
    if (before !== undefined) expect(host).toBeGreaterThan(positionOf.get(before.id!)!);
    if (next !== undefined) expect(host).toBeLessThan(positionOf.get(next.id!)!);
  });
  expect(new Set(hosts).size).toBe(report.added.length);
  expect(after.filter((m) => removedIds.has(m.id!)).map((m) => m.id)).toEqual(hosts);
  const stillThere = new Set(after.map((m) => m.id));
  expect(input.filter((m) => !removedIds.has(m.id!) && !stillThere.has(m.id))).toEqual([]);
  expect(report.keptCount + report.removed.length).toBe(input.length);
}

const viewCases: [Integration, StageName][] = (["createReactAgent", "createReactAgent+CompactionAnnotation", "createAgent"] as const).flatMap(
  (integration) => STAGES.map((stage): [Integration, StageName] => [integration, stage]),
);

describe("view mode through the real graphs", () => {
  test.each(viewCases)("%s, %s pipeline: requests rewritten and valid, the state untouched, the prefix stable", async (integration, stage) => {
    const { model, kit, recorder, history, checkpoints } = await run(integration, stage, "view");

    // The run needs compaction: the full history is over the window, and several compactions ran.
    expect(approximateTokenCounter(history)).toBeGreaterThan(CONTEXT_WINDOW);
    expect(recorder.records.length).toBeGreaterThanOrEqual(2);
    expect(recorder.records.some((record) => record.report.stages.some((s) => s.strategy === STRATEGY[stage] && s.messages !== null))).toBe(true);
    expectRequestsValid(model);

    // The state and every checkpoint keep the history as produced: each checkpoint a prefix of the final state.
    expectOriginalHistory(history, model);
    for (const messages of checkpoints) expect(isPrefixOf(keys(messages), keys(history))).toBe(true);

    // The requests carry what the stage wrote; a rewritten result has the id of a state message that still holds the original.
    const written = model.calls.flatMap((call) => call.messages).filter((m) => compactionOf(m)?.strategy === STRATEGY[stage]);
    expect(written.length).toBeGreaterThan(0);
    const byId = new Map(history.map((m) => [m.id, m]));
    for (const message of written.filter((m) => ToolMessage.isInstance(m))) {
      const original = byId.get(message.id)!;
      expect(ToolMessage.isInstance(original) && original.tool_call_id).toBe((message as ToolMessage).tool_call_id);
      expect(original.content).not.toBe(message.content);
      expect(original.content).toBe(logText(String(original.content).split("\n")[0]!));
    }
    if (stage === "offloading") {
      for (const message of written) {
        const key = String(compactionOf(message)!.key);
        const item = await kit.store!.get([...DEFAULT_OFFLOAD_NAMESPACE], key);
        expect(item?.value.content).toBe(byId.get(message.id)!.content);
      }
    }
    if (stage === "summarization") expect(kit.summaries!.calls.length).toBeGreaterThan(0);

    expectStablePrefix(model, recorder.records);
  }, 60_000);

  test("an array of stages is the pipeline: the same requests as the pipeline itself", async () => {
    const recorded = await run("createReactAgent", "pruning", "view");
    const model = agentModel();
    const agent = buildAgent("createReactAgent", model, { mode: "view", compactor: [new ToolResultPruningCompactor(), new SlidingWindowCompactor()] });
    await runTasks(agent, "thread", 0, TASKS);
    expect(model.calls.map((call) => call.messages.map(contentKey))).toEqual(recorded.model.calls.map((call) => call.messages.map(contentKey)));
    expect(model.calls.some((call) => call.messages.some(isCompactionMessage))).toBe(true);
  }, 60_000);
});

const commitCases: [Integration, StageName][] = (["createReactAgent", "createAgent"] as const).flatMap((integration) =>
  STAGES.map((stage): [Integration, StageName] => [integration, stage]),
);

describe("commit mode through the real graphs", () => {
  test.each(commitCases)("%s, %s pipeline: the checkpointed state is rewritten in place, by id, and loses nothing else", async (integration, stage) => {
    const { model, recorder, history, checkpoints } = await run(integration, stage, "commit");

    expect(recorder.records.length).toBeGreaterThanOrEqual(2);
    expectRequestsValid(model);
    expectStablePrefix(model, recorder.records);

    for (const record of recorder.records) expectCommitted(record, checkpointAfter(checkpoints, record));

    // The state holds what the stage wrote, and the model was sent the state.
    expect(history.some((m) => compactionOf(m)?.strategy === STRATEGY[stage])).toBe(true);
    expect(keys(conversationOf(model.calls.at(-1)!))).toEqual(keys(history.slice(0, -1)));

    // Over the whole run, every reply and every tool result is in the state or was removed by a recorded compaction.
    const removed = new Set(recorder.records.flatMap((record) => record.report.removed.map((m) => m.id)));
    const kept = new Set(history.map((m) => m.id));
    for (let call = 0; call < model.calls.length; call += 1) {
      const id = `scripted-${call}`;
      expect(kept.has(id) || removed.has(id)).toBe(true);
    }
    const results = model.calls.flatMap((call) => call.messages).filter((m) => ToolMessage.isInstance(m));
    for (const result of results) expect(kept.has(result.id) || removed.has(result.id)).toBe(true);
  }, 60_000);
});

describe("minGainTokens through the integrations", () => {
  test.each(["createReactAgent", "createAgent"] as const)("%s: a compaction freeing fewer tokens is not applied; the model gets the unmodified list", async (integration) => {
    const { model, recorder, history } = await run(integration, "pruning", "view", 1_000_000);

    // Compaction was due, and was computed.
    expect(model.calls.some((call) => model.requestTokens(call)! >= TRIGGER)).toBe(true);
    expect(recorder.records.length).toBeGreaterThan(0);

    // None was applied: every request is the whole history so far, unmodified.
    expectOriginalHistory(history, model);
    for (const [index, call] of model.calls.entries()) {
      expect(call.messages.filter((m) => compactionOf(m) !== null)).toEqual([]);
      const upTo = history.findIndex((m) => m.id === `scripted-${index}`);
      expect(keys(conversationOf(call))).toEqual(keys(history.slice(0, upTo)));
    }
  }, 60_000);

  test("a threshold between the gains: exactly the compactions freeing at least minGainTokens are applied", async () => {
    const free = await run("createReactAgent", "pruning", "view");
    const gains = free.recorder.records.map(({ report }) => report.tokensBefore - report.tokensAfter);
    const threshold = Math.max(...gains) + 1;
    // With the threshold above every gain of a run without one, the first compactions due are declined...
    const { model, recorder } = await run("createReactAgent", "pruning", "view", threshold);
    expect(recorder.records.length).toBeGreaterThan(0);
    for (const { beforeCall, report } of recorder.records) {
      const request = keys(conversationOf(model.calls[beforeCall]!));
      const shown = keys(report.messages!);
      const gain = report.tokensBefore - report.tokensAfter;
      // ...and each computed compaction reached the model exactly when it freed enough.
      expect(request.join("\n") === shown.join("\n")).toBe(gain >= threshold);
    }
    // Both happened: declined while the view grew, applied once it had grown enough.
    expect(recorder.records.some(({ report }) => report.tokensBefore - report.tokensAfter < threshold)).toBe(true);
    expect(recorder.records.some(({ report }) => report.tokensBefore - report.tokensAfter >= threshold)).toBe(true);
  }, 60_000);
});
