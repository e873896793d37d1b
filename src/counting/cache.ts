import type { BaseMessage } from "@langchain/core/messages";

/**
 * What a cached count was computed from. A message is recounted when any of
 * these differ from what they were at counting time:
 * - `content`: a string compared by value, an array by identity and length;
 * - `tool_calls`: by identity and length;
 * - `name` and `tool_call_id`: by value.
 *
 * So reassigning a field (`message.content = "..."`), or pushing to or
 * splicing its array, is detected. Editing an element in place (a content
 * block's `text`, a tool call's `args`) is not: LangChain treats messages as
 * immutable values, and checking every nested value would cost as much as
 * counting. After such an edit, replace the message or call
 * {@link TokenCountCache.clear}.
 */
interface CachedCount {
  count: number;
  content: unknown;
  contentLength: number;
  toolCalls: unknown;
  toolCallsLength: number;
  name: unknown;
  toolCallId: unknown;
}

interface MessageFields {
  content: unknown;
  tool_calls?: unknown;
  name?: unknown;
  tool_call_id?: unknown;
}

function lengthOf(value: unknown): number {
  return Array.isArray(value) ? value.length : -1;
}

function isCurrent(entry: CachedCount, message: BaseMessage): boolean {
  const fields = message as unknown as MessageFields;
  return (
    entry.content === fields.content &&
    entry.contentLength === lengthOf(fields.content) &&
    entry.toolCalls === fields.tool_calls &&
    entry.toolCallsLength === lengthOf(fields.tool_calls) &&
    entry.name === fields.name &&
    entry.toolCallId === fields.tool_call_id
  );
}

/**
 * Token counts remembered per counter and per message object. Both levels
 * are `WeakMap`s: a count lives exactly as long as its message and its
 * counter, so nothing leaks however long an agent runs. The next compaction in
 * an agent loop therefore counts only the messages that are new.
 */
export class TokenCountCache {
  private byCounter = new WeakMap<object, WeakMap<BaseMessage, CachedCount>>();

  /** The cached count of `message` under `counterKey`, or `undefined` when absent or stale. */
  get(counterKey: object, message: BaseMessage): number | undefined {
    const entry = this.byCounter.get(counterKey)?.get(message);
    return entry !== undefined && isCurrent(entry, message) ? entry.count : undefined;
  }

  /** Remembers `count` for `message` under `counterKey`, with what it was computed from. */
  set(counterKey: object, message: BaseMessage, count: number): void {
    let counts = this.byCounter.get(counterKey);
    if (counts === undefined) {
      counts = new WeakMap();
      this.byCounter.set(counterKey, counts);
    }
    const fields = message as unknown as MessageFields;
    counts.set(message, {
      count,
      content: fields.content,
      contentLength: lengthOf(fields.content),
      toolCalls: fields.tool_calls,
      toolCallsLength: lengthOf(fields.tool_calls),
      name: fields.name,
      toolCallId: fields.tool_call_id,
    });
  }

  /** Forgets every count (of one counter, when given). */
  clear(counterKey?: object): void {
    if (counterKey === undefined) this.byCounter = new WeakMap();
    else this.byCounter.delete(counterKey);
  }
}

/** The cache every compactor uses unless given its own (or `null` for none). */
export const sharedTokenCountCache = new TokenCountCache();
