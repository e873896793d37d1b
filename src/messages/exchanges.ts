import type { BaseMessage } from "@langchain/core/messages";
import { isAI, isTool, toolCallIdOf } from "./roles";

/**
 * Exchanges: which messages of a conversation belong together because a
 * provider rejects one without the other. This file is the one definition;
 * the layout, protection, every stage and every integration read calls and
 * exchanges through it (the layout's engine through a faster copy of
 * {@link toolCallsIn} that is tested to equal it).
 *
 * A call is read wherever a provider's LangChain integration puts it, so
 * that no converter can send a call whose result was cut away:
 *
 * 1. `tool_calls`: parsed calls (every converter);
 * 2. `invalid_tool_calls`: calls whose arguments did not parse (ChatOpenAI
 *    puts malformed JSON there, and the raw call stays in `additional_kwargs`);
 * 3. `additional_kwargs.tool_calls`: OpenAI's raw format, which the OpenAI
 *    converters send whenever `tool_calls` is empty;
 * 4. content blocks `tool_use` (Anthropic, which its converter sends as they
 *    stand), `tool_call` (LangChain's standard v1 blocks) and `function_call`
 *    (OpenAI Responses items, named by `call_id`).
 *
 * The same call often stands in several of these at once (ChatAnthropic
 * returns `tool_use` blocks and the parsed `tool_calls`): it is one call, read
 * from the first place that names its id. Anthropic's server tools
 * (`server_tool_use`) carry their result in the same message, and are no
 * call here.
 */

/** One tool call an assistant message makes, as read from wherever its provider put it. */
export interface ToolCallRef {
  /** The call's id; `undefined` when the call has none. */
  id: string | undefined;
  /** The tool's name, when the call gives one. */
  name: string | undefined;
  /** The arguments as given: an object when parsed, a string when raw JSON (or JSON that did not parse). */
  args: unknown;
  /** Whether the call stands in the message's content (a `tool_use`, `tool_call` or `function_call` block). */
  inContent: boolean;
}

/** Content block types that are calls (their result comes in a tool message). */
export const CALL_BLOCK_TYPES: ReadonlySet<string> = new Set(["tool_use", "tool_call", "function_call"]);

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
}

type CallReader = (item: Record<string, unknown>) => Omit<ToolCallRef, "inContent"> | undefined;

/**
 * Adds the calls of one source to `calls`: a call whose id an earlier one
 * gave is the same call; a call without an id only when no earlier source
 * held any call (the later sources are renderings of the same calls).
 */
function collect(calls: ToolCallRef[], items: unknown, read: CallReader, inContent: boolean): void {
  if (!Array.isArray(items)) return;
  const anyBefore = calls.length > 0;
  for (const item of items as unknown[]) {
    const fields = record(item);
    const call = fields === undefined ? undefined : read(fields);
    if (call === undefined) continue;
    const known = call.id === undefined ? anyBefore : calls.some((other) => other.id === call.id);
    if (!known) calls.push({ ...call, inContent });
  }
}

function parsedCall(item: Record<string, unknown>): Omit<ToolCallRef, "inContent"> {
  return { id: text(item.id), name: text(item.name), args: item.args };
}

function rawOpenAICall(item: Record<string, unknown>): Omit<ToolCallRef, "inContent"> {
  const fn = record(item.function);
  return { id: text(item.id), name: text(fn?.name), args: fn?.arguments };
}

function callBlock(block: Record<string, unknown>): Omit<ToolCallRef, "inContent"> | undefined {
  switch (block.type) {
    case "tool_use":
      return { id: text(block.id), name: text(block.name), args: block.input };
    case "tool_call":
      return { id: text(block.id), name: text(block.name), args: block.args };
    case "function_call":
      // Responses items name the call by `call_id`; `id` is the item's own id, used only when there is no `call_id`.
      return { id: text(block.call_id) ?? (block.call_id == null ? text(block.id) : undefined), name: text(block.name), args: block.arguments };
    default:
      return undefined;
  }
}

/**
 * Every tool call `message` makes, each once (see the module comment for
 * where calls are read); an empty list for a message that is not an
 * assistant message.
 */
export function toolCallsIn(message: BaseMessage): ToolCallRef[] {
  const calls: ToolCallRef[] = [];
  if (!isAI(message)) return calls;
  const fields = message as BaseMessage & { tool_calls?: unknown; invalid_tool_calls?: unknown };
  collect(calls, fields.tool_calls, parsedCall, false);
  collect(calls, fields.invalid_tool_calls, parsedCall, false);
  collect(calls, record(message.additional_kwargs)?.tool_calls, rawOpenAICall, false);
  collect(calls, message.content, callBlock, true);
  return calls;
}

/** The ids of {@link toolCallsIn}, in its order. */
export function toolCallIdsOf(message: BaseMessage): string[] {
  const ids: string[] = [];
  for (const call of toolCallsIn(message)) if (call.id !== undefined) ids.push(call.id);
  return ids;
}

/**
 * Whether `message` asks for any tool, with or without an id (a result
 * without an id may then answer it by following it): the rule is
 * `toolCallsIn(message).length > 0`. Read here without building the calls
 * (every source's first object is a call; in content, a block of a call
 * type), because `exchangesOf` asks it of every assistant message without
 * call ids, which is most of them (every final answer); the tests check it
 * equals the rule on every shape.
 */
export function asksForTools(message: BaseMessage): boolean {
  if (!isAI(message)) return false;
  const ai = message as BaseMessage & { tool_calls?: unknown; invalid_tool_calls?: unknown };
  if (holdsObject(ai.tool_calls) || holdsObject(ai.invalid_tool_calls)) return true;
  if (holdsObject(record(message.additional_kwargs)?.tool_calls)) return true;
  const content: unknown = message.content;
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    const fields = record(block);
    if (fields !== undefined && typeof fields.type === "string" && CALL_BLOCK_TYPES.has(fields.type)) return true;
  }
  return false;
}

/** Whether `items` is an array holding at least one object (what `collect` reads a call from). */
function holdsObject(items: unknown): boolean {
  if (!Array.isArray(items)) return false;
  for (const item of items as unknown[]) if (record(item) !== undefined) return true;
  return false;
}

/** The exchanges of a conversation: see {@link exchangesOf}. */
export interface Exchanges {
  /** For each message, the index of its exchange in `members`, or -1 when it belongs to none. */
  readonly of: Int32Array;
  /** Each exchange's messages, ascending; exchanges ordered by their first message. */
  readonly members: readonly (readonly number[])[];
}

/**
 * The exchanges of `messages`: the smallest sets of messages that must be
 * kept or removed together for every call to keep its result and every
 * result its call.
 *
 * 1. An assistant message that asks for tools (in any shape) is in an
 *    exchange.
 * 2. A tool result joins the exchange of every message asking for its id,
 *    wherever they stand, before or after it, which makes them one exchange
 *    (a retried call, a model reusing `call_0`). A result whose id nobody
 *    asks for is in no exchange. (Messages asking for an id no result
 *    answers are not joined: nothing needs them together.)
 * 3. A tool result without an id joins the exchange of the assistant message
 *    it directly follows (through a run of tool results), if that message
 *    asks for tools; otherwise it is in no exchange.
 *
 * Linear in the number of messages and calls.
 */
export function exchangesOf(messages: readonly BaseMessage[]): Exchanges {
  const parent = new Int32Array(messages.length).map((_, index) => index);
  const find = (index: number): number => {
    let root = index;
    while (parent[root] !== root) root = parent[root]!;
    // Path halving keeps later finds short; the structure is private to this call.
    while (parent[index] !== root) {
      const next = parent[index]!;
      parent[index] = root;
      index = next;
    }
    return root;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };

  const inExchange = new Uint8Array(messages.length);
  const askersOf = new Map<string, number[]>();
  const ids: string[] = [];
  // Rule 1 (and the askers rule 2 needs): every asking message, and who asks for each id.
  // The ids are those of `toolCallIdsOf`, read by its allocation-free copy: this runs over every message of a history.
  messages.forEach((message, index) => {
    if (!isAI(message)) return;
    ids.length = 0;
    if (collectAssistantCallIds(message, ids) === 0 && !asksForTools(message)) return;
    inExchange[index] = 1;
    for (const id of ids) {
      const askers = askersOf.get(id);
      if (askers === undefined) askersOf.set(id, [index]);
      else askers.push(index);
    }
  });
  // Rules 2 and 3: results join every asker of their id (each id's askers joined once), or, without an id, the
  // asking message they directly follow.
  const joined = new Set<string>();
  let caller = -1;
  messages.forEach((message, index) => {
    if (!isTool(message)) {
      caller = inExchange[index] ? index : -1;
      return;
    }
    const id = toolCallIdOf(message);
    const askers = id === undefined ? (caller >= 0 ? [caller] : undefined) : askersOf.get(id);
    if (askers === undefined) return;
    inExchange[index] = 1;
    union(askers[0]!, index);
    if (id !== undefined && !joined.has(id)) {
      joined.add(id);
      for (const asker of askers) union(askers[0]!, asker);
    }
  });

  const of = new Int32Array(messages.length).fill(-1);
  const members: number[][] = [];
  const exchangeOfRoot = new Map<number, number>();
  for (let index = 0; index < messages.length; index += 1) {
    if (!inExchange[index]) continue;
    const root = find(index);
    let exchange = exchangeOfRoot.get(root);
    if (exchange === undefined) {
      exchange = members.length;
      exchangeOfRoot.set(root, exchange);
      members.push([]);
    }
    of[index] = exchange;
    members[exchange]!.push(index);
  }
  return { of, members };
}

/**
 * {@link toolCallIdsOf}, appending to `out` (each id once per message) and
 * returning how many it added, for a message already known to be an
 * assistant message: the layout's speed path, which reads every message of a
 * new history and collects all their ids into one array. Written out
 * without helper arrays or closures (the usual message, parsed `tool_calls`
 * and string content, costs a few field reads); it must give exactly the ids
 * of {@link toolCallIdsOf}, in the same order, which the tests check on every
 * shape.
 */
export function collectAssistantCallIds(message: BaseMessage, out: string[]): number {
  const start = out.length;
  const ai = message as BaseMessage & { tool_calls?: unknown; invalid_tool_calls?: unknown };
  const calls = ai.tool_calls;
  if (Array.isArray(calls)) for (let k = 0; k < calls.length; k += 1) pushCallId(calls[k], "id", out, start);
  const invalid = ai.invalid_tool_calls;
  if (Array.isArray(invalid)) for (let k = 0; k < invalid.length; k += 1) pushCallId(invalid[k], "id", out, start);
  const kwargs = message.additional_kwargs as { tool_calls?: unknown } | undefined;
  const raw = kwargs === undefined || kwargs === null ? undefined : kwargs.tool_calls;
  if (Array.isArray(raw)) for (let k = 0; k < raw.length; k += 1) pushCallId(raw[k], "id", out, start);
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    for (const block of content as unknown[]) {
      if (typeof block !== "object" || block === null) continue;
      const type = (block as { type?: unknown }).type;
      if (type === "tool_use" || type === "tool_call") pushCallId(block, "id", out, start);
      else if (type === "function_call") pushCallId(block, (block as { call_id?: unknown }).call_id == null ? "id" : "call_id", out, start);
    }
  }
  return out.length - start;
}

/** Appends an id found in a call or block, unless this message already gave it. */
function pushCallId(item: unknown, key: "id" | "call_id", out: string[], start: number): void {
  if (typeof item !== "object" || item === null) return;
  const id = (item as { id?: unknown; call_id?: unknown })[key];
  if (typeof id === "string" && id.length > 0 && (out.length === start || out.indexOf(id, start) < 0)) out.push(id);
}
