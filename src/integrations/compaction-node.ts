import type { BaseMessage } from "@langchain/core/messages";
import { raceAbort } from "../compactors/abort";
import { carriedOverhead, CompactionHook } from "../compactors/compaction-hook";
import type { CompactionHookOptions, CompactionRunOptions } from "../compactors/compaction-hook";
import type { RequestOverhead } from "../compactors/compactor";
import { assertEvictionCallback, evictionsOf } from "../compactors/evictions";
import type { EvictionCallback } from "../compactors/evictions";
import { assertConversation } from "../messages/conversation-check";
import { describeValue } from "../errors";
import { isRepairedCallResult, repairDanglingCalls } from "../messages/dangling-calls";
import { commitPlan } from "./commit-update";
import { COMPACTION_CONTROL, CompactionControl, threadOf } from "./compaction-tool";
import { emitCompactionEvents } from "./events";
import { assertRuntimeFlag } from "./runtime-options";
import { advanceCompactionView, viewOfShown } from "./view-window";
import type { CompactionView } from "./view-window";

/** The state key where `"view"` mode remembers its cut. */
export const COMPACTION_VIEW_KEY = "compactionView";

/** The channel where `createReactAgent` keeps what its `preModelHook` last returned for the model. */
const LLM_INPUT_KEY = "llmInputMessages";

/**
 * The part of a LangGraph node's config the node reads: the run's signal,
 * and the channel reader the graph runtime puts in `configurable` (how
 * LangGraph's own `ChannelRead` reads state a node was not given).
 */
export interface CompactionNodeConfig {
  /** The run's abort signal: an abort stops the compaction (and any summary call) and rejects. */
  signal?: AbortSignal;
  /** The graph runtime's configurable values, where the node finds the channel reader. */
  configurable?: Record<string, unknown>;
}

/** LangGraph's key for the channel reader in `configurable` (`CONFIG_KEY_READ`). */
const CONFIG_KEY_READ = "__pregel_read";

type ChannelReader = (select: string[], fresh?: boolean) => Record<string, unknown>;

/**
 * What `createReactAgent`'s graph last handed its model from this node:
 * `llmInputMessages` is a channel of that graph, but not part of the state
 * the pre-model hook is given, so it is read through the runtime's reader.
 * `undefined` when the graph has no such channel (or the node runs outside a
 * graph).
 */
function lastModelInput(config: CompactionNodeConfig | undefined): BaseMessage[] | undefined {
  const read = config?.configurable?.[CONFIG_KEY_READ];
  if (typeof read !== "function") return undefined;
  let values: Record<string, unknown>;
  try {
    values = (read as ChannelReader)([LLM_INPUT_KEY]);
  } catch {
    return undefined;
  }
  const value = values?.[LLM_INPUT_KEY];
  return Array.isArray(value) ? (value as BaseMessage[]) : undefined;
}

/** Options of {@link createCompactionNode}. */
export interface CompactionNodeOptions extends CompactionHookOptions, RequestOverhead {
  /**
   * `"view"` (default): the state keeps the full history and the node returns
   * the compacted `llmInputMessages` for the model, remembering its cut under
   * {@link COMPACTION_VIEW_KEY}. `"commit"`: the node removes the compacted
   * messages from state and puts the omission note in their place.
   */
  mode?: "view" | "commit";
  /**
   * `"commit"` mode: called, and awaited, before the node returns its update,
   * with every message the update takes out of the state (removed, summarized,
   * pruned or offloaded), each with what stands for it afterwards. If it
   * throws or rejects, the node does too and the state keeps its messages.
   * (The checkpointer keeps earlier checkpoints anyway; this is for an archive
   * of your own.) Not with `"view"` mode, which takes nothing out.
   */
  onEvict?: EvictionCallback;
  /**
   * Calls of an earlier step that never got a result (an interrupted run, a
   * tool that threw, a cancelled invocation) are answered, in what the model
   * is sent only, by a synthetic result saying the call was interrupted; the
   * state is not changed. In `"view"` mode always; in `"commit"` mode where
   * the graph sends the model `llmInputMessages` (`createReactAgent`,
   * `CompactionGraphAnnotation`), since a state's messages reducer cannot
   * put a result anywhere but at the end. Default `true`.
   */
  repairDanglingToolCalls?: boolean;
  /** Each compaction, refusal and failed summary is dispatched as a LangChain custom event (see `events.ts`). Default `true`. */
  events?: boolean;
}

/** The state the node reads. */
export interface CompactionNodeState {
  /** The conversation, as a messages state holds it. */
  messages: BaseMessage[];
  /** Present (possibly `null`) when the graph's state has the key; `"view"` mode requires it. */
  [COMPACTION_VIEW_KEY]?: CompactionView | null;
}

/** What the node returns: an update for a messages state, in `createReactAgent`'s conventions. */
export interface CompactionNodeUpdate {
  /** `"view"`: what the model is sent now (the kept messages of state, the same objects, plus the note). */
  llmInputMessages?: BaseMessage[];
  /** `"view"`: the new cut, written only when it moved. */
  [COMPACTION_VIEW_KEY]?: CompactionView | null;
  /** `"commit"`: one `RemoveMessage` per removed id, and the note (which takes over one removed message's id and place). */
  messages?: BaseMessage[];
}

/** A graph node: a function of the state (and of the run's config, which LangGraph passes). */
export type CompactionNode = (state: CompactionNodeState, config?: CompactionNodeConfig) => Promise<CompactionNodeUpdate>;

/**
 * A LangGraph node that keeps the model inside its context window, driven by
 * a {@link CompactionHook}: it fires when the estimated context reaches
 * `contextWindow × compactAt` and compacts to `contextWindow × compactTo`
 * minus the overhead (`tools`, `systemMessage`, `extraTokens`).
 *
 * Use it as `preModelHook` of `createReactAgent`, or as a node before the
 * model node of a `StateGraph`.
 *
 * - `"view"` (default) returns `{ llmInputMessages }`: the state keeps the
 *   full history, the model sees the compacted view. The cut is remembered
 *   in the state key {@link COMPACTION_VIEW_KEY}, which the graph's state must
 *   have (`CompactionAnnotation` from `langchain-compaction/langgraph`): it
 *   moves only when the hook fires, so between compactions the model sees a
 *   stable, growing prefix and provider prompt caches keep hitting.
 * - `"commit"` returns `{ messages }` with a `RemoveMessage` for exactly each
 *   removed id (read from the current state, never `REMOVE_ALL_MESSAGES`, so
 *   parallel branches' writes survive) and the omission note in their place:
 *   the note takes over the id of one removed message that stood there, so
 *   the reducer puts it in that message's slot instead of at the end. Every
 *   removed message must have an id (the messages reducer gives them one),
 *   else a `TypeError`.
 *
 * @example
 * ```ts
 * const agent = createReactAgent({
 *   llm, tools, stateSchema: CompactionAnnotation,
 *   preModelHook: createCompactionNode({ contextWindow: 128_000, tools }),
 * });
 * ```
 */
export function createCompactionNode(options: CompactionNodeOptions): CompactionNode {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`createCompactionNode options must be an object, got ${describeValue(options)}`);
  }
  const { mode = "view", tools, systemMessage, extraTokens, onEvict, repairDanglingToolCalls = true, events = true, ...hookOptions } = options;
  if (mode !== "view" && mode !== "commit") {
    throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
  }
  assertEvictionCallback(onEvict, mode);
  assertRuntimeFlag("repairDanglingToolCalls", repairDanglingToolCalls);
  assertRuntimeFlag("events", events);
  const hook = new CompactionHook(hookOptions);
  // Tools and prompt are fixed for the node's life: a bad one throws now (counting is async, and its own check
  // would only reject at the first call); the hook remembers their count.
  carriedOverhead({ tools, systemMessage, extraTokens });
  const requestOverhead: RequestOverhead = {
    ...(tools === undefined ? {} : { tools }),
    ...(systemMessage === undefined ? {} : { systemMessage }),
    ...(extraTokens === undefined ? {} : { extraTokens }),
  };
  const control = new CompactionControl(hook, requestOverhead, events);
  const toSend = (messages: BaseMessage[]) => (repairDanglingToolCalls ? repairDanglingCalls(messages).messages : messages);

  const node: CompactionNode = async (state, config) => {
    if (typeof state !== "object" || state === null) {
      throw new TypeError(`the compaction node expects a graph state object, got ${describeValue(state)}`);
    }
    const { messages } = state;
    assertConversation(messages, "state.messages");
    const signal = config?.signal;
    const thread = threadOf(config?.configurable);
    const asked = control.takeRequest(thread);
    const runOptions: CompactionRunOptions = {
      ...(signal === undefined ? {} : { signal }),
      request: requestOverhead,
      ...(asked === undefined ? {} : { force: true, instructions: asked.instructions }),
    };
    const sent = async (list: BaseMessage[], compacted: boolean) => control.sent(thread, list, await raceAbort(hook.overheadTokens(requestOverhead), signal), compacted);
    if (mode === "view") {
      if (COMPACTION_VIEW_KEY in state) {
        const advance = await advanceCompactionView(hook, messages, state[COMPACTION_VIEW_KEY], requestOverhead, runOptions);
        if (events) await emitCompactionEvents(advance.run, "langgraph");
        await sent(advance.messages, advance.report !== null);
        return advance.report === null
          ? { llmInputMessages: toSend(advance.messages) }
          : { llmInputMessages: toSend(advance.messages), [COMPACTION_VIEW_KEY]: advance.view };
      }
      // createReactAgent's own state: the cut is what the model was handed last time, read back from its channel.
      const shown = lastModelInput(config);
      if (shown === undefined) {
        throw new TypeError(
          `"view" mode remembers its cut in the state key \`${COMPACTION_VIEW_KEY}\` or reads it back from createReactAgent's ` +
            `\`${LLM_INPUT_KEY}\` channel, and this graph has neither: build the state from CompactionAnnotation ` +
            '(langchain-compaction/langgraph), or use mode "commit"',
        );
      }
      // The synthetic results of a repair are made afresh each time, never remembered as part of the cut.
      const shownHistory = shown.filter((message) => !isRepairedCallResult(message));
      const view = shownHistory.length === 0 ? null : viewOfShown(messages, shownHistory, { grownSince: true });
      const advance = await advanceCompactionView(hook, messages, view, requestOverhead, runOptions);
      if (events) await emitCompactionEvents(advance.run, "langgraph");
      await sent(advance.messages, advance.report !== null);
      return { llmInputMessages: toSend(advance.messages) };
    }
    const report = await hook.run(messages, requestOverhead, runOptions);
    if (events) await emitCompactionEvents(report, "langgraph");
    const planned = report === null || report.messages === null ? null : commitPlan(messages, report);
    // A result the reducer could not write faithfully writes nothing (an empty update): the state stays as it is.
    const plan = planned !== null && planned.update.length > 0 ? planned : null;
    // The state as the update leaves it: the compacted list, each added message as it is written (under the id it takes over).
    const compacted = plan === null ? messages : report!.messages!.flatMap((message) => (plan.writtenAs.has(message) ? (plan.writtenAs.get(message) === null ? [] : [plan.writtenAs.get(message)!]) : [message]));
    await sent(compacted, plan !== null);
    // A graph whose model reads `llmInputMessages` (createReactAgent) is sent the repaired list there, every time: a
    // value left from an earlier call would be sent again.
    const input = repairDanglingToolCalls && lastModelInput(config) !== undefined ? { llmInputMessages: toSend(compacted) } : {};
    if (plan === null) return input;
    if (onEvict !== undefined) {
      const evicted = evictionsOf(messages, report!, plan.writtenAs);
      if (evicted.length > 0) await onEvict(evicted);
    }
    return { ...input, messages: plan.update };
  };
  Object.defineProperty(node, COMPACTION_CONTROL, { value: control, enumerable: false });
  return node;
}
