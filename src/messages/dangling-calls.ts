import { ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { COMPACTION_METADATA_KEY } from "./compaction-metadata";
import { toolCallsIn } from "./exchanges";
import { isTool, toolCallIdOf } from "./roles";

/**
 * Dangling tool calls: calls of an earlier step that never got a result.
 *
 * An interrupted run leaves them behind: a tool that threw with error
 * handling off, an `interrupt()` answered by a new message instead of a
 * resume, a run aborted while its tools ran. The next request then carries
 * an assistant message whose calls nothing answers, which OpenAI, Anthropic
 * and Gemini reject. The repair gives each such call a synthetic result,
 * standing right after the assistant message and the results it already has,
 * saying that the call was interrupted, so the model sees what happened and
 * may call again.
 *
 * 1. A call is answered when a tool result carrying its id stands after its
 *    assistant message (a result before it answers an earlier call with the
 *    same id, not this one). Calls without an id cannot be answered by id,
 *    and are left as they are.
 * 2. A call is of the step in progress, and left alone, when nothing but tool
 *    results follows its assistant message: its tools may still be running
 *    (parallel results arrive one by one, `interrupt()` waits for a resume).
 * 3. Every other unanswered call dangles and gets its synthetic result.
 */

/** The text of a synthetic result; `{tool_name}` is replaced by the call's tool name. */
export const INTERRUPTED_CALL_RESULT = "[The call to `{tool_name}` was interrupted and returned no result. Call it again if you still need it.]";

/** What a synthetic result carries under `response_metadata.compaction`, so it is recognised (and never taken for a real result). */
export const REPAIRED_CALL_STRATEGY = "interrupted_call";

/** Whether `message` is a synthetic result written by {@link repairDanglingCalls}. */
export function isRepairedCallResult(message: BaseMessage): boolean {
  if (!isTool(message)) return false;
  const meta = (message.response_metadata as Record<string, unknown> | undefined)?.[COMPACTION_METADATA_KEY];
  return typeof meta === "object" && meta !== null && (meta as { strategy?: unknown }).strategy === REPAIRED_CALL_STRATEGY;
}

/** The outcome of {@link repairDanglingCalls}. */
export interface DanglingCallRepair {
  /** The list with a synthetic result after each dangling call; the input itself when nothing dangled. */
  messages: BaseMessage[];
  /** The synthetic results added, in list order. */
  added: ToolMessage[];
}

/**
 * `messages` with every dangling call answered by a synthetic result (see
 * the module comment). The input array and its messages are not modified;
 * when nothing dangles, the input array itself is returned.
 */
export function repairDanglingCalls(messages: readonly BaseMessage[], template: string = INTERRUPTED_CALL_RESULT): DanglingCallRepair {
  // Where the last result of each call id stands: a call is answered when that is after its message.
  const lastResult = new Map<string, number>();
  messages.forEach((message, index) => {
    const id = toolCallIdOf(message);
    if (id !== undefined) lastResult.set(id, index);
  });
  // Rule 2: after the last message that is not a tool result, the step is still in progress.
  let lastOther = messages.length - 1;
  while (lastOther >= 0 && isTool(messages[lastOther]!)) lastOther -= 1;

  const output: BaseMessage[] = [];
  const added: ToolMessage[] = [];
  let pending: ToolMessage[] = [];
  const flush = () => {
    output.push(...pending);
    added.push(...pending);
    pending = [];
  };
  messages.forEach((message, index) => {
    // The synthetic results go after the results that already follow their assistant message.
    if (!isTool(message)) flush();
    output.push(message);
    if (index >= lastOther) return;
    for (const call of toolCallsIn(message)) {
      if (call.id === undefined || (lastResult.get(call.id) ?? -1) > index) continue;
      pending.push(syntheticResult(call.id, call.name, template));
    }
  });
  flush();
  return added.length === 0 ? { messages: messages as BaseMessage[], added } : { messages: output, added };
}

function syntheticResult(id: string, name: string | undefined, template: string): ToolMessage {
  return new ToolMessage({
    tool_call_id: id,
    content: template.split("{tool_name}").join(name ?? "the tool"),
    ...(name === undefined ? {} : { name }),
    status: "error",
    response_metadata: { [COMPACTION_METADATA_KEY]: { strategy: REPAIRED_CALL_STRATEGY } },
  });
}
