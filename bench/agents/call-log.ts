/**
 * Every model call of a run, agent and summary calls in the order they were
 * made: each is measured when it is recorded (input tokens, the prefix it
 * shares with an earlier call, output tokens, and for agent calls whether a
 * provider would accept it), so a long run need not keep its requests.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { MessageTokens } from "./message-tokens";
import { providerProblem } from "./validity";
import { PrefixCache, requestBlocks } from "./pricing";
import type { BilledCall } from "./pricing";

/** One model call as measured. */
export interface CallRecord extends BilledCall {
  kind: "agent" | "summary";
  /** The user turn (agent invocation, from 0) during which it was made. */
  invocation: number;
  /** Agent calls: why a provider would reject the request, or `null`. */
  problem: string | null;
  /** Refused by the provider (over its real window): not billed, not cached. */
  rejected: boolean;
  /** The request and the answer, when the log keeps requests (tests). */
  messages?: BaseMessage[];
  toolSchemaText?: string;
  output?: BaseMessage | null;
}

/** Options of {@link CallLog}. */
export interface CallLogOptions {
  /** Keep each request's messages on its record (for tests; a long run does not need them). */
  keepRequests?: boolean;
}

export class CallLog {
  readonly calls: CallRecord[] = [];
  /** The user turn in progress; the harness advances it. */
  invocation = 0;
  private readonly cache = new PrefixCache();

  constructor(
    readonly tokens: MessageTokens,
    private readonly options: CallLogOptions = {},
  ) {}

  /** Tokens of a request: its messages plus the tool schemas (counted as one system message). */
  requestTokens(messages: readonly BaseMessage[], toolSchemaText: string): number {
    return this.tokens.total(messages) + this.tokens.schemas(toolSchemaText);
  }

  /** Records one call; `output` is the model's answer (`null` when the provider refused the request). */
  record(kind: "agent" | "summary", messages: readonly BaseMessage[], toolSchemaText: string, output: BaseMessage | null): CallRecord {
    const rejected = output === null;
    const schemaTokens = this.tokens.schemas(toolSchemaText);
    const blocks = requestBlocks(toolSchemaText, schemaTokens, messages, (m) => this.tokens.of(m), (m) => this.tokens.fingerprint(m));
    const inputTokens = blocks.reduce((sum, block) => sum + block.tokens, 0);
    const record: CallRecord = {
      kind,
      invocation: this.invocation,
      inputTokens,
      // A refused request is not billed and leaves nothing in the cache.
      sharedPrefixTokens: rejected ? 0 : this.cache.add(blocks),
      outputTokens: output === null ? 0 : this.tokens.ofAnswer(output),
      problem: kind === "agent" ? providerProblem([...messages]) : null,
      rejected,
    };
    if (this.options.keepRequests) {
      record.messages = [...messages];
      record.toolSchemaText = toolSchemaText;
      record.output = output;
    }
    this.calls.push(record);
    return record;
  }
}
