/**
 * What `__tests__/integrations/connection-drops.test.ts` and its child process (`postgres-drop-run.ts`) share:
 * the conversation a session starts with, the replacement the direct rewrite writes, and the line the child
 * prints per run.
 */
import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";

/** The message appended through the store while the rewrite's connection is down. */
export const APPENDED_DURING_DROP = "appended while the rewrite's connection was down";

/** A system prompt and six turns of about 20 tokens each: compacting to 60 tokens removes most of them. */
export function dropConversation(): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You plan train journeys.")];
  for (let turn = 0; turn < 6; turn += 1) {
    messages.push(new HumanMessage(`leg ${turn}: which train leaves after nine in the morning?`));
    messages.push(new AIMessage(`leg ${turn}: the ten fifteen from platform four, arriving at noon`));
  }
  return messages;
}

/** How many of the oldest messages the direct rewrite replaces. */
export const DROP_REPLACED = 2;

/** The direct rewrite's replacement: longer than what it replaces, so the rows behind move and both INSERTs run. */
export function dropReplacement(): BaseMessage[] {
  return [new SystemMessage("You plan train journeys (replaced)."), new HumanMessage("x"), new AIMessage("y"), new HumanMessage("z")];
}

/** A message as `PostgresChatMessageHistory` keeps it in its `message` column. */
export function rowOf(message: BaseMessage): unknown {
  const [stored] = mapChatMessagesToStoredMessages([message]);
  return JSON.parse(JSON.stringify({ ...stored!.data, type: stored!.type }));
}

/** One run of the child: which statement the backend was killed after, and how the call ended. */
export interface DropRun {
  k: number;
  sessionId: string;
  /** The first word of the statement after which the backend was terminated; `null`: the rewrite ran fewer statements. */
  killedAfter: string | null;
  /** First word of every statement the rewrite's client ran, in order. */
  statements: string[];
  /** The jsonb values the rewrite's INSERTs carried, in order (JSON text). */
  inserted: string[];
  outcome: "resolved" | "rejected";
  /** What it resolved to: the rewrite's boolean, or the number of messages the history's read returned. */
  value?: boolean | number;
  error?: string;
  /** The SQLSTATE of the error it rejected with. */
  code?: string;
}
