/**
 * LangGraph integration, the subpath `langchain-compaction/langgraph`. It
 * imports `@langchain/langgraph` (an optional peer dependency) for the state
 * annotations, which is why it is not part of the main entry; the node itself
 * needs no LangGraph import and is exported from both.
 *
 * @packageDocumentation
 */
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import type { CompactionView } from "./view-window";
import { COMPACTION_VIEW_KEY } from "./compaction-node";

export { createCompactionNode, COMPACTION_VIEW_KEY } from "./compaction-node";
export type { CompactionNode, CompactionNodeConfig, CompactionNodeOptions, CompactionNodeState, CompactionNodeUpdate } from "./compaction-node";
export { applyCompactionView } from "./view-window";
export { withOverflowRecovery } from "./overflow-recovery";
export { createCompactionTool } from "./compaction-tool";
export type { CompactionView, ViewAddition } from "./view-window";

/**
 * The remembered cut of `"view"` mode: replaced whole when the node writes
 * it, `null` until the first compaction. Plain data plus one message, so
 * every checkpointer stores it.
 */
const compactionView = Annotation<CompactionView | null>({
  reducer: (_current, next) => next ?? null,
  default: () => null,
});

/**
 * `MessagesAnnotation` plus the key where `"view"` mode remembers its cut.
 * Pass it as `stateSchema` to `createReactAgent` (which adds
 * `llmInputMessages` itself), or spread its `.spec` into your own state.
 */
export const CompactionAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Where `"view"` mode remembers its cut (`null` until the first compaction); the node reads and replaces it. */
  [COMPACTION_VIEW_KEY]: compactionView,
});

/**
 * {@link CompactionAnnotation} plus `llmInputMessages`, for a custom
 * `StateGraph` whose model node reads `state.llmInputMessages` in `"view"`
 * mode. The channel holds the node's array as it is (no copies, no ids
 * assigned), replaced on every model call. Not for `createReactAgent`: it
 * declares `llmInputMessages` with its own reducer, and two declarations
 * conflict.
 */
export const CompactionGraphAnnotation = Annotation.Root({
  ...CompactionAnnotation.spec,
  /** What the model node sends in `"view"` mode: the node's compacted list, replaced on every model call. */
  llmInputMessages: Annotation<BaseMessage[]>({
    reducer: (_current, next) => next,
    default: () => [],
  }),
});
