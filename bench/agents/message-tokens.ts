/**
 * Token counts of the messages of a run, each message counted once and
 * remembered by object and by content (a checkpointer copies messages, so
 * the same message reaches the bench as several objects), and a content
 * fingerprint for comparing requests whose message objects differ.
 */
import { SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCounter } from "../../src";

/** What a message is, for comparing requests whose message objects differ (a checkpointer copies them). */
export function messageFingerprint(message: BaseMessage): string {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const calls = "tool_calls" in message && Array.isArray(message.tool_calls) ? JSON.stringify(message.tool_calls.map((c) => [c.id, c.name, c.args])) : "";
  const callId = "tool_call_id" in message ? String(message.tool_call_id) : "";
  return `${message.type}\u0000${message.name ?? ""}\u0000${callId}\u0000${calls}\u0000${content}`;
}

/** Counts messages one at a time, remembering each count by object and by fingerprint. */
export class MessageTokens {
  private readonly byObject = new WeakMap<BaseMessage, number>();
  private readonly byFingerprint = new Map<string, number>();
  private readonly fingerprints = new WeakMap<BaseMessage, string>();

  constructor(private readonly counter: TokenCounter) {}

  fingerprint(message: BaseMessage): string {
    let print = this.fingerprints.get(message);
    if (print === undefined) {
      print = messageFingerprint(message);
      this.fingerprints.set(message, print);
    }
    return print;
  }

  /**
   * Tokens of a model's answer, remembered by content only: `createAgent` names the answer (`name: "model"`) after
   * the model returns it, so what this object is when it comes back in the next request is not what it is now.
   */
  ofAnswer(message: BaseMessage): number {
    return this.byContent(messageFingerprint(message), message);
  }

  of(message: BaseMessage): number {
    const known = this.byObject.get(message);
    if (known !== undefined) return known;
    const tokens = this.byContent(this.fingerprint(message), message);
    this.byObject.set(message, tokens);
    return tokens;
  }

  private byContent(print: string, message: BaseMessage): number {
    let tokens = this.byFingerprint.get(print);
    if (tokens === undefined) {
      tokens = this.counter([message]) as number;
      this.byFingerprint.set(print, tokens);
    }
    return tokens;
  }

  /** The counter's total for `messages` (it is additive over messages), from the remembered counts. */
  total(messages: readonly BaseMessage[]): number {
    let sum = 0;
    for (const message of messages) sum += this.of(message);
    return sum;
  }

  /** Tokens of the tool schemas, counted as one system message. */
  schemas(text: string): number {
    return text === "" ? 0 : this.of(new SystemMessage(text));
  }

  /** A counter with the same results that reads the remembered counts (for every strategy alike). */
  asCounter(): TokenCounter {
    const counter: TokenCounter = (messages) => this.total(messages);
    return counter;
  }
}
