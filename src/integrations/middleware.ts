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
import { CompactionHook } from "../compactors/compaction-hook";
import type { CompactionHookOptions } from "../compactors/compaction-hook";
import type { RequestOverhead } from "../compactors/compactor";
import type { ToolLike } from "../compactors/compactor";
import { assertEvictionCallback, evictionsOf } from "../compactors/evictions";
import type { EvictionCallback } from "../compactors/evictions";
import { describeValue } from "../errors";
import { commitPlan } from "./commit-update";
import { advanceCompactionView } from "./view-window";
import type { CompactionView } from "./view-window";

/** How the middleware applies a compaction. */
export type CompactionMiddlewareMode = "view" | "commit";

/** Options of {@link compactionMiddleware}: the {@link CompactionHook}'s, plus the mode. */
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
  _compactionView: z.custom<CompactionView | null>().optional(),
  _compactionOverhead: z.number().optional(),
});

interface OverheadSource {
  tools: readonly (ClientTool | ServerTool)[];
  systemMessage: BaseMessage;
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
  const { mode = "view", onEvict, ...hookOptions } = options;
  if (mode !== "view" && mode !== "commit") {
    throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
  }
  assertEvictionCallback(onEvict, mode);
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
  const measure = overheadMeter(hook);

  if (mode === "view") {
    return createMiddleware({
      name: COMPACTION_MIDDLEWARE_NAME,
      stateSchema,
      wrapModelCall: async (request, handler) => {
        const signal = request.runtime?.signal;
        const overhead = await raceAbort(measure({ tools: request.tools, systemMessage: request.systemMessage }), signal);
        const advance = await advanceCompactionView(
          hook,
          request.messages,
          request.state._compactionView,
          { extraTokens: overhead },
          signal === undefined ? {} : { signal },
        );
        // `advance.messages` is always a fresh array: the state's own array is never handed on.
        const response = await handler({ ...request, messages: advance.messages });
        // A structured-output result is not an AIMessage and must reach the agent as it is; the cut is then
        // simply recomputed at the next call.
        if (advance.report === null || !AIMessage.isInstance(response)) return response;
        return new Command({ update: { _compactionView: advance.view } });
      },
    });
  }

  return createMiddleware({
    name: COMPACTION_MIDDLEWARE_NAME,
    stateSchema,
    beforeModel: async (state, runtime) => {
      const signal = runtime?.signal;
      const report = await hook.run(state.messages, { extraTokens: state._compactionOverhead ?? 0 }, signal === undefined ? {} : { signal });
      if (report === null || report.messages === null) return undefined;
      const { update, writtenAs } = commitPlan(state.messages, report);
      if (onEvict !== undefined && update.length > 0) {
        const evicted = evictionsOf(state.messages, report, writtenAs);
        if (evicted.length > 0) await onEvict(evicted);
      }
      return { messages: update };
    },
    wrapModelCall: async (request, handler) => {
      const overhead = await raceAbort(measure({ tools: request.tools, systemMessage: request.systemMessage }), request.runtime?.signal);
      const response = await handler({ ...request, messages: [...request.messages] });
      if (request.state._compactionOverhead === overhead || !AIMessage.isInstance(response)) return response;
      return new Command({ update: { _compactionOverhead: overhead } });
    },
  });
}

/**
 * Counts the system prompt and tool schemas, remembering the last answer:
 * `createAgent` hands the same tools array and system message on every call
 * unless a middleware changes them.
 */
function overheadMeter(hook: CompactionHook): (source: OverheadSource) => Promise<number> {
  let last: { source: OverheadSource; tokens: number } | null = null;
  return async (source) => {
    if (last !== null && last.source.tools === source.tools && last.source.systemMessage === source.systemMessage) {
      return last.tokens;
    }
    const overhead: RequestOverhead = {
      // Agent tools are LangChain tools or provider definitions, both of which the converter takes.
      tools: source.tools as readonly ToolLike[],
      // An empty system prompt is not sent (createAgent drops it), so it costs nothing.
      systemMessage: source.systemMessage.text === "" && source.systemMessage.content.length === 0 ? null : source.systemMessage,
    };
    const tokens = await hook.overheadTokens(overhead);
    last = { source, tokens };
    return tokens;
  };
}
