/**
 * Pruning's trailing batch (the results the model has not acted on yet): the
 * fast reading (`trailingBatch`, grown from the trailing results' ids) equals
 * the rule (`trailingBatchByRule`, read off the exchanges of the whole
 * history) on messy conversations, each also ended by results answering
 * calls drawn from it (repeated ids, retried calls, results without an id).
 */
import { ToolMessage } from "@langchain/core/messages";
import * as fc from "fast-check";
import { toolCallIdsOf } from "../../src/messages/exchanges";
import { trailingBatch, trailingBatchByRule } from "../../src/compactors/tool-result-pruning";
import { buildMessyConversation, messyPlanArbitrary } from "../support/messy";
import { assertOnSeeds, casesIn } from "../support/seeds";

const CASES = casesIn(600);

test("the fast trailing batch equals the rule's", () => {
  const ending = fc.array(fc.record({ pick: fc.nat(), idless: fc.boolean() }), { maxLength: 4 });
  assertOnSeeds(
    fc.property(messyPlanArbitrary(), ending, (plan, tail) => {
      const messages = buildMessyConversation(plan);
      const ids = messages.flatMap((message) => toolCallIdsOf(message));
      for (const { pick, idless } of tail) {
        const id = idless || ids.length === 0 ? "" : ids[pick % ids.length]!;
        messages.push(new ToolMessage({ tool_call_id: id, content: `late result ${pick}` }));
      }
      expect([...trailingBatch(messages)].sort((a, b) => a - b)).toEqual([...trailingBatchByRule(messages)].sort((a, b) => a - b));
    }),
    CASES,
  );
});
