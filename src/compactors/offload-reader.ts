import { DynamicStructuredTool } from "@langchain/core/tools";
import { describeValue } from "../errors";
import { assertOffloadStore, checkedNamespace, DEFAULT_OFFLOAD_NAMESPACE, OFFLOAD_READER_TOOL_NAME } from "./offload-store";
import type { OffloadStore } from "./offload-store";

/** The reader tool's arguments, as its JSON schema describes them. */
interface ReaderInput {
  key: string;
  offset?: number;
  length?: number;
}

/** Options of {@link createOffloadReaderTool}. */
export interface OffloadReaderToolOptions {
  /** The store the compactor offloads to. */
  store: OffloadStore;
  /** Its namespace. Default `["compaction", "tool-results"]` ({@link DEFAULT_OFFLOAD_NAMESPACE}), as the compactor's. */
  namespace?: readonly string[];
  /** Characters returned when the call gives no `length`. Default `4000`. */
  defaultLength?: number;
}

/**
 * A LangChain tool the agent calls to read back a result that
 * `ToolResultOffloadCompactor` moved to the store: given the key from the
 * offloaded message, it returns the original text, a page at a time
 * (`offset` and `length` in characters) so a large result does not refill the
 * context at once. Bind it to the agent's model with its other tools.
 */
export function createOffloadReaderTool(options: OffloadReaderToolOptions): DynamicStructuredTool {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`createOffloadReaderTool options must be an object, got ${describeValue(options)}`);
  }
  const { store, namespace = DEFAULT_OFFLOAD_NAMESPACE, defaultLength = 4000 } = options;
  assertOffloadStore(store);
  const labels = checkedNamespace(namespace);
  if (typeof defaultLength !== "number" || !Number.isInteger(defaultLength) || defaultLength < 1) {
    throw new RangeError(`\`defaultLength\` must be a whole number of at least 1, got ${describeValue(defaultLength)}`);
  }
  return new DynamicStructuredTool({
    func: async (input: ReaderInput) => {
      const { key, offset = 0, length } = input;
      const item = await store.get(labels, key);
      const content = item?.value?.content;
      if (typeof content !== "string") return `No offloaded tool result is stored under key ${JSON.stringify(key)}.`;
      const start = Math.min(offset, content.length);
      const end = Math.min(content.length, start + (length ?? defaultLength));
      const more = end < content.length ? `; more follows: call again with offset ${end}` : "; end of the result";
      return `[characters ${start} to ${end} of ${content.length}${more}]\n${content.slice(start, end)}`;
    },
    name: OFFLOAD_READER_TOOL_NAME,
    description:
      "Reads back a tool result that was moved out of the conversation to save context. Give the key shown in the offloaded result; for long results, read further pages with offset (a character position) and length.",
    // A JSON schema rather than zod: zod is an optional peer, and the main entry must load without it.
    // `@langchain/core` validates the call's arguments against it before the function runs.
    schema: {
      type: "object",
      properties: {
        key: { type: "string", minLength: 1, description: "The key shown in the offloaded tool result" },
        offset: { type: "integer", minimum: 0, description: "Character position to start reading at (default 0)" },
        length: { type: "integer", minimum: 1, description: `How many characters to read (default ${defaultLength})` },
      },
      required: ["key"],
      additionalProperties: false,
    },
  });
}
