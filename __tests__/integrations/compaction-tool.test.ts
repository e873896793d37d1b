/**
 * The compaction tool on real graphs with a checkpointer: `createAgent` with
 * the middleware, and `createReactAgent` with the node (view and commit
 * mode). The scripted agent calls the tool with instructions when the user
 * asks; the next model call must compact with those instructions in the
 * summary model's prompt; below `minFraction` of the trigger the tool
 * refuses with a clear result and nothing compacts; an automatic compaction
 * and a requested one are never made twice in a row.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { COMPACTION_EVENT, COMPACTION_TOOL_NAME, createCompactionTool, isCompactionMessage, SlidingWindowCompactor, SummarizationCompactor } from "../../src";
import { CompactionAnnotation, createCompactionNode, withOverflowRecovery } from "../../src/integrations/langgraph";
import { compactionMiddleware } from "../../src/integrations/middleware";
import type { ScriptedChatModel } from "../../src/testing";
import { ask, CONTEXT_WINDOW, eventListener, question, SYSTEM_PROMPT, thread, weather, weatherModel } from "../support/runtime-agents";
import type { AgentGraph, HeardEvent } from "../support/runtime-agents";
import { toolPairingProblems } from "../support/tool-pairing";
import { ScriptedSummaryModel } from "../support/summary-model";

const INSTRUCTIONS = "keep the API decisions: v2 endpoints, no pagination";
const ASK = "Compact the conversation now.";

/**
 * Calls the compaction tool when asked to, then answers; otherwise the weather script. With `afterCompaction`, it
 * also calls the tool, once, at the first request it sees compacted (as a model might, to compact again).
 */
function model(afterCompaction = false): ScriptedChatModel {
  let asked = false;
  return weatherModel({
    script: (messages) => {
      const last = messages.at(-1)!;
      if (last.type === "human" && last.text === ASK) return { content: "", tool_calls: [{ name: COMPACTION_TOOL_NAME, args: { instructions: INSTRUCTIONS } }] };
      if (last.type === "tool" && (last as { name?: string }).name === COMPACTION_TOOL_NAME) return "Done.";
      if (afterCompaction && !asked && messages.some((m) => isCompactionMessage(m))) {
        asked = true;
        return { content: "", tool_calls: [{ name: COMPACTION_TOOL_NAME, args: { instructions: INSTRUCTIONS } }] };
      }
      return undefined;
    },
  });
}

type Setup = "middleware view" | "middleware commit" | "node view" | "node view (CompactionAnnotation)" | "node commit";
const SETUPS: Setup[] = ["middleware view", "middleware commit", "node view", "node view (CompactionAnnotation)", "node commit"];
function build(setup: Setup, scripted: ScriptedChatModel, summaries: ScriptedSummaryModel): AgentGraph {
  const mode = setup.endsWith("commit") ? "commit" : "view";
  const compactor = [new SummarizationCompactor({ model: summaries, maxSummaryTokens: 150 }), new SlidingWindowCompactor()];
  if (setup.startsWith("middleware")) {
    const middleware = compactionMiddleware({ contextWindow: CONTEXT_WINDOW, mode, compactor });
    const tools = [weather, createCompactionTool(middleware)];
    return createAgent({ model: scripted, tools, systemPrompt: SYSTEM_PROMPT, middleware: [middleware], checkpointer: new MemorySaver() }).graph as unknown as AgentGraph;
  }
  // The node is made before its tool, so it counts the weather tool's schema only (the compaction tool's is small).
  const node = createCompactionNode({ contextWindow: CONTEXT_WINDOW, mode, compactor, tools: [weather] });
  const tools = [weather, createCompactionTool(node)];
  const stateSchema = setup.endsWith("(CompactionAnnotation)") ? { stateSchema: CompactionAnnotation } : {};
  return createReactAgent({ llm: withOverflowRecovery(scripted, node), tools, preModelHook: node, ...stateSchema, checkpointer: new MemorySaver() }) as unknown as AgentGraph;
}

const compactions = (events: HeardEvent[]) => events.filter((event) => event.name === COMPACTION_EVENT);
const toolResult = (messages: BaseMessage[]) => messages.filter((m) => m.type === "tool" && (m as { name?: string }).name === COMPACTION_TOOL_NAME).at(-1)!.text;

describe.each(SETUPS)("%s", (setup) => {
  test("asked above minFraction of the trigger: the next model call compacts, with the instructions in the summary prompt", async () => {
    const scripted = model();
    const summaries = new ScriptedSummaryModel(() => "## Objective\n- weather questions\n## Decisions\n- v2 endpoints, no pagination");
    const agent = build(setup, scripted, summaries);
    // Above half the trigger (0.7 × 4,000), below the trigger: nothing compacts by itself.
    await ask(agent, "t", 9);
    expect(summaries.calls).toHaveLength(0);
    const listener = eventListener();
    const before = scripted.calls.length;
    const result = await agent.invoke(question(ASK), thread("t", { callbacks: [listener.handler] }));
    expect(toolResult(result.messages)).toMatch(/^Compaction scheduled/);
    // The call after the tool's result was compacted, once, by force, and the summary model was told what to keep.
    expect(compactions(listener.events)).toHaveLength(1);
    expect(compactions(listener.events)[0]!.data.forced).toBe(true);
    expect(summaries.calls.length).toBeGreaterThan(0);
    expect(summaries.calls.some((call) => call.messages.some((m) => m.text.includes(INSTRUCTIONS)))).toBe(true);
    const compacted = scripted.calls[before + 1]!.messages;
    expect(scripted.requestTokens(scripted.calls[before + 1]!)!).toBeLessThan(scripted.requestTokens(scripted.calls[before]!)!);
    expect(compacted.some((m) => m.text.includes("v2 endpoints, no pagination"))).toBe(true);
    expect(toolPairingProblems(compacted)).toEqual([]);

    // No second compaction right after: the next question's calls do not compact, automatically or otherwise.
    const next = eventListener();
    await agent.invoke(question("What is the weather in Oslo?"), thread("t", { callbacks: [next.handler] }));
    expect(compactions(next.events)).toEqual([]);
  });

  test("asked below minFraction of the trigger: refused with a clear result, and nothing compacts", async () => {
    const scripted = model();
    const summaries = new ScriptedSummaryModel(() => "summary");
    const agent = build(setup, scripted, summaries);
    await ask(agent, "t", 2);
    const listener = eventListener();
    const result = await agent.invoke(question(ASK), thread("t", { callbacks: [listener.handler] }));
    const answer = toolResult(result.messages);
    expect(answer).toMatch(/^Compaction refused/);
    // It says how large the context is and from what size compacting is worth it.
    const [held, worth] = [...answer.matchAll(/(\d+) tokens|above (\d+)/g)].map((match) => Number(match[1] ?? match[2]));
    expect(held).toBeLessThan(worth!);
    expect(worth).toBeGreaterThanOrEqual(0.5 * CONTEXT_WINDOW * 0.7);
    expect(compactions(listener.events)).toEqual([]);
    expect(summaries.calls).toHaveLength(0);
  });

  test("an automatic compaction then the tool: the tool is refused, the context being at the size a compaction leaves", async () => {
    const scripted = model(true);
    const summaries = new ScriptedSummaryModel(() => "## Objective\n- weather questions");
    const agent = build(setup, scripted, summaries);
    const listener = eventListener();
    // Questions until the trigger fires by itself; the model then calls the tool at once.
    let result: { messages: BaseMessage[] } | undefined;
    for (let index = 0; index < 30 && compactions(listener.events).length === 0; index += 1) {
      result = await agent.invoke(question(`What is the weather in place ${index}?`), thread("t", { callbacks: [listener.handler] }));
    }
    expect(compactions(listener.events)).toHaveLength(1);
    expect(compactions(listener.events)[0]!.data.forced).toBe(false);
    expect(toolResult(result!.messages)).toMatch(/^Compaction refused/);
    const summariesBefore = summaries.calls.length;
    // Nothing was scheduled: the next question compacts nothing.
    const after = eventListener();
    await agent.invoke(question("What is the weather in Oslo?"), thread("t", { callbacks: [after.handler] }));
    expect(compactions(after.events)).toEqual([]);
    expect(summaries.calls).toHaveLength(summariesBefore);
  });
});

test("the tool needs the middleware or the node it works with", () => {
  expect(() => createCompactionTool({})).toThrow(TypeError);
  const middleware = compactionMiddleware({ contextWindow: CONTEXT_WINDOW });
  expect(() => createCompactionTool(middleware, { minFraction: 2 })).toThrow(/minFraction/);
  expect(createCompactionTool(middleware).name).toBe(COMPACTION_TOOL_NAME);
});
