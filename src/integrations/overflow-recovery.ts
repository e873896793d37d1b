import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseChatModelParams, BindToolsInput } from "@langchain/core/language_models/chat_models";
import { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { describeValue } from "../errors";
import { repairDanglingCalls } from "../messages/dangling-calls";
import { controlOf, threadOf } from "./compaction-tool";
import type { CompactionControl } from "./compaction-tool";
import { contextOverflowOf } from "./context-overflow";
import { emitCompactionEvents } from "./events";

/** What the wrapper needs of a chat model: to be invoked, and to bind tools (for `createReactAgent`). */
interface InvokableModel {
  invoke(input: BaseMessage[], options?: unknown): Promise<unknown>;
  bindTools?(tools: BindToolsInput[], kwargs?: unknown): unknown;
  _llmType?(): string;
}

/**
 * A chat model that recovers when its provider refuses a request as too
 * long, for a LangGraph graph whose compaction is the node of
 * {@link createCompactionNode} (a graph node cannot catch its model node's
 * error, so the model does). On a context overflow (see
 * `context-overflow.ts`) it teaches the node's hook what the provider said,
 * compacts the request harder with a forced run, and sends it once more; a
 * second refusal is the provider's error as it is. Every other error, and
 * every other call, passes through unchanged.
 *
 * The retry's compaction is what the model is sent, not written to the
 * state: the node's next run compacts the state with what the hook learnt.
 * Responses come back whole (the wrapper does not stream tokens).
 */
export class OverflowRecoveringChatModel extends BaseChatModel {
  // Private: the only way in is withOverflowRecovery, which checks its arguments; the public types then name neither
  // the node's control nor what the wrapper needs of a model.
  private constructor(
    private readonly inner: InvokableModel,
    private readonly control: CompactionControl,
  ) {
    super({} as BaseChatModelParams);
  }

  /**
   * A wrapper around `inner` that recovers with `control` (what
   * {@link withOverflowRecovery} makes, once it has checked its arguments).
   *
   * @internal
   */
  static around(inner: InvokableModel, control: CompactionControl): OverflowRecoveringChatModel {
    return new OverflowRecoveringChatModel(inner, control);
  }

  /** The model type LangChain records for a run: `overflow-recovering(<the inner model's type>)`. */
  _llmType(): string {
    // BaseChatModel's field initializers ask for the type before this class's constructor has set `inner`.
    const inner = this.inner as InvokableModel | undefined;
    return `overflow-recovering(${typeof inner?._llmType === "function" ? inner._llmType() : "model"})`;
  }

  /** The same recovery around the inner model with `tools` bound. */
  override bindTools(tools: BindToolsInput[], kwargs?: Partial<this["ParsedCallOptions"]>): OverflowRecoveringChatModel {
    if (typeof this.inner.bindTools !== "function") throw new TypeError(`the wrapped model cannot bind tools (it has no bindTools): ${describeValue(this.inner)}`);
    return new OverflowRecoveringChatModel(this.inner.bindTools(tools, kwargs) as InvokableModel, this.control);
  }

  /** One model call, retried once, compacted harder, when the provider refuses it as too long (LangChain calls it; use `invoke`). */
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const call = async (list: BaseMessage[]) => {
      // The inner model's run is traced on its own, in the graph node's run (this wrapper's run is the model call).
      const reply = await this.inner.invoke(list, options);
      if (!BaseMessage.isInstance(reply)) throw new TypeError(`the wrapped model answered ${describeValue(reply)}, not a message`);
      return { generations: [{ text: reply.text, message: reply }] };
    };
    try {
      return await call(messages);
    } catch (error) {
      const overflow = contextOverflowOf(error);
      if (overflow === null) throw error;
      const { hook, overhead } = this.control;
      const overheadTokens = await hook.overheadTokens(overhead);
      const estimatedTokens = await hook.estimateTokens(messages, overheadTokens);
      const localTokens = await hook.localTokens(messages, overheadTokens);
      const counts = {
        ...(overflow.requestTokens === undefined ? {} : { requestTokens: overflow.requestTokens }),
        ...(overflow.limitTokens === undefined ? {} : { limitTokens: overflow.limitTokens }),
      };
      hook.learnFromOverflow({ ...counts, estimatedTokens, localTokens });
      const signal = options.signal;
      const retry = await hook.run(messages, overhead, { ...(signal === undefined ? {} : { signal }), request: overhead, force: true });
      if (retry === null || retry.messages === null) throw error;
      if (this.control.events) {
        await emitCompactionEvents(retry, "langgraph", { overflow: { ...counts, estimatedTokens, error: error instanceof Error ? error.message : String(error) } });
      }
      const result = await call(repairDanglingCalls(retry.messages).messages);
      // The state still holds what was refused, and the reply's usage is that of the smaller retry, so the
      // estimate would not set the node off: its next run on this thread compacts the state by force instead.
      this.control.request(threadOf((AsyncLocalStorageProviderSingleton.getRunnableConfig() as { configurable?: unknown } | undefined)?.configurable), "");
      return result;
    }
  }
}

/**
 * `model`, recovering from a context overflow with the hook of `node` (a
 * node of `createCompactionNode`): give it to the graph in the model's place,
 * e.g. `createReactAgent({ llm: withOverflowRecovery(llm, node), preModelHook:
 * node, ... })`. See {@link OverflowRecoveringChatModel}.
 */
export function withOverflowRecovery(model: unknown, node: unknown): OverflowRecoveringChatModel {
  const control = controlOf(node);
  if (control === undefined) throw new TypeError(`withOverflowRecovery needs the node of createCompactionNode, got ${describeValue(node)}`);
  if (typeof (model as Partial<InvokableModel> | null)?.invoke !== "function") {
    throw new TypeError(`withOverflowRecovery needs a chat model (an object with invoke()), got ${describeValue(model)}`);
  }
  return OverflowRecoveringChatModel.around(model as InvokableModel, control);
}
