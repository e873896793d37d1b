import type { BaseMessage } from "@langchain/core/messages";
import { CompactionHook } from "../compactors/compaction-hook";
import type { CompactionHookOptions, RequestOverhead } from "../compactors/compaction-hook";
import { assertConversation } from "../compactors/sliding-window";
import { describeValue } from "../errors";
import { commitUpdate } from "./commit-update";
import { advanceCompactionView } from "./view-window";
import type { CompactionView } from "./view-window";

/** The state key where `"view"` mode remembers its cut. */
export const COMPACTION_VIEW_KEY = "compactionView";

/** Options of {@link createCompactionNode}. */
export interface CompactionNodeOptions extends CompactionHookOptions, RequestOverhead {
  /**
   * `"view"` (default): the state keeps the full history and the node returns
   * the compacted `llmInputMessages` for the model, remembering its cut under
   * {@link COMPACTION_VIEW_KEY}. `"commit"`: the node removes the compacted
   * messages from state and puts the omission note in their place.
   */
  mode?: "view" | "commit";
}

/** The state the node reads. */
export interface CompactionNodeState {
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

/** A graph node: a function of the state. */
export type CompactionNode = (state: CompactionNodeState) => Promise<CompactionNodeUpdate>;

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
  const { mode = "view", tools, systemMessage, extraTokens, ...hookOptions } = options;
  if (mode !== "view" && mode !== "commit") {
    throw new RangeError(`\`mode\` must be "view" or "commit", got ${describeValue(mode)}`);
  }
  const hook = new CompactionHook(hookOptions);
  // Tools and prompt are fixed for the node's life: count them once, and fail now if they are bad.
  const overheadPromise = hook.overheadTokens({ tools, systemMessage, extraTokens });
  overheadPromise.catch(() => undefined);
  const overhead = async (): Promise<RequestOverhead> => ({ extraTokens: await overheadPromise });

  return async (state) => {
    if (typeof state !== "object" || state === null) {
      throw new TypeError(`the compaction node expects a graph state object, got ${describeValue(state)}`);
    }
    const { messages } = state;
    assertConversation(messages, "state.messages");
    if (mode === "view") {
      if (!(COMPACTION_VIEW_KEY in state)) {
        throw new TypeError(
          `"view" mode remembers its cut in the state key \`${COMPACTION_VIEW_KEY}\`, which this graph's state lacks: ` +
            "build the state from CompactionAnnotation (langchain-compaction/langgraph), or use mode \"commit\"",
        );
      }
      const advance = await advanceCompactionView(hook, messages, state[COMPACTION_VIEW_KEY], await overhead());
      return advance.report === null
        ? { llmInputMessages: advance.messages }
        : { llmInputMessages: advance.messages, [COMPACTION_VIEW_KEY]: advance.view };
    }
    const report = await hook.run(messages, await overhead());
    if (report === null || report.messages === null) return {};
    return { messages: commitUpdate(messages, report) };
  };
}
