/**
 * Compaction for `createAgent` from `langchain` v1, as a middleware. This
 * module is its own entry point (`langchain-compaction/middleware`) because
 * `langchain` is an optional peer dependency: the main entry never loads it.
 *
 * @module
 */
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { ClientTool, ServerTool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod/v4";
import { raceAbort } from "../compactors/abort";
import { agentCompactor, RECOMMENDED_AGENT_COMPACT_TO } from "../compactors/agent-compactor";
import type { AgentCompactorOptions } from "../compactors/agent-compactor";
import { CompactionHook } from "../compactors/compaction-hook";
import type { CompactionHookOptions, CompactionHookReport, CompactionRunOptions } from "../compactors/compaction-hook";
import type { RequestOverhead, ToolLike } from "../compactors/compactor";
import { assertEvictionCallback, evictionsOf } from "../compactors/evictions";
import type { EvictionCallback } from "../compactors/evictions";
import { createOffloadReaderTool } from "../compactors/offload-reader";
import type { OffloadStore } from "../compactors/offload-store";
import type { SummaryModel } from "../compactors/summarization";
import { describeValue } from "../errors";
import { repairDanglingCalls } from "../messages/dangling-calls";
import { commitPlan } from "./commit-update";
import { COMPACTION_CONTROL, CompactionControl, threadOf } from "./compaction-tool";
import { contextOverflowOf } from "./context-overflow";
import { emitCompactionEvents } from "./events";
import { assertRuntimeFlag } from "./runtime-options";
import { advanceCompactionView, viewOfShown } from "./view-window";
import type { CompactionView } from "./view-window";

export { createCompactionTool } from "./compaction-tool";

/** How the middleware applies a compaction. */
export type CompactionMiddlewareMode = "view" | "commit";

/** Options of {@link compactionMiddleware}: the {@link CompactionHook}'s, plus how it applies and guards a compaction. */
export interface CompactionMiddlewareOptions extends CompactionHookOptions {
  /**
   * `"view"` (default): only the request sent to the model is compacted; the
   * agent state and its checkpoints keep the full history. `"commit"`: the
   * removed messages are deleted from the state and the note is written in
   * their place.
   */
  mode?: CompactionMiddlewareMode;
  /**
   * `"commit"` mode: called, and awaited, before the update is returned, with
   * every message it takes out of the agent's state (removed, summarized,
   * pruned or offloaded), each with what stands for it afterwards. If it
   * throws or rejects, the model call fails and the state keeps its messages.
   * Not with `"view"` mode, which takes nothing out.
   */
  onEvict?: EvictionCallback;
  /**
   * When the provider refuses a request as too long (`ContextOverflowError`,
   * or a provider's own overflow error), learn from it (its count, its
   * limit), compact harder and send the request once more; a second refusal
   * is the provider's error as it is. Default `true`.
   */
  recoverOverflow?: boolean;
  /**
   * Calls of an earlier step that never got a result (an interrupted run, a
   * tool that threw, a cancelled invocation) are answered, in what the model
   * is sent only, by a synthetic result saying the call was interrupted;
   * the state is not changed. Default `true`.
   */
  repairDanglingToolCalls?: boolean;
  /** Each compaction, refusal, overflow retry and failed summary is dispatched as a LangChain custom event. Default `true`. */
  events?: boolean;
}

/** Options of `createCompactionNode` that the middleware has no use for: it reads them off each request. */
const REQUEST_OVERHEAD_OPTIONS = ["tools", "systemMessage", "extraTokens"] as const;

/** The middleware's name, as it shows in traces and errors. */
export const COMPACTION_MIDDLEWARE_NAME = "CompactionMiddleware";

/**
 * Private state keys (a leading `_` keeps them out of the agent's input and
 * output, not out of its checkpoints). `_compactionView`: the remembered cut
 * of view mode. `_compactionOverhead`: the tokens the last request spent on
 * the system prompt and tool schemas, which commit mode needs in
 * `beforeModel`, where the request is not visible.
 */
const stateSchema = z.object({
  /** View mode's remembered cut (private to the middleware). */
  _compactionView: z.custom<CompactionView | null>().optional(),
  /** The tokens the last request spent on the system prompt and tool schemas (private to the middleware; commit mode reads it in `beforeModel`). */
  _compactionOverhead: z.number().optional(),
});

interface ModelRequestParts {
  tools: readonly (ClientTool | ServerTool)[];
  systemMessage: BaseMessage;
}

/** What a model request carries besides its messages, as the hook takes it (an empty system prompt is not sent: createAgent drops it). */
function overheadOf(request: ModelRequestParts): RequestOverhead {
  const { systemMessage } = request;
  return {
    // Agent tools are LangChain tools or provider definitions, both of which the hook's converter takes.
    tools: request.tools as readonly ToolLike[],
    systemMessage: systemMessage.text === "" && systemMessage.content.length === 0 ? null : systemMessage,
  };
}

/**
 * A `createAgent` middleware that keeps the model's context inside its window
 * with the {@link CompactionHook}'s hysteresis: nothing happens until the
 * estimated context reaches `contextWindow × compactAt`; then the oldest
 * history goes, in whole turns and whole steps (a tool call is never
 * separated from its result), down to `contextWindow × compactTo` minus what
 * the request spends on the system prompt and the tool schemas (`createAgent`
 * holds the system prompt outside the message list).
 *
 * - `"view"` (default) works in `wrapModelCall`: the model is handed a new,
 *   compacted array and the state is never touched (its `messages` array is
 *   the very one in `request.messages`, so it is never edited in place). The
 *   cut is remembered in the private state key `_compactionView` (written
 *   with a `Command` returned from `wrapModelCall`, so it is checkpointed with
 *   the thread): between two compactions the model sees the same prefix and
 *   provider prompt caches keep hitting.
 * - `"commit"` works in `beforeModel`: it returns a `RemoveMessage` for each
 *   removed id (only ids read from the current state, never
 *   `REMOVE_ALL_MESSAGES`, which would erase parallel writes) and the note,
 *   which takes over the id of a removed message that stood where the note
 *   goes, so the messages reducer puts it in that slot (see `commitUpdate`). `beforeModel` cannot see the
 *   request, so the overhead is the one measured at the thread's previous
 *   model call (none before the first; the trigger itself relies on the
 *   provider's reported usage, which includes it).
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { compactionMiddleware } from "langchain-compaction/middleware";
 *
 * const agent = createAgent({
 *   model,
 *   tools,
 *   systemPrompt: "You are a travel agent.",
 *   middleware: [compactionMiddleware({ contextWindow: 128_000, compactAt: 0.7, compactTo: 0.4 })],
 *   checkpointer,
 * });
 * ```
 */
export function compactionMiddleware(options: CompactionMiddlewareOptions) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`compactionMiddleware options must be an object, got ${describeValue(options)}`);
  }
  const { mode = "view", onEvict, recoverOverflow = true, repairDanglingToolCalls = true, events = true, ...hookOptions } = options;
  if (mode !== "view" && mode !== "commit") {
    throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
  }
  assertEvictionCallback(onEvict, mode);
  assertRuntimeFlag("recoverOverflow", recoverOverflow);
  assertRuntimeFlag("repairDanglingToolCalls", repairDanglingToolCalls);
  assertRuntimeFlag("events", events);
  // The graph node's overhead options: given here they would be ignored, as the middleware measures each request.
  for (const name of REQUEST_OVERHEAD_OPTIONS) {
    const value = (options as unknown as Record<string, unknown>)[name];
    if (value !== undefined) {
      throw new TypeError(
        `\`${name}\` is an option of createCompactionNode, not of compactionMiddleware, which counts the tools and system ` +
          `prompt of each model request itself; got ${describeValue(value)}`,
      );
    }
  }
  const hook = new CompactionHook(hookOptions);
  const control = new CompactionControl(hook);
  const emit = async (report: CompactionHookReport | null, extra?: Parameters<typeof emitCompactionEvents>[2]) => {
    if (events) await emitCompactionEvents(report, "middleware", extra);
  };
  // The request the model was last sent, for commit mode's `beforeModel`, where it is not visible.
  let lastRequest: RequestOverhead | null = null;
  // Commit mode: threads whose `beforeModel` just compacted, for the compaction tool's record of the request that follows.
  const committed = new Set<string>();
  const toSend = (messages: BaseMessage[]) => (repairDanglingToolCalls ? repairDanglingCalls(messages).messages : messages);

  /**
   * The model call, and when the provider refuses it as too long, the hook
   * taught what it said, a forced compaction of `sent`, and one more call
   * with the result; `compacted` is then that compaction's report.
   */
  const callWithRecovery = async (
    request: { messages: BaseMessage[] },
    handler: (request: never) => Promise<unknown>,
    sent: BaseMessage[],
    overhead: RequestOverhead,
    signal: AbortSignal | undefined,
  ): Promise<{ response: unknown; compacted: CompactionHookReport | null }> => {
    try {
      return { response: await handler({ ...request, messages: toSend(sent) } as never), compacted: null };
    } catch (error) {
      const overflow = recoverOverflow ? contextOverflowOf(error) : null;
      if (overflow === null) throw error;
      const overheadTokens = await hook.overheadTokens(overhead);
      const estimatedTokens = await hook.estimateTokens(sent, overheadTokens);
      hook.learnFromOverflow({ ...countsOf(overflow), estimatedTokens, localTokens: await hook.localTokens(sent, overheadTokens) });
      const retry = await hook.run(sent, overhead, { ...(signal === undefined ? {} : { signal }), request: overhead, force: true });
      if (retry === null || retry.messages === null) throw error;
      await emit(retry, { overflow: { ...countsOf(overflow), estimatedTokens, error: error instanceof Error ? error.message : String(error) } });
      // A second refusal is the provider's error, as it is.
      return { response: await handler({ ...request, messages: toSend(retry.messages) } as never), compacted: retry };
    }
  };

  const middleware =
    mode === "view"
      ? createMiddleware({
          name: COMPACTION_MIDDLEWARE_NAME,
          stateSchema,
          wrapModelCall: async (request, handler) => {
            const signal = request.runtime?.signal;
            const thread = threadOf(request.runtime?.configurable);
            const overhead = overheadOf(request);
            const asked = control.takeRequest(thread);
            const runOptions: CompactionRunOptions = {
              ...(signal === undefined ? {} : { signal }),
              request: overhead,
              ...(asked === undefined ? {} : { force: true, instructions: asked.instructions }),
            };
            const advance = await advanceCompactionView(hook, request.messages, request.state._compactionView, overhead, runOptions);
            await emit(advance.run);
            control.sent(thread, advance.messages, await raceAbort(hook.overheadTokens(overhead), signal), advance.report !== null);
            // `advance.messages` is always a fresh array: the state's own array is never handed on.
            const { response, compacted } = await callWithRecovery(request, handler as never, advance.messages, overhead, signal);
            const view = compacted?.messages != null ? viewOfShown(request.messages, compacted.messages) : advance.view;
            if (compacted?.messages != null) control.sent(thread, compacted.messages, await hook.overheadTokens(overhead), true);
            // A structured-output result is not an AIMessage and must reach the agent as it is; the cut is then
            // simply recomputed at the next call.
            if ((advance.report === null && compacted === null) || !AIMessage.isInstance(response)) return response as AIMessage;
            return new Command({ update: { _compactionView: view } });
          },
        })
      : createMiddleware({
          name: COMPACTION_MIDDLEWARE_NAME,
          stateSchema,
          beforeModel: async (state, runtime) => {
            const signal = runtime?.signal;
            const thread = threadOf(runtime?.configurable);
            const asked = control.takeRequest(thread);
            // The request is not visible here: the overhead is the one measured at the previous call.
            const report = await hook.run(state.messages, { extraTokens: state._compactionOverhead ?? 0 }, {
              ...(signal === undefined ? {} : { signal }),
              ...(lastRequest === null ? {} : { request: lastRequest }),
              ...(asked === undefined ? {} : { force: true, instructions: asked.instructions }),
            });
            await emit(report);
            if (report === null || report.messages === null) return undefined;
            committed.add(thread);
            return { messages: await commitMessages(state.messages, report) };
          },
          wrapModelCall: async (request, handler) => {
            const signal = request.runtime?.signal;
            const overhead = overheadOf(request);
            lastRequest = overhead;
            const overheadTokens = await raceAbort(hook.overheadTokens(overhead), signal);
            const thread = threadOf(request.runtime?.configurable);
            control.sent(thread, request.messages, overheadTokens, committed.delete(thread));
            const { response, compacted } = await callWithRecovery(request, handler as never, [...request.messages], overhead, signal);
            if (compacted?.messages != null) control.sent(thread, compacted.messages, overheadTokens, true);
            if (!AIMessage.isInstance(response)) return response as AIMessage;
            const update: Record<string, unknown> = {};
            if (compacted?.messages != null) update.messages = await commitMessages(request.messages, compacted);
            if (request.state._compactionOverhead !== overheadTokens) update._compactionOverhead = overheadTokens;
            return Object.keys(update).length === 0 ? response : new Command({ update });
          },
        });
  /** The state update of a commit, `onEvict` heard first. */
  async function commitMessages(messages: BaseMessage[], report: CompactionHookReport): Promise<BaseMessage[]> {
    const { update, writtenAs } = commitPlan(messages, report);
    if (onEvict !== undefined && update.length > 0) {
      const evicted = evictionsOf(messages, report, writtenAs);
      if (evicted.length > 0) await onEvict(evicted);
    }
    return update;
  }
  Object.defineProperty(middleware, COMPACTION_CONTROL, { value: control, enumerable: false });
  return middleware;
}

/** The counts an overflow gave, without its error. */
function countsOf(overflow: { requestTokens?: number; limitTokens?: number }): { requestTokens?: number; limitTokens?: number } {
  return {
    ...(overflow.requestTokens === undefined ? {} : { requestTokens: overflow.requestTokens }),
    ...(overflow.limitTokens === undefined ? {} : { limitTokens: overflow.limitTokens }),
  };
}

/** Options of {@link agentCompactionMiddleware}: the middleware's own, less `compactor`, which it builds. */
export interface AgentCompactionMiddlewareOptions extends Omit<CompactionMiddlewareOptions, "compactor"> {
  /** The agent's own chat model: it writes the summaries, reading the conversation from the provider's prompt cache. */
  model: SummaryModel;
  /**
   * Where large tool results are offloaded (a LangGraph `BaseStore`, such as
   * `InMemoryStore`, or any `OffloadStore`). The middleware then gives the
   * agent the tool that reads one back (`createOffloadReaderTool`): do not
   * add it yourself. Default none: summaries and the window only.
   */
  store?: OffloadStore;
  /** Options of the {@link agentCompactor} it builds (summary size, instructions, `protect`, `before`, ...). Default none. */
  summarization?: Omit<AgentCompactorOptions, "model" | "offload">;
}

/**
 * The recommended compaction for a `createAgent` agent, in one line:
 * {@link compactionMiddleware} with `agentCompactor` (large tool results
 * offloaded to `store` when one is given, then summaries written by the
 * agent's own model, then a window that keeps every summary) and
 * `compactTo: 0.3` (fewer, deeper compactions: each one rewrites the
 * provider's cached prefix). With a store it also registers the tool that
 * reads an offloaded result back. Every option of `compactionMiddleware`
 * but `compactor` may be given, and overrides these defaults.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   model,
 *   tools,
 *   middleware: [agentCompactionMiddleware({ model, contextWindow: 200_000, store: new InMemoryStore() })],
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export function agentCompactionMiddleware(options: AgentCompactionMiddlewareOptions) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`agentCompactionMiddleware options must be an object, got ${describeValue(options)}`);
  }
  const given = (options as { compactor?: unknown }).compactor;
  if (given !== undefined) {
    throw new TypeError(`agentCompactionMiddleware builds its own compactor; pass \`summarization\` options, or use compactionMiddleware for another compactor (got \`compactor\`: ${describeValue(given)})`);
  }
  const { model, store, summarization = {}, ...middlewareOptions } = options;
  if (typeof summarization !== "object" || summarization === null || Array.isArray(summarization)) {
    throw new TypeError(`\`summarization\` must be the options of agentCompactor, got ${describeValue(summarization)}`);
  }
  // agentCompactor checks the store (its offload stage does) before anything is built.
  const compactor = agentCompactor({ ...summarization, model, ...(store === undefined ? {} : { offload: { store } }) });
  const defaultTarget = middlewareOptions.compactTo === undefined && middlewareOptions.target === undefined ? { compactTo: RECOMMENDED_AGENT_COMPACT_TO } : {};
  const middleware = compactionMiddleware({ ...defaultTarget, ...middlewareOptions, compactor });
  // createAgent binds a middleware's `tools` to the model and runs them in its tool node, beside the agent's own.
  if (store !== undefined) Object.assign(middleware, { tools: [createOffloadReaderTool({ store })] });
  return middleware;
}
