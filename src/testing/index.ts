/**
 * Offline helpers for trying compaction out and for your own tests, the
 * subpath `langchain-compaction/testing`: a scripted chat model that calls
 * tools, reports usage as a provider does and records what it was sent.
 *
 * @packageDocumentation
 */
export { ScriptedChatModel } from "./scripted-chat-model";
export type { ScriptedCall, ScriptedChatModelOptions, ScriptedReply, ScriptedReplyFunction, ScriptedToolCall } from "./scripted-chat-model";
