import type { AgentRunResult } from "../../bench/agents/harness";
import type { Workload } from "../../bench/agents/workload";

/** A run without compaction followed `workload`'s plan: one call per step, no re-fetch, every question asked answered. */
export function expectPlanFollowed(result: AgentRunResult, workload: Workload): void {
  const planned = workload.turns.reduce((sum, turn) => sum + turn.steps.length, 0);
  expect(result.agentCalls).toBe(planned);
  expect(result.refetches).toEqual({ tool: 0, reader: 0, ask: 0 });
  expect(result.questions.asked).toBe(workload.turns.filter((t) => t.question).length);
  expect(result.questions.answered).toBe(result.questions.asked);
  expect(result.questions.answerable).toBe(result.questions.asked);
}
