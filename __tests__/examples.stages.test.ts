import { isCompactionMessage } from "../src";
import { main } from "../examples/pipeline";

describe("examples/pipeline.ts", () => {
  it("prunes old tool output first, and drops turns only for the tighter target", async () => {
    const { history, gentle, tight } = await main();
    expect(gentle.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning"]);
    expect(gentle.removed).toEqual([]);
    expect(gentle.rewritten.length).toBeGreaterThan(0);
    expect(gentle.tokensAfter).toBeLessThanOrEqual(2_000);
    expect(gentle.messages!.length).toBe(history.length);
    expect(tight.stages.map((s) => s.strategy)).toEqual(["tool_result_pruning", "sliding_window"]);
    expect(tight.removed.length).toBeGreaterThan(0);
    expect(tight.note).not.toBeNull();
    // The current task and its newest result are untouched.
    expect(tight.messages!.slice(-3)).toEqual(history.slice(-3));
    expect(tight.messages!.filter(isCompactionMessage).length).toBeGreaterThan(0);
  });
});
