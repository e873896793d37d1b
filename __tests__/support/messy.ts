/**
 * Random MESSY conversations for property tests: what real stores hand back
 * after interrupted runs, retries and lossy serialisation, not just the happy
 * path. Alongside {@link conversationArbitrary} (well-formed agent runs,
 * written for other tests) this file adds:
 *
 * - {@link messyPlanArbitrary} / {@link buildMessyConversation}: any mix of
 *   well-formed turns and steps with tool results out of order or far from
 *   their call, calls never answered, results answering nothing, results
 *   without `tool_call_id`, retried AI messages repeating a call id, the same
 *   message object twice, repeated and missing message ids, system messages in
 *   the middle, content as block arrays (text, image_url) or empty, one huge
 *   message, real omission notes (from the note helper, or from running the
 *   compactor on a prefix), human messages that only look like notes,
 *   `AIMessageChunk`s, `ChatMessage`s with every role LangChain and the
 *   providers use (and an unknown one), AI messages whose call ids stand only
 *   in `invalid_tool_calls`, only in `additional_kwargs.tool_calls` (raw
 *   OpenAI) or only in `tool_use` content blocks (Anthropic), and a model that
 *   reuses one call id (`call_0`) for many calls;
 * - {@link wellFormedPlanArbitrary} / {@link buildWellFormedConversation}:
 *   well-formed conversations that also use block content, images and chunks,
 *   which a provider must accept;
 * - {@link targetArbitrary}, {@link counterArbitrary}, {@link compactorPlanArbitrary}:
 *   the other inputs of a compaction, including the extremes.
 *
 * Plans are plain data, so fast-check shrinks them and prints them readably;
 * every build makes fresh message objects.
 */
import {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { MessageContent } from "@langchain/core/messages";
import * as fc from "fast-check";
import { SlidingWindowCompactor } from "../../src/compactors/sliding-window";
import type { SlidingWindowCompactorOptions } from "../../src/compactors/sliding-window";
import { approximateTokenCounter } from "../../src/counting/approximate";
import { TokenCountCache } from "../../src/counting/cache";
import { tiktokenCounter } from "../../src/counting/tiktoken";
import type { TokenCounterLike } from "../../src/counting/types";
import { createOmissionNote, DEFAULT_OMISSION_NOTE, renderOmissionNote } from "../../src/messages/omission-note";

// ---------------------------------------------------------------------------
// Content

/** One content block as stored: text, or an image by URL or data URL. */
export type BlockPlan =
  | { type: "text"; text: string }
  | { type: "image_url"; url: string };

/** Message content as data: a string (possibly empty) or an array of blocks (possibly empty). */
export type ContentPlan = string | BlockPlan[];

const WORDS = [
  "the", "agent", "called", "weather", "for", "Lisbon", "and", "got", "sunny", "{\"rows\":3}", "EUR", "42",
  "ünïcødé", "東京の天気", "🙂", "naïve", "==", "09:15", "[3 earlier", "messages]", "\n", "tool_call_id",
];

const words: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 24 })
  .map((list) => list.join(" "));

/** Mostly a few words; sometimes a few thousand characters (a large tool result). */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 30, arbitrary: words },
  {
    weight: 1,
    arbitrary: fc
      .tuple(words, fc.integer({ min: 10, max: 60 }))
      .map(([chunk, times]) => Array.from({ length: times }, () => chunk).join(" ")),
  },
);

const imageUrl: fc.Arbitrary<string> = fc.constantFrom(
  "https://example.com/chart.png",
  "https://example.com/photos/lisbon.jpg",
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);

const block: fc.Arbitrary<BlockPlan> = fc.oneof(
  { weight: 3, arbitrary: text.map((t): BlockPlan => ({ type: "text", text: t })) },
  { weight: 1, arbitrary: imageUrl.map((url): BlockPlan => ({ type: "image_url", url })) },
);

/** Any content a store may hold: text, empty, block arrays (also empty ones). */
const messyContent: fc.Arbitrary<ContentPlan> = fc.oneof(
  { weight: 6, arbitrary: text },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 2, arbitrary: fc.array(block, { minLength: 0, maxLength: 4 }) },
);

function buildContent(plan: ContentPlan): MessageContent {
  if (typeof plan === "string") return plan;
  return plan.map((b) => (b.type === "text" ? { type: "text", text: b.text } : { type: "image_url", image_url: { url: b.url } }));
}

// ---------------------------------------------------------------------------
// Messy conversations

/** How a message's `id` is set: a fresh one, none, or the id of the message before (a store that reuses ids). */
export type IdPlan = "fresh" | "missing" | "repeat";

/** What happens to the result of one tool call. */
export type ResultPlan =
  /** Right after its call (in the step's shuffled order). */
  | { kind: "next"; order: number }
  /** After `delay` more operations: other messages stand between call and result. */
  | { kind: "later"; delay: number }
  /** Never: an interrupted run. */
  | { kind: "never" }
  /** Right after its call, but the store lost `tool_call_id` (undefined or empty). */
  | { kind: "lostId"; empty: boolean }
  /** Twice: a retried tool run. */
  | { kind: "twice" }
  /** The call itself has no id (a provider or store that drops it); its result follows, without one either. */
  | { kind: "callWithoutId" };

export interface CallPlan {
  name: string;
  args: Record<string, string | number>;
  result: ResultPlan;
  content: ContentPlan;
}

/** Where an AI message carries its call ids: where each provider's converter reads them from. */
export type CallIdsIn = "tool_calls" | "invalid_tool_calls" | "additional_kwargs" | "tool_use";

/** A `ChatMessage` role: LangChain's and the providers' names for each role, and one nobody knows. */
export type ChatRole = "user" | "human" | "assistant" | "ai" | "system" | "developer" | "tool" | "critic";

export type MessyOp =
  | { op: "human"; content: ContentPlan; id: IdPlan }
  /** A `ChatMessage` (type "generic", as history stores also hand it back). */
  | { op: "chat"; role: ChatRole; content: ContentPlan; id: IdPlan }
  /** A model that reuses the call id `call_0` for a new call, answered right after (or, with `answered` false, never). */
  | { op: "reuse"; content: ContentPlan; answered: boolean }
  | { op: "system"; content: ContentPlan; id: IdPlan }
  | { op: "ai"; content: ContentPlan; chunk: boolean; id: IdPlan }
  | { op: "call"; content: ContentPlan; chunk: boolean; id: IdPlan; calls: CallPlan[]; idsIn: CallIdsIn }
  /** A ToolMessage whose id no AI message asked for. */
  | { op: "orphan"; content: ContentPlan; id: IdPlan }
  /** A new AI message repeating the tool calls (same ids) of the latest calling AI message: a retried model call. */
  | { op: "retry"; content: ContentPlan; chunk: boolean; id: IdPlan }
  /** The very same object as the message `back` positions before the end. */
  | { op: "duplicate"; back: number }
  /** A real omission note, made by the library's note helper. */
  | { op: "note"; removed: number; kept: number; template: string }
  /**
   * A note whose metadata a store mangled: counts as strings (a store that
   * stringifies numbers), missing, negative or NaN.
   */
  | { op: "mangledNote"; removed: string | number | null }
  /** A human message with a note's text and no note metadata: the user typed it, it is not a note. */
  | { op: "fakeNote"; removed: number; withOtherMetadata: boolean };

export interface HugePlan {
  /** Where it goes, as a fraction of the operations. */
  at: number;
  role: "human" | "ai" | "tool" | "system";
  chars: number;
}

export interface MessyPlan {
  /** The leading system block. */
  system: ContentPlan[];
  ops: MessyOp[];
  /** At most one huge message. */
  huge: HugePlan | null;
  /** Whether results still pending at the end are written (else they are lost, like "never"). */
  flushPending: boolean;
  /**
   * Compact the first `prefix` fraction of the list first, at `fraction` of its
   * size, and continue with the rest: a history that was compacted before and grew.
   */
  precompact: { prefix: number; fraction: number } | null;
}

const id: fc.Arbitrary<IdPlan> = fc.constantFrom<IdPlan>("fresh", "fresh", "fresh", "missing", "repeat");

const resultPlan: fc.Arbitrary<ResultPlan> = fc.oneof(
  { weight: 8, arbitrary: fc.nat(5).map((order): ResultPlan => ({ kind: "next", order })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 5 }).map((delay): ResultPlan => ({ kind: "later", delay })) },
  { weight: 1, arbitrary: fc.constant<ResultPlan>({ kind: "never" }) },
  { weight: 1, arbitrary: fc.boolean().map((empty): ResultPlan => ({ kind: "lostId", empty })) },
  { weight: 1, arbitrary: fc.constant<ResultPlan>({ kind: "twice" }) },
  { weight: 1, arbitrary: fc.constant<ResultPlan>({ kind: "callWithoutId" }) },
);

const callPlan: fc.Arbitrary<CallPlan> = fc.record({
  name: fc.constantFrom("weather", "flights", "search"),
  args: fc.dictionary(fc.constantFrom("city", "q", "n"), fc.oneof(words, fc.nat(1000)), { maxKeys: 2, noNullPrototype: true }),
  result: resultPlan,
  content: messyContent,
});

const messyOp: fc.Arbitrary<MessyOp> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant("human" as const), content: messyContent, id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("system" as const), content: messyContent, id }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("ai" as const), content: messyContent, chunk: fc.boolean(), id }) },
  {
    weight: 7,
    arbitrary: fc.record({
      op: fc.constant("call" as const),
      content: messyContent,
      chunk: fc.boolean(),
      id,
      calls: fc.array(callPlan, { minLength: 1, maxLength: 3 }),
      idsIn: fc.constantFrom<CallIdsIn>("tool_calls", "tool_calls", "tool_calls", "invalid_tool_calls", "additional_kwargs", "tool_use"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("chat" as const),
      role: fc.constantFrom<ChatRole>("user", "human", "assistant", "ai", "system", "developer", "tool", "critic"),
      content: messyContent,
      id,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("reuse" as const), content: messyContent, answered: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("orphan" as const), content: messyContent, id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("retry" as const), content: messyContent, chunk: fc.boolean(), id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("duplicate" as const), back: fc.nat(6) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("note" as const),
      removed: fc.integer({ min: 1, max: 50 }),
      kept: fc.nat(30),
      template: fc.constantFrom(DEFAULT_OMISSION_NOTE, "[{num_removed} removed]", "history trimmed"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("mangledNote" as const),
      removed: fc.constantFrom<string | number | null>("7", "", "many", -3, 2.5, Number.NaN, Number.POSITIVE_INFINITY, null),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("fakeNote" as const), removed: fc.integer({ min: 1, max: 50 }), withOtherMetadata: fc.boolean() }),
  },
);

/** Plans of messy conversations (0 to `maxOps` operations; about 1.5 messages each). */
export function messyPlanArbitrary(maxOps = 28): fc.Arbitrary<MessyPlan> {
  return fc.record({
    system: fc.array(messyContent, { maxLength: 2 }),
    ops: fc.array(messyOp, { maxLength: maxOps, size: "medium" }),
    // About one case in six has one huge message.
    huge: fc.oneof(
      { weight: 5, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc.record({
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          role: fc.constantFrom<HugePlan["role"]>("human", "ai", "tool", "system"),
          chars: fc.integer({ min: 20_000, max: 40_000 }),
        }),
      },
    ),
    flushPending: fc.boolean(),
    // About one case in three continues a history the compactor already compacted.
    precompact: fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc.record({ prefix: fc.double({ min: 0, max: 1, noNaN: true }), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
      },
    ),
  });
}

/** Varied text of `chars` characters that tiktoken splits like prose (so counting it stays fast). */
function hugeText(chars: number): string {
  const sentence = "The tool returned 1,024 rows; row 17 says: temperature 24.5 C, wind 3 m/s, humidity 61%. ";
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
}

/** Builds the messages of a messy plan (no precompaction: see {@link prepareMessyInput}). */
export function buildMessyConversation(plan: MessyPlan): BaseMessage[] {
  const messages: BaseMessage[] = [];
  let idSeq = 0;
  let callSeq = 0;
  let lastId: string | undefined;
  let lastCalls: { id: string | undefined; name: string; args: Record<string, string | number> }[] = [];
  const pending: { due: number; message: ToolMessage }[] = [];

  const messageId = (plan: IdPlan): string | undefined => {
    if (plan === "missing") return undefined;
    if (plan === "repeat" && lastId !== undefined) return lastId;
    lastId = `msg-${(idSeq += 1)}`;
    return lastId;
  };
  const aiMessage = (chunk: boolean, content: ContentPlan, idPlan: IdPlan, calls: typeof lastCalls, idsIn: CallIdsIn = "tool_calls") => {
    const withIds = calls.filter((call) => call.id !== undefined);
    let built: MessageContent = buildContent(content);
    const fields: ConstructorParameters<typeof AIMessage>[0] & object = { content: built, id: messageId(idPlan) };
    if (idsIn === "tool_calls") fields.tool_calls = calls.map((call) => ({ ...call, type: "tool_call" as const }));
    else if (idsIn === "invalid_tool_calls") {
      // What ChatOpenAI makes of malformed JSON arguments: no parsed call, an invalid one with the id.
      fields.tool_calls = [];
      fields.invalid_tool_calls = calls.map((call) => ({ id: call.id, name: call.name, args: "{\"q\": ", error: "Malformed args.", type: "invalid_tool_call" as const }));
    } else if (idsIn === "tool_use") {
      const text = typeof built === "string" ? (built === "" ? [] : [{ type: "text", text: built }]) : built;
      built = [...text, ...withIds.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.args }))];
      fields.content = built;
      fields.tool_calls = [];
    }
    const message = chunk ? new AIMessageChunk(fields as never) : new AIMessage(fields);
    if (idsIn === "additional_kwargs") {
      // Raw OpenAI calls only (as a store that kept additional_kwargs but not the parsed calls hands them back).
      message.additional_kwargs = {
        tool_calls: withIds.map((call) => ({ id: call.id!, type: "function" as const, function: { name: call.name, arguments: JSON.stringify(call.args) } })),
      };
      message.tool_calls = [];
    }
    return message;
  };
  const toolResult = (toolCallId: string | undefined, name: string, content: ContentPlan) =>
    new ToolMessage({
      content: buildContent(content),
      // A store that lost the id hands back undefined: that is the case under test.
      tool_call_id: toolCallId as string,
      name,
      id: messageId("fresh"),
    });

  for (const content of plan.system) messages.push(new SystemMessage({ content: buildContent(content), id: messageId("fresh") }));
  const hugeAt = plan.huge === null ? -1 : Math.floor(plan.huge.at * plan.ops.length);
  const addHuge = () => {
    const huge = plan.huge!;
    const content = hugeText(huge.chars);
    if (huge.role === "human") messages.push(new HumanMessage({ content, id: messageId("fresh") }));
    else if (huge.role === "ai") messages.push(new AIMessage({ content, id: messageId("fresh") }));
    else if (huge.role === "system") messages.push(new SystemMessage({ content, id: messageId("fresh") }));
    else if (lastCalls.length > 0) messages.push(toolResult(lastCalls[0]!.id, lastCalls[0]!.name, content));
    else messages.push(toolResult("call-nobody-made", "search", content));
  };

  plan.ops.forEach((op, step) => {
    if (step === hugeAt) addHuge();
    switch (op.op) {
      case "human":
        messages.push(new HumanMessage({ content: buildContent(op.content), id: messageId(op.id) }));
        break;
      case "system":
        messages.push(new SystemMessage({ content: buildContent(op.content), id: messageId(op.id) }));
        break;
      case "ai":
        messages.push(aiMessage(op.chunk, op.content, op.id, []));
        break;
      case "call": {
        const calls = op.calls.map((call) => ({
          id: call.result.kind === "callWithoutId" ? undefined : `call_${(callSeq += 1)}`,
          name: call.name,
          args: call.args,
        }));
        messages.push(aiMessage(op.chunk, op.content, op.id, calls, op.idsIn));
        lastCalls = calls;
        const next: { order: number; message: ToolMessage }[] = [];
        op.calls.forEach((call, k) => {
          const { id: callId, name } = calls[k]!;
          const r = call.result;
          if (r.kind === "next") next.push({ order: r.order, message: toolResult(callId, name, call.content) });
          else if (r.kind === "later") pending.push({ due: step + r.delay, message: toolResult(callId, name, call.content) });
          else if (r.kind === "lostId") next.push({ order: k, message: toolResult(r.empty ? "" : undefined, name, call.content) });
          else if (r.kind === "callWithoutId") next.push({ order: k, message: toolResult(undefined, name, call.content) });
          else if (r.kind === "twice") {
            next.push({ order: k, message: toolResult(callId, name, call.content) });
            next.push({ order: k, message: toolResult(callId, name, "retried: same result") });
          }
        });
        next.sort((a, b) => a.order - b.order);
        for (const { message } of next) messages.push(message);
        break;
      }
      case "chat":
        messages.push(new ChatMessage({ role: op.role, content: buildContent(op.content), id: messageId(op.id) }));
        break;
      case "reuse": {
        const call = { id: "call_0", name: "search", args: { q: "again" } };
        messages.push(aiMessage(false, op.content, "fresh", [call]));
        if (op.answered) messages.push(toolResult("call_0", "search", "same id, new answer"));
        break;
      }
      case "orphan":
        messages.push(toolResult(`call-orphan-${(callSeq += 1)}`, "search", op.content));
        break;
      case "retry":
        messages.push(aiMessage(op.chunk, op.content, op.id, lastCalls));
        break;
      case "duplicate":
        if (messages.length > 0) messages.push(messages[Math.max(0, messages.length - 1 - op.back)]!);
        break;
      case "note": {
        const note = createOmissionNote(op.template, op.removed, op.kept);
        messages.push(note);
        break;
      }
      case "mangledNote": {
        const compaction: Record<string, unknown> = { strategy: "sliding_window", kept_messages: "3" };
        if (op.removed !== null) compaction.removed_messages = op.removed;
        messages.push(new HumanMessage({ content: "[some earlier messages were removed]", response_metadata: { compaction } }));
        break;
      }
      case "fakeNote":
        messages.push(
          new HumanMessage({
            content: renderOmissionNote(DEFAULT_OMISSION_NOTE, op.removed),
            id: messageId("fresh"),
            // Metadata from somewhere else must not make it a note either.
            response_metadata: op.withOtherMetadata ? { compaction: { strategy: "summary", removed_messages: op.removed } } : {},
          }),
        );
        break;
    }
    for (let k = pending.length - 1; k >= 0; k -= 1) {
      if (pending[k]!.due <= step) {
        messages.push(pending[k]!.message);
        pending.splice(k, 1);
      }
    }
  });
  if (hugeAt >= plan.ops.length) addHuge();
  if (plan.flushPending) for (const { message } of pending) messages.push(message);
  return messages;
}

/**
 * The input of one messy case: the built conversation, or, with
 * `precompact`, the compactor's own result for a prefix followed by the rest
 * (so earlier notes and kept windows are real ones).
 */
export async function prepareMessyInput(plan: MessyPlan, counter: TokenCounterLike): Promise<BaseMessage[]> {
  const messages = buildMessyConversation(plan);
  if (plan.precompact === null) return messages;
  const cut = Math.floor(plan.precompact.prefix * messages.length);
  const prefix = messages.slice(0, cut);
  const total = await totalTokens(counter, prefix);
  const compacted = await new SlidingWindowCompactor({ cache: null }).compact(
    prefix,
    Math.floor(total * plan.precompact.fraction),
    counter,
  );
  return [...(compacted ?? prefix), ...messages.slice(cut)];
}

// ---------------------------------------------------------------------------
// Well-formed conversations with blocks, images and chunks

export interface WellFormedStepPlan {
  content: ContentPlan;
  chunk: boolean;
  /** Whether the calls also stand in the content as Anthropic `tool_use` blocks, as ChatAnthropic returns them. */
  toolUseBlocks: boolean;
  /** Result contents, in call order; `order` is the order results come back in. */
  calls: { name: string; args: Record<string, string | number>; result: ContentPlan }[];
  order: number[];
}

export interface WellFormedTurnPlan {
  human: ContentPlan;
  steps: WellFormedStepPlan[];
  answer: string | null;
}

export interface WellFormedPlan {
  system: string[];
  earlierNote: number | null;
  turns: WellFormedTurnPlan[];
}

const nonEmptyText = words;
/** A user's content: text, or text and images (never empty: providers reject empty user turns). */
const userContent: fc.Arbitrary<ContentPlan> = fc.oneof(
  { weight: 3, arbitrary: text },
  {
    weight: 1,
    arbitrary: fc
      .tuple(nonEmptyText, fc.array(block, { maxLength: 3 }))
      .map(([first, rest]): BlockPlan[] => [{ type: "text", text: first }, ...rest]),
  },
);
/** A result's content: text (possibly empty) or text blocks. */
const resultContent: fc.Arbitrary<ContentPlan> = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: fc.array(nonEmptyText.map((t): BlockPlan => ({ type: "text", text: t })), { minLength: 1, maxLength: 3 }) },
);
/** The model's own text next to its calls: empty, text or text blocks. */
const aiContent: fc.Arbitrary<ContentPlan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  { weight: 3, arbitrary: text },
  { weight: 1, arbitrary: fc.array(nonEmptyText.map((t): BlockPlan => ({ type: "text", text: t })), { minLength: 1, maxLength: 2 }) },
);

const wellFormedStep: fc.Arbitrary<WellFormedStepPlan> = fc
  .array(fc.record({ name: fc.constantFrom("weather", "flights"), args: fc.dictionary(fc.constantFrom("city", "n"), fc.oneof(words, fc.nat(99)), { maxKeys: 2, noNullPrototype: true }), result: resultContent }), {
    minLength: 1,
    maxLength: 3,
  })
  .chain((calls) =>
    fc.record({
      content: aiContent,
      chunk: fc.boolean(),
      toolUseBlocks: fc.boolean(),
      calls: fc.constant(calls),
      order: fc.shuffledSubarray(
        calls.map((_, i) => i),
        { minLength: calls.length, maxLength: calls.length },
      ),
    }),
  );

/** Well-formed conversations: every call answered right after it, system messages only first, a user message first. */
export function wellFormedPlanArbitrary(): fc.Arbitrary<WellFormedPlan> {
  return fc.record({
    system: fc.array(nonEmptyText, { maxLength: 2 }),
    earlierNote: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 40 })),
    turns: fc.array(
      fc.record({
        human: userContent,
        steps: fc.array(wellFormedStep, { maxLength: 4 }),
        answer: fc.option(nonEmptyText, { freq: 4 }), // a final answer in three of four turns
      }),
      { minLength: 1, maxLength: 7 },
    ),
  });
}

export function buildWellFormedConversation(plan: WellFormedPlan): BaseMessage[] {
  let callSeq = 0;
  let idSeq = 0;
  const nextId = () => `wf-${(idSeq += 1)}`;
  const messages: BaseMessage[] = plan.system.map((t) => new SystemMessage({ content: t, id: nextId() }));
  if (plan.earlierNote !== null) messages.push(createOmissionNote(DEFAULT_OMISSION_NOTE, plan.earlierNote, messages.length + 1));
  for (const turn of plan.turns) {
    messages.push(new HumanMessage({ content: buildContent(turn.human), id: nextId() }));
    for (const step of turn.steps) {
      const calls = step.calls.map((call) => ({ id: `toolu_${(callSeq += 1)}`, name: call.name, args: call.args, type: "tool_call" as const }));
      let content = buildContent(step.content);
      if (step.toolUseBlocks) {
        const text = typeof content === "string" ? (content === "" ? [] : [{ type: "text", text: content }]) : content;
        content = [...text, ...calls.map(({ id, name, args }) => ({ type: "tool_use", id, name, input: args }))];
      }
      const fields = { content, id: nextId(), tool_calls: calls };
      messages.push(step.chunk ? new AIMessageChunk(fields) : new AIMessage(fields));
      for (const k of step.order) {
        messages.push(new ToolMessage({ content: buildContent(step.calls[k]!.result), tool_call_id: calls[k]!.id, name: calls[k]!.name, id: nextId() }));
      }
    }
    if (turn.answer !== null) messages.push(new AIMessage({ content: turn.answer, id: nextId() }));
  }
  return messages;
}

// ---------------------------------------------------------------------------
// Targets, counters, compactor options

/** A target: absolute (0, small, huge, the largest finite number) or a fraction of the input's size. */
export type TargetPlan = { kind: "tokens"; tokens: number } | { kind: "fraction"; fraction: number };

export const targetArbitrary: fc.Arbitrary<TargetPlan> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<TargetPlan>({ kind: "tokens", tokens: 0 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 400 }).map((tokens): TargetPlan => ({ kind: "tokens", tokens })) },
  { weight: 8, arbitrary: fc.double({ min: 0, max: 1.3, noNaN: true }).map((fraction): TargetPlan => ({ kind: "fraction", fraction })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(1e6, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, 123.75)
      .map((tokens): TargetPlan => ({ kind: "tokens", tokens })),
  },
);

/** The target in tokens for an input of `total` tokens. */
export function resolveTarget(plan: TargetPlan, total: number): number {
  return plan.kind === "tokens" ? plan.tokens : Math.floor(total * plan.fraction);
}

export type CounterName = "approximate" | "tiktoken-o200k" | "tiktoken-cl100k" | "async-approximate" | "model";

/** An asynchronous counter (takes the compactor's second pass). Stable, so its cache entries are shared. */
const asyncApproximate = async (messages: BaseMessage[]): Promise<number> => approximateTokenCounter(messages);
/** A model-like counter: `getNumTokens(content)`, as `trimMessages` accepts. */
const modelCounter = {
  getNumTokens(content: MessageContent): number {
    const chars = typeof content === "string" ? content.length : JSON.stringify(content).length;
    return 1 + Math.ceil(chars / 3);
  },
};

export function counterFor(name: CounterName): TokenCounterLike {
  switch (name) {
    case "approximate":
      return approximateTokenCounter;
    case "tiktoken-o200k":
      return tiktokenCounter("o200k_base");
    case "tiktoken-cl100k":
      return tiktokenCounter("cl100k_base");
    case "async-approximate":
      return asyncApproximate;
    case "model":
      return modelCounter;
  }
}

/** Mostly the fast approximate counter; exact tiktoken, async and model counters in a smaller share. */
export const counterArbitrary: fc.Arbitrary<CounterName> = fc.oneof(
  { weight: 15, arbitrary: fc.constant<CounterName>("approximate") },
  { weight: 1, arbitrary: fc.constant<CounterName>("tiktoken-o200k") },
  { weight: 1, arbitrary: fc.constant<CounterName>("tiktoken-cl100k") },
  { weight: 2, arbitrary: fc.constant<CounterName>("async-approximate") },
  { weight: 1, arbitrary: fc.constant<CounterName>("model") },
);

/** The test's own memo of counts (messages are never edited by these tests), kept apart from the library's cache. */
const memo = new WeakMap<object, WeakMap<BaseMessage, number>>();

/** Per-message counts through the public counter forms, in order (counters are additive over messages). */
export async function countEach(counter: TokenCounterLike, messages: readonly BaseMessage[]): Promise<number[]> {
  let known = memo.get(counter);
  if (known === undefined) memo.set(counter, (known = new WeakMap()));
  const counts: number[] = [];
  for (const message of messages) {
    let count = known.get(message);
    if (count === undefined) {
      count = typeof counter === "function" ? await counter([message]) : await counter.getNumTokens(message.content);
      known.set(message, count);
    }
    counts.push(count);
  }
  return counts;
}

export async function totalTokens(counter: TokenCounterLike, messages: readonly BaseMessage[]): Promise<number> {
  return (await countEach(counter, messages)).reduce((a, b) => a + b, 0);
}

export interface CompactorPlan {
  minKeepSteps: number;
  omissionNote: "default" | "custom" | "none" | "empty";
  cache: "shared" | "own" | "none";
}

export const compactorPlanArbitrary: fc.Arbitrary<CompactorPlan> = fc.record({
  minKeepSteps: fc.integer({ min: 0, max: 5 }),
  omissionNote: fc.constantFrom<CompactorPlan["omissionNote"]>("default", "default", "custom", "none", "empty"),
  cache: fc.constantFrom<CompactorPlan["cache"]>("shared", "shared", "own", "none"),
});

export function compactorOptions(plan: CompactorPlan): SlidingWindowCompactorOptions {
  const omissionNote = { default: undefined, custom: "({num_removed} gone; {braces} stay)", none: null, empty: "" }[plan.omissionNote];
  const cache = { shared: undefined, own: new TokenCountCache(), none: null }[plan.cache];
  return {
    minKeepSteps: plan.minKeepSteps,
    ...(omissionNote === undefined ? {} : { omissionNote }),
    ...(cache === undefined ? {} : { cache }),
  };
}
