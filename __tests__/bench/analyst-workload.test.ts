/**
 * The data analyst workload (bench/agents/workloads/analyst.ts): built the
 * same from the same seed and differently from another; followed to the
 * letter when nothing is compacted; and, when a table's definition or a
 * user's paste is taken out of the request, the scripted agent describes the
 * table again or asks the user to paste again before the step that needs it.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import type { AgentMiddleware } from "langchain";
import { idsIn } from "../../bench/agents/facts";
import { runAgentWorkload } from "../../bench/agents/harness";
import type { AgentRun } from "../../bench/agents/harness";
import { requestText } from "../../bench/agents/request-text";
import { strategyOf } from "../../bench/agents/strategies";
import type { Strategy } from "../../bench/agents/strategies";
import type { Workload } from "../../bench/agents/workload";
import { WORKLOAD_KEYS, workloadOf } from "../../bench/agents/workloads";
import { analystWorkload } from "../../bench/agents/workloads/analyst";
import { expectPlanFollowed } from "../support/agent-runs";

jest.setTimeout(120_000);

/** A strategy whose only middleware rewrites the request the model is sent. */
function editing(key: string, edit: (messages: BaseMessage[]) => BaseMessage[]): Strategy {
  const middleware = createMiddleware({ name: `Edit_${key}`, wrapModelCall: (request, handler) => handler({ ...request, messages: edit(request.messages) }) });
  return { key, label: key, kind: "baseline", color: "#000", setup: () => ({ middleware: [middleware as unknown as AgentMiddleware] }) };
}

/** Every tool call the agent made, in order, with the request it was decided on. */
const toolCalls = (run: AgentRun) =>
  run.log.calls.flatMap((call) => (call.kind === "agent" && call.output && AIMessage.isInstance(call.output) ? (call.output.tool_calls ?? []).map((tool) => ({ tool, request: call.messages! })) : []));

/** The workload's whole text, as its plan and its world give it: user turns, step contents, every call and result. */
function planText(workload: Workload): string {
  const world = workload.createWorld();
  const parts: string[] = [workload.systemPrompt];
  workload.turns.forEach((turn, index) => {
    world.beginTurn(index);
    parts.push(turn.user);
    for (const step of turn.steps) {
      parts.push(step.content, step.needs.join("|"));
      for (const call of step.calls) parts.push(JSON.stringify(call.args), world.run(call.name, call.args));
    }
  });
  return parts.join("\n");
}

describe("the analyst workload is built from its seed", () => {
  test("it is registered with the others", () => {
    expect(WORKLOAD_KEYS).toContain("analyst");
    expect(workloadOf("analyst", 3).key).toBe("analyst");
  });

  test("the same seed builds the same workload and world; another seed a different one", () => {
    const a = analystWorkload(1);
    const again = analystWorkload(1);
    expect(planText(again)).toBe(planText(a));
    expect(again.facts).toEqual(a.facts);
    const other = analystWorkload(2);
    expect(planText(other)).not.toBe(planText(a));
    expect(other.facts.map((f) => f.id)).not.toEqual(a.facts.map((f) => f.id));
    // A query run again, in a fresh world, prints the same result (the warehouse's result cache: same result id).
    const query = a.turns.flatMap((t) => t.steps).flatMap((s) => s.calls).find((c) => c.name === "run_sql")!;
    expect(a.createWorld().run("run_sql", query.args)).toBe(a.createWorld().run("run_sql", query.args));
  });

  test("quick is a shorter run of the same beginning", () => {
    const full = analystWorkload(1);
    const quick = analystWorkload(1, { quick: true });
    expect(quick.turns.length).toBeLessThan(full.turns.length);
    expect(quick.turns.map((t) => t.user)).toEqual(full.turns.slice(0, quick.turns.length).map((t) => t.user));
    expect(quick.turns.some((t) => t.question !== undefined)).toBe(true);
  });

  test("a column a query needs shows in its own table's definition only (each table has a region column)", () => {
    for (const seed of [1, 2, 3]) {
      const workload = analystWorkload(seed);
      const world = workload.createWorld();
      const keys = new Set(workload.turns.flatMap((t) => t.steps).flatMap((s) => s.needs).filter((key) => key.startsWith("column:")));
      const definitions = new Map(["sales.orders_fact", "finance.refunds", "web.sessions"].map((table) => [table, world.run("describe_table", { table })]));
      expect(keys.size).toBeGreaterThan(20);
      for (const key of keys) {
        const shownIn = [...definitions].filter(([, text]) => text.includes(world.info(key).marker)).map(([table]) => table);
        expect({ key, shownIn }).toEqual({ key, shownIn: [key.split(":")[1]] });
      }
    }
  });

  test("the user pastes large data, and every question's fact comes from where it says", () => {
    const workload = analystWorkload(1);
    const pastes = workload.turns.filter((t) => t.user.includes("```"));
    expect(pastes.length).toBeGreaterThanOrEqual(3);
    for (const paste of pastes) expect(paste.user.length).toBeGreaterThan(3_000);
    // Nothing but the planted facts has their format (the summarizer keeps what has it).
    expect(idsIn(planText(workload)).sort()).toEqual(workload.facts.map((f) => f.id).sort());
    const world = workload.createWorld();
    const toolText: string[] = [];
    workload.turns.forEach((turn, index) => {
      world.beginTurn(index);
      const question = turn.question;
      if (question !== undefined) {
        const earlierUser = workload.turns.slice(0, index).map((t) => t.user).join("\n");
        expect({ fact: question.fact, shown: question.source === "user" ? earlierUser.includes(question.fact) : toolText.join("\n").includes(question.fact) }).toEqual({ fact: question.fact, shown: true });
        expect(workload.facts.find((f) => f.id === question.fact)?.source).toBe(question.source);
      }
      for (const step of turn.steps) for (const call of step.calls) toolText.push(world.run(call.name, call.args));
    });
  });
});

describe("the scripted analyst decides from what it receives", () => {
  const workload = analystWorkload(1);

  test("without compaction it follows its plan: one call per step, no re-fetch, every question answered", async () => {
    const run = await runAgentWorkload(strategyOf("none"), workload, { keepRequests: true });
    expectPlanFollowed(run.result, workload);
    expect(run.result.invalid).toBe(0);
    // The workload is made to be compacted: without compaction its requests outgrow the window.
    expect(run.result.peakTokens).toBeGreaterThan(2 * workload.contextWindow);
  });

  test("a table definition it can no longer see is described again before the next query on that table", async () => {
    // The earliest describe_table result of each table is hidden from the model; every later one stays in view.
    const hideFirstDescribe = editing("hide-first-describe", (messages) => {
      const seen = new Set<string>();
      return messages.map((m) => {
        if (!ToolMessage.isInstance(m) || m.name !== "describe_table") return m;
        const table = /^CREATE TABLE (\S+)/.exec(String(m.content))?.[1] ?? "";
        if (seen.has(table)) return m;
        seen.add(table);
        return new ToolMessage({ tool_call_id: m.tool_call_id, name: m.name, content: "[cleared]" });
      });
    });
    const describes = (run: AgentRun) => toolCalls(run).filter((c) => c.tool.name === "describe_table").map((c) => String(c.tool.args.table));
    const planned = describes(await runAgentWorkload(strategyOf("none"), workload, { keepRequests: true }));
    const run = await runAgentWorkload(hideFirstDescribe, workload, { keepRequests: true });
    // Each table is described a second time, once (the second description stays in view).
    expect(describes(run).sort()).toEqual([...planned, ...planned].sort());
    expect(run.result.refetches).toEqual({ tool: planned.length, reader: 0, ask: 0 });
    expect(run.result.cappedTurns).toBe(0);
    // Every query was sent from a request that showed the definition line of each column the plan says it uses.
    const world = workload.createWorld();
    const needsOf = new Map(workload.turns.flatMap((t) => t.steps).flatMap((s) => s.calls.filter((c) => c.name === "run_sql").map((c) => [String(c.args.query), s.needs] as const)));
    const queries = toolCalls(run).filter((c) => c.tool.name === "run_sql");
    expect(queries.length).toBeGreaterThan(0);
    for (const { tool, request } of queries) {
      const text = requestText(request);
      const columns = (needsOf.get(String(tool.args.query)) ?? []).filter((key) => key.startsWith("column:"));
      expect(columns.length).toBeGreaterThan(0);
      for (const key of columns) expect({ key, shown: text.includes(world.info(key).marker) }).toEqual({ key, shown: true });
    }
  });

  test("a paste it can no longer see is asked for again, and the query that needs it waits for the user's answer", async () => {
    const quick = analystWorkload(1, { quick: true });
    const budgetTurn = quick.turns.findIndex((t) => t.user.includes("```csv"));
    const pasted = quick.turns[budgetTurn]!.user;
    // The user's message with the targets is shown without its CSV; a later message that pastes it again is not touched.
    const dropPaste = editing("drop-paste", (messages) => messages.map((m) => (HumanMessage.isInstance(m) && String(m.content) === pasted ? new HumanMessage(pasted.slice(0, pasted.indexOf("```"))) : m)));
    const run = await runAgentWorkload(dropPaste, quick, { keepRequests: true });
    expect(run.result.refetches).toEqual({ tool: 0, reader: 0, ask: 1 });
    expect(run.result.gaveUpTurns).toBe(0);
    // The turn asked instead of querying, the user pasted the targets again, and the query came after that.
    const agentCalls = run.log.calls.filter((c) => c.kind === "agent");
    const asked = agentCalls.findIndex((c) => String(c.output?.content ?? "").includes("paste it again"));
    expect(asked).toBeGreaterThan(-1);
    expect(agentCalls[asked]!.output && AIMessage.isInstance(agentCalls[asked]!.output) ? (agentCalls[asked]!.output.tool_calls ?? []) : []).toHaveLength(0);
    const targets = toolCalls(run).find((c) => c.tool.name === "run_sql" && String(c.tool.args.query).startsWith("WITH targets"))!;
    const again = targets.request.filter((m) => HumanMessage.isInstance(m) && String(m.content).startsWith("Here it is again"));
    expect(again).toHaveLength(1);
    expect(String(again[0]!.content)).toContain(pasted.slice(pasted.indexOf("```")));
    expect(run.result.questions.answered).toBe(run.result.questions.asked);
  });
});
