import type { BaseMessage } from "@langchain/core/messages";
import { DynamicStructuredTool } from "@langchain/core/tools";
import type { CompactionHook } from "../compactors/compaction-hook";
import type { RequestOverhead } from "../compactors/compactor";
import { describeValue } from "../errors";

/**
 * Compaction on request: a tool the agent can call ("compact the
 * conversation, keeping the API decisions") that makes the next model call
 * compact, with those instructions handed to the summary stage. It shares
 * the integration's hook and its record of each thread, so that it is
 * refused when compacting would do nothing worth it (the context is small,
 * or was just compacted), and a requested compaction and an automatic one
 * are never made twice in a row.
 */

/** What an integration remembers of one thread for its compaction tool. */
interface ThreadRecord {
  /** What the model was last sent, and what the request carried besides it. */
  sent: BaseMessage[];
  overheadTokens: number;
  /** Whether it was compacted just before it was sent (then the usage its AI messages report is that of a larger request). */
  compacted: boolean;
  /** A compaction the tool asked for, to make at the next model call. */
  requested?: { instructions: string };
}

/** Threads remembered per integration; past this, the least recently seen are forgotten. */
const MAX_THREADS = 10_000;

/**
 * The state an integration (the `createAgent` middleware, the LangGraph
 * node) shares with its compaction tool: its hook, and per thread (by
 * `thread_id`) what the model was last sent and any compaction requested.
 * In memory, for the process's life.
 */
export class CompactionControl {
  private readonly threads = new Map<string, ThreadRecord>();

  /**
   * @param hook - the integration's hook
   * @param overhead - what the integration's requests carry besides their messages, when fixed (the node's)
   * @param events - whether the integration dispatches compaction events
   */
  constructor(
    readonly hook: CompactionHook,
    readonly overhead: RequestOverhead = {},
    readonly events = true,
  ) {}

  /** Records what the model of `thread` is sent now; `compacted`: a compaction made it just now. */
  sent(thread: string, messages: BaseMessage[], overheadTokens: number, compacted = false): void {
    const requested = this.threads.get(thread)?.requested;
    this.threads.delete(thread);
    this.threads.set(thread, { sent: messages, overheadTokens, compacted, ...(requested === undefined ? {} : { requested }) });
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value!);
  }

  /** What the model of `thread` was last sent, if it was sent anything. */
  lastSent(thread: string): { messages: BaseMessage[]; overheadTokens: number; compacted: boolean } | undefined {
    const record = this.threads.get(thread);
    return record === undefined ? undefined : { messages: record.sent, overheadTokens: record.overheadTokens, compacted: record.compacted };
  }

  /** Asks for a compaction at `thread`'s next model call. */
  request(thread: string, instructions: string): void {
    const record = this.threads.get(thread);
    if (record !== undefined) record.requested = { instructions };
  }

  /** The compaction asked for at `thread`, if any, forgetting it (it is made once). */
  takeRequest(thread: string): { instructions: string } | undefined {
    const record = this.threads.get(thread);
    const requested = record?.requested;
    if (record !== undefined) delete record.requested;
    return requested;
  }
}

/** Where an integration keeps its control: a registry symbol, the same for every copy of this package. */
export const COMPACTION_CONTROL = Symbol.for("langchain-compaction.control");

/** The thread a run belongs to: its `thread_id`, or `""` for a run without one. */
export function threadOf(configurable: unknown): string {
  const id = typeof configurable === "object" && configurable !== null ? (configurable as { thread_id?: unknown }).thread_id : undefined;
  return typeof id === "string" || typeof id === "number" ? String(id) : "";
}

/** Options of {@link createCompactionTool}. */
export interface CompactionToolOptions {
  /**
   * Below this fraction of the token level at which the integration compacts
   * by itself, the tool refuses (there is too little to gain for what a
   * compaction costs). It also refuses when the context is already at the
   * size a compaction would leave. Default `0.5`.
   */
  minFraction?: number;
  /** The tool's name. Default `"compact_conversation"`. */
  name?: string;
}

/** The default name of the compaction tool. */
export const COMPACTION_TOOL_NAME = "compact_conversation";

/**
 * A tool that lets the agent (or the user, through the agent) ask for a
 * compaction before the next model call, with instructions on what to keep,
 * for the `createAgent` middleware or the LangGraph node it is given (in
 * any mode). Bind it to the agent with its other tools. It answers with a
 * tool result: scheduled, or refused and why.
 *
 * @example
 * ```ts
 * const compaction = compactionMiddleware({ contextWindow: 200_000, compactor: [summarization, window] });
 * const agent = createAgent({ model, tools: [...tools, createCompactionTool(compaction)], middleware: [compaction] });
 * ```
 */
export function createCompactionTool(integration: unknown, options: CompactionToolOptions = {}): DynamicStructuredTool {
  const control = controlOf(integration);
  if (control === undefined) {
    throw new TypeError(
      `createCompactionTool needs the middleware (compactionMiddleware) or the node (createCompactionNode) it works with, got ${describeValue(integration)}`,
    );
  }
  if (typeof options !== "object" || options === null) throw new TypeError(`createCompactionTool options must be an object, got ${describeValue(options)}`);
  const { minFraction = 0.5, name = COMPACTION_TOOL_NAME } = options;
  if (typeof minFraction !== "number" || !(minFraction >= 0 && minFraction <= 1)) {
    throw new RangeError(`\`minFraction\` must be a fraction in [0, 1], got ${describeValue(minFraction)}`);
  }
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new TypeError(`\`name\` must be a tool name (letters, digits, _ and -, at most 64), got ${describeValue(name)}`);
  }
  const { hook } = control;
  return new DynamicStructuredTool({
    name,
    description:
      "Compacts this conversation before your next step: older messages are summarized or removed to free up context. " +
      "Give `instructions` to say what the compaction must keep (decisions, identifiers, open questions). " +
      "Use it when the context is long and much of it is no longer needed.",
    // A JSON schema rather than zod: zod is an optional peer, and the main entry must load without it.
    schema: {
      type: "object",
      properties: { instructions: { type: "string", description: "What the compacted conversation must keep" } },
      additionalProperties: false,
    },
    func: async (input: { instructions?: string }, _runManager, config) => {
      const thread = threadOf(config?.configurable);
      const last = control.lastSent(thread);
      if (last === undefined) return "Compaction refused: this conversation has not been sent to the model yet.";
      // Just compacted, the newest reported usage is that of the request before the compaction: counted locally instead.
      const estimate = Math.round(last.compacted ? await hook.localTokens(last.messages, last.overheadTokens) : await hook.estimateTokens(last.messages, last.overheadTokens));
      const floor = Math.round(Math.max(minFraction * hook.triggerTokens, hook.targetTokens(0)));
      if (estimate <= floor) {
        return (
          `Compaction refused: the context holds about ${estimate} tokens, and compacting is worth it only above ${floor} ` +
          `(it compacts by itself at ${Math.round(hook.triggerTokens)}). Carry on.`
        );
      }
      const instructions = typeof input.instructions === "string" ? input.instructions.trim() : "";
      control.request(thread, instructions);
      return `Compaction scheduled: the conversation (about ${estimate} tokens) will be compacted before your next step${instructions === "" ? "" : `, keeping: ${instructions}`}.`;
    },
  });
}

/** The control an integration shares with its compaction tool, if `integration` is one of ours. */
export function controlOf(integration: unknown): CompactionControl | undefined {
  if ((typeof integration !== "object" && typeof integration !== "function") || integration === null) return undefined;
  const control = (integration as { [COMPACTION_CONTROL]?: unknown })[COMPACTION_CONTROL];
  // By its methods: the integration may come from the other build of this package (ESM beside CommonJS).
  const candidate = control as Partial<CompactionControl> | undefined;
  return typeof candidate?.takeRequest === "function" && typeof candidate.lastSent === "function" && typeof candidate.hook === "object" ? (control as CompactionControl) : undefined;
}
