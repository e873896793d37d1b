import { isDeepStrictEqual } from "node:util";
import type { BaseMessage } from "@langchain/core/messages";
import { freshLayout, layoutConversation } from "../../src/messages/layout";
import type { ConversationLayout } from "../../src/messages/grouping";

/**
 * The remembered layout of `messages` (what `layoutConversation` gives after
 * whatever lists it saw before), asserted equal to a fresh layout of them.
 * Fails the test with `label` and jest's diff on a mismatch.
 */
export function expectSameAsFresh(messages: readonly BaseMessage[], label: string): ConversationLayout {
  const remembered = layoutConversation(messages);
  const fresh = freshLayout(messages);
  // Jest's matcher only on a mismatch (it is slow on the thousands of cases that agree), for its diff.
  if (!isDeepStrictEqual(remembered, fresh)) expect({ label, layout: remembered }).toEqual({ label, layout: fresh });
  return remembered;
}
