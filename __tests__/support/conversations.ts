/**
 * Random, well-formed agent conversations for property tests, and the
 * assertions those tests share.
 *
 * A conversation is generated as a plain-data {@link ConversationPlan} first
 * (so fast-check can shrink it) and then built into real `@langchain/core`
 * messages. The build also returns the ground truth of its structure (which
 * messages form the system block, each history turn, the task and each step),
 * so a test can check a grouping against what the generator meant rather than
 * against a second derivation from the same messages.
 *
 * API:
 * - {@link conversationArbitrary}: `fc.Arbitrary<BaseMessage[]>`;
 * - {@link labelledConversationArbitrary}: the same, with its structure;
 * - {@link randomConversation}: one conversation from a seed, outside fast-check;
 * - {@link assertProviderValid}: throws unless a chat-completion provider would accept the list;
 * - {@link snapshotMessages}: a deep copy of every own field, to prove nothing was mutated.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import * as fc from "fast-check";

/** One tool call of an AI message, with the size of its result. */
export interface ToolCallPlan {
  name: string;
  argsChars: number;
  resultChars: number;
}

/** An AI message and the tool results answering it (none for a plain answer). */
export interface StepPlan {
  textChars: number;
  calls: ToolCallPlan[];
  /** Order in which the results come back: a permutation of the call indices (parallel calls may finish in any order). */
  resultOrder: number[];
}

/** A history turn: the user's message, the agent's tool-using steps, and its final answer. */
export interface TurnPlan {
  humanChars: number;
  steps: StepPlan[];
  answerChars: number;
}

/** The shape of a whole conversation. */
export interface ConversationPlan {
  /** Sizes of the leading system messages (0 to 2 of them). */
  system: number[];
  /**
   * An earlier omission note, as a previous compaction leaves it: right after
   * the system block, or right after the task message (when that compaction
   * trimmed the task's steps). `null` for none.
   */
  earlierNote: { removed: number; at: "afterSystem" | "afterTask" } | null;
  turns: TurnPlan[];
  /** Size of the latest human message (the current task). */
  taskChars: number;
  /** Steps of the current task so far. */
  steps: StepPlan[];
}

/** A built conversation together with what each message is. */
export interface LabelledConversation {
  messages: BaseMessage[];
  system: SystemMessage[];
  /** The earlier omission note, if the plan had one. */
  earlierNote: HumanMessage | null;
  /** History turns, oldest first, each its messages in order. */
  turns: BaseMessage[][];
  task: HumanMessage;
  /** Steps of the current task, oldest first: an AI message followed by its tool results. */
  steps: BaseMessage[][];
}

/** Bounds of the generated conversations. */
export interface ConversationOptions {
  /** Most history turns. Default 6. */
  maxTurns?: number;
  /** Most steps after the task message. Default 6. */
  maxSteps?: number;
  /** Whether an earlier omission note may open the history. Default true. */
  earlierNotes?: boolean;
}

const WORDS = [
  "the", "agent", "checked", "weather", "in", "Lisbon", "and", "found", "sunny", "skies", "flights", "cost",
  "EUR", "42", "per", "seat", "tool", "returned", "JSON", "rows", "with", "prices", "dates", "09:15", "ok",
];

/** Deterministic text of exactly `chars` characters; `salt` varies it between messages. */
function text(chars: number, salt: number): string {
  let out = "";
  let i = salt;
  while (out.length < chars) {
    out += (out ? " " : "") + WORDS[i % WORDS.length];
    i += 7;
  }
  return out.slice(0, chars);
}

/** Mostly small, sometimes medium, rarely large: real conversations have a few huge tool results. */
const size: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 80 }) },
  { weight: 3, arbitrary: fc.integer({ min: 80, max: 600 }) },
  { weight: 1, arbitrary: fc.integer({ min: 600, max: 4000 }) },
);

const toolCallPlan: fc.Arbitrary<ToolCallPlan> = fc.record({
  name: fc.constantFrom("weather", "flights", "search", "calc"),
  argsChars: fc.integer({ min: 0, max: 60 }),
  resultChars: size,
});

function stepPlan(maxCalls: number): fc.Arbitrary<StepPlan> {
  return fc
    .array(toolCallPlan, { minLength: 0, maxLength: maxCalls })
    .chain((calls) =>
      fc.record({
        textChars: size,
        calls: fc.constant(calls),
        resultOrder: fc.shuffledSubarray(
          calls.map((_, i) => i),
          { minLength: calls.length, maxLength: calls.length },
        ),
      }),
    );
}

/** Steps that use tools (0-3 parallel calls each; an empty call list is a thinking-aloud AI message). */
const toolStep = stepPlan(3);

/** The plan arbitrary; exposed for tests that want to shape conversations further. */
export function conversationPlanArbitrary(options: ConversationOptions = {}): fc.Arbitrary<ConversationPlan> {
  const { maxTurns = 6, maxSteps = 6, earlierNotes = true } = options;
  return fc.record({
    system: fc.array(size, { minLength: 0, maxLength: 2 }),
    // About a third of the conversations carry a note from an earlier compaction.
    earlierNote: earlierNotes
      ? fc.oneof(
          { weight: 2, arbitrary: fc.constant(null) },
          {
            weight: 1,
            arbitrary: fc.record({
              removed: fc.integer({ min: 1, max: 40 }),
              at: fc.constantFrom("afterSystem" as const, "afterTask" as const),
            }),
          },
        )
      : fc.constant(null),
    turns: fc.array(
      fc.record({ humanChars: size, steps: fc.array(toolStep, { maxLength: 3 }), answerChars: size }),
      { maxLength: maxTurns },
    ),
    taskChars: size,
    steps: fc.array(toolStep, { maxLength: maxSteps }),
  });
}

/** Builds real messages from a plan. Every message is a new object; ids of tool calls are unique in the conversation. */
export function buildConversation(plan: ConversationPlan): LabelledConversation {
  let salt = 0;
  let callSeq = 0;
  const nextSalt = () => (salt += 1);
  const buildStep = (step: StepPlan): BaseMessage[] => {
    const calls = step.calls.map((call) => ({
      id: `call_${(callSeq += 1)}`,
      name: call.name,
      args: { q: text(call.argsChars, nextSalt()) },
      resultChars: call.resultChars,
    }));
    const ai = new AIMessage({
      content: text(step.textChars, nextSalt()),
      tool_calls: calls.map(({ id, name, args }) => ({ id, name, args, type: "tool_call" as const })),
    });
    const results = step.resultOrder.map((i) => {
      const call = calls[i]!;
      return new ToolMessage({ tool_call_id: call.id, name: call.name, content: text(call.resultChars, nextSalt()) });
    });
    return [ai, ...results];
  };

  const system = plan.system.map((chars) => new SystemMessage(text(chars, nextSalt())));
  const earlierNote =
    plan.earlierNote === null
      ? null
      : new HumanMessage({
          content: `[${plan.earlierNote.removed} earlier messages were removed.]`,
          response_metadata: {
            compaction: { strategy: "sliding_window", removed_messages: plan.earlierNote.removed, kept_messages: 1 },
          },
        });
  const turns = plan.turns.map((turn) => [
    new HumanMessage(text(turn.humanChars, nextSalt())),
    ...turn.steps.flatMap(buildStep),
    new AIMessage(text(turn.answerChars, nextSalt())),
  ]);
  const task = new HumanMessage(`Task: ${text(plan.taskChars, nextSalt())}`);
  const steps = plan.steps.map(buildStep);
  const noteAt = (where: "afterSystem" | "afterTask") => (earlierNote && plan.earlierNote?.at === where ? [earlierNote] : []);
  const messages = [...system, ...noteAt("afterSystem"), ...turns.flat(), task, ...noteAt("afterTask"), ...steps.flat()];
  return { messages, system, earlierNote, turns, task, steps };
}

/** Conversations with their structure. */
export function labelledConversationArbitrary(options: ConversationOptions = {}): fc.Arbitrary<LabelledConversation> {
  // Built per run, so no two runs share (and could leak state through) message objects.
  return conversationPlanArbitrary(options).map(buildConversation);
}

/** Well-formed agent conversations as plain message lists. */
export function conversationArbitrary(options: ConversationOptions = {}): fc.Arbitrary<BaseMessage[]> {
  return labelledConversationArbitrary(options).map((c) => c.messages);
}

/** One conversation, the same for the same seed and options. */
export function randomConversation(seed: number, options: ConversationOptions = {}): LabelledConversation {
  const [plan] = fc.sample(conversationPlanArbitrary(options), { seed, numRuns: 1 });
  return buildConversation(plan!);
}

function describe(message: BaseMessage, index: number): string {
  return `message ${index} (${message.type})`;
}

/**
 * Throws unless a chat-completion provider would accept the list:
 * - system messages only in the leading run;
 * - every tool call of an AI message answered, exactly once, by the tool
 *   messages that directly follow it (in any order), before any other message;
 * - no tool message that does not answer a call of the AI message before it.
 */
export function assertProviderValid(messages: readonly BaseMessage[]): void {
  let leading = true;
  let pending: Set<string> | null = null; // calls of the last AI message still unanswered
  messages.forEach((message, index) => {
    if (message.type !== "system") leading = false;
    else if (!leading) throw new Error(`${describe(message, index)}: a system message after the leading system block`);

    if (message.type === "tool") {
      const id = (message as ToolMessage).tool_call_id;
      if (pending === null || !pending.has(id)) {
        throw new Error(`${describe(message, index)}: tool result ${JSON.stringify(id)} answers no open call of the AI message before it`);
      }
      pending.delete(id);
      return;
    }
    if (pending !== null && pending.size > 0) {
      throw new Error(`${describe(message, index)}: comes before the results of tool calls ${[...pending].join(", ")}`);
    }
    pending = null;
    if (AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0) {
      pending = new Set(message.tool_calls!.map((call) => call.id ?? ""));
    }
  });
  if (pending !== null && (pending as Set<string>).size > 0) {
    throw new Error(`the conversation ends before the results of tool calls ${[...(pending as Set<string>)].join(", ")}`);
  }
}

type Snapshot = null | boolean | number | string | Snapshot[] | { [key: string]: Snapshot };

function snapshotValue(value: unknown, seen: WeakSet<object>): Snapshot {
  if (value === undefined) return "<undefined>";
  if (value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string") return value;
  if (typeof value === "function") return `<function ${value.name}>`;
  if (typeof value !== "object") return `<${typeof value}>`;
  if (seen.has(value)) return "<cycle>";
  seen.add(value);
  const out: Snapshot = Array.isArray(value)
    ? value.map((item) => snapshotValue(item, seen))
    : Object.fromEntries([
        ["<class>", (value as { constructor?: { name?: string } }).constructor?.name ?? "<none>"],
        // Own keys, including those set to undefined: a written `id` shows up even where it was absent before.
        ...Object.keys(value).map((key) => [key, snapshotValue((value as Record<string, unknown>)[key], seen)]),
      ]);
  seen.delete(value);
  return out;
}

/**
 * A deep copy of every own field of every message (and of the array), so that
 * `expect(snapshotMessages(list)).toStrictEqual(before)` fails on any mutation:
 * a reassigned field, an edited nested value, an added key (such as `id`), or
 * an element replaced, added or removed.
 */
export function snapshotMessages(messages: readonly BaseMessage[]): Snapshot {
  return snapshotValue(messages, new WeakSet());
}
