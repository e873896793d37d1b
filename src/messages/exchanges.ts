import type { BaseMessage } from "@langchain/core/messages";
import { isAI, toolCallsOf } from "./roles";

/**
 * For each tool-call id, the AI messages that ask for it: `first` holds the
 * first of them, and `more` the others for the rare id asked for again (a
 * retried or duplicated AI message), all of which must then stay together
 * with the result. Split in two so that the usual id costs one map entry and
 * no array: on long histories this map is the layout's largest cost.
 */
export interface ToolCallOwners {
  first: Map<string, number>;
  /** Later owners of an id, ascending, each once. */
  more: Map<string, number[]>;
}

/** The owners of every tool-call id in `messages[from..]`. */
export function toolCallOwners(messages: readonly BaseMessage[], from: number): ToolCallOwners {
  const first = new Map<string, number>();
  const more = new Map<string, number[]>();
  for (let index = from; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (!isAI(message)) continue;
    for (const call of toolCallsOf(message)) {
      if (typeof call.id !== "string" || call.id.length === 0) continue;
      const owner = first.get(call.id);
      if (owner === undefined) {
        first.set(call.id, index);
      } else if (owner !== index) {
        const list = more.get(call.id);
        if (list === undefined) more.set(call.id, [index]);
        else if (list[list.length - 1] !== index) list.push(index);
      }
    }
  }
  return { first, more };
}
