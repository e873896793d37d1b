import type { BaseMessage } from "@langchain/core/messages";
import { isAI, toolCallsOf } from "./roles";

/**
 * For each tool-call id, the indices of the AI messages that ask for it.
 * Usually one; a retried or duplicated AI message makes it several, and all of
 * them must then stay together with the result.
 */
export function toolCallOwners(messages: readonly BaseMessage[], from: number): Map<string, number[]> {
  const owners = new Map<string, number[]>();
  for (let index = from; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (!isAI(message)) continue;
    for (const call of toolCallsOf(message)) {
      if (typeof call.id !== "string" || call.id.length === 0) continue;
      const list = owners.get(call.id);
      if (list === undefined) owners.set(call.id, [index]);
      else if (list[list.length - 1] !== index) list.push(index);
    }
  }
  return owners;
}

