/**
 * examples/agent-runtime.ts: what its agent went through, read from the
 * objects `main` returns (the events heard, what the scripted provider and
 * the summary model were sent), and that it runs standalone.
 */
import { COMPACTION_EVENT, COMPACTION_OVERFLOW_RETRY_EVENT, isRepairedCallResult } from "../../src";
import { CONFIGURED_WINDOW, INSTRUCTIONS, main, REAL_WINDOW } from "../../examples/agent-runtime";
import { importExamplesOffline, testRunsStandalone } from "../support/run-example";
import { toolPairingProblems } from "../support/tool-pairing";

importExamplesOffline();
testRunsStandalone(["agent-runtime.ts"]);

test("examples/agent-runtime.ts: one overflow recovered, the dangling call answered, the tool's compaction with its instructions, each compaction an event", async () => {
  const run = await main();
  const { model, summarizer, refused, events } = run;

  // 1. The provider refused once; the retry was smaller than its window, and so was every request it took after.
  expect(CONFIGURED_WINDOW).toBeGreaterThan(REAL_WINDOW);
  expect(refused).toHaveLength(1);
  const retry = refused[0]! + 1;
  expect(model.requestTokens(model.calls[retry]!)!).toBeLessThanOrEqual(REAL_WINDOW);
  expect(model.requestTokens(model.calls[retry]!)!).toBeLessThan(model.requestTokens(model.calls[refused[0]!]!)!);
  const retries = events.filter((event) => event.name === COMPACTION_OVERFLOW_RETRY_EVENT);
  expect(retries).toHaveLength(1);
  expect(retries[0]!.data.overflow).toMatchObject({ limitTokens: REAL_WINDOW });

  // 2. The interrupted call got a synthetic result in what the model was sent, which pairs every call.
  expect(toolPairingProblems(run.repairedRequest)).toEqual([]);
  const synthetic = run.repairedRequest.filter((message) => isRepairedCallResult(message));
  expect(synthetic.map((message) => (message as { tool_call_id?: string }).tool_call_id)).toEqual([run.danglingCallId]);

  // 3. The tool scheduled a compaction; the next call compacted by force, and the summary model read the instructions.
  expect(run.toolAnswer).toMatch(/^Compaction scheduled/);
  const forced = events.filter((event) => event.name === COMPACTION_EVENT && event.data.forced);
  expect(forced).toHaveLength(1);
  expect(summarizer.calls.some((call) => call.messages.some((message) => message.text.includes(INSTRUCTIONS)))).toBe(true);
  for (const call of model.calls) expect(toolPairingProblems(call.messages)).toEqual([]);
});
