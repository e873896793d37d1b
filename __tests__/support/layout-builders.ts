import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { ConversationLayout, MessageGroup } from "../../src/messages/grouping";

/** An AI message asking for one `lookup` call per id. */
export const call = (...ids: string[]): AIMessage => new AIMessage({ content: "", tool_calls: ids.map((id) => ({ id, name: "lookup", args: {} })) });

/** The result answering call `id`. */
export const result = (id: string): ToolMessage => new ToolMessage({ content: `result ${id}`, tool_call_id: id });

/** An expected turn; its order is its first member unless given. */
export const turn = (members: number[], order = members[0]!): MessageGroup => ({ kind: "turn", members, order });

/** An expected step; its order is its first member unless given. */
export const step = (members: number[], order = members[0]!): MessageGroup => ({ kind: "step", members, order });

/** An expected layout: no instructions, no task, nothing grouped, except what `parts` says. */
export const layoutOf = (parts: Partial<ConversationLayout>): ConversationLayout => ({ systemEnd: 0, task: -1, turns: [], steps: [], notes: [], loose: [], ...parts });
