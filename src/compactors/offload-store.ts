import { createHash } from "node:crypto";
import { describeValue } from "../errors";

/**
 * What offloading needs of a store: LangGraph's `BaseStore` (`InMemoryStore`,
 * `PostgresStore`, any other) offers it, and so can a small object of your own.
 * Recognised by its methods, so this module needs no LangGraph import.
 */
export interface OffloadStore {
  /** Stores `value` under `key` in `namespace`, replacing what was there. */
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  /** The item stored under `key` in `namespace`, or `null`/`undefined` when there is none. */
  get(
    namespace: string[],
    key: string,
  ): Promise<{
    /** What {@link OffloadStore.put} stored. */
    value: Record<string, unknown>;
  } | null | undefined>;
}

/** What an offloaded result is stored as. */
export interface OffloadedResult {
  /** The original text of the tool result. */
  content: string;
  /** The id of the call the result answered (`null` when it had none). */
  tool_call_id: string | null;
  /** The name of the tool that gave the result (`null` when unknown). */
  tool_name: string | null;
  /** `content.length`, for paging. */
  chars: number;
}

/**
 * The default namespace of offloaded results. A hyphen, not an underscore:
 * `PostgresStore` rejects namespace labels holding `_`, `%` or `\\` (SQL
 * LIKE wildcards), and every write to `["compaction", "tool_results"]` would
 * fail there.
 */
export const DEFAULT_OFFLOAD_NAMESPACE: readonly string[] = ["compaction", "tool-results"];

/** The name of the tool {@link createOffloadReaderTool} returns, as offloaded results refer to it. */
export const OFFLOAD_READER_TOOL_NAME = "read_offloaded_tool_result";

/** Throws a `TypeError` unless `store` has `put` and `get`. */
export function assertOffloadStore(store: unknown): asserts store is OffloadStore {
  const candidate = store as Partial<OffloadStore> | null;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.put !== "function" || typeof candidate.get !== "function") {
    throw new TypeError(`\`store\` must be a LangGraph BaseStore (an object with put() and get()), got ${describeValue(store)}`);
  }
}

/** A copy of `namespace`, or a typed error: a non-empty array of non-empty labels without periods (LangGraph's rule). */
export function checkedNamespace(namespace: unknown): string[] {
  if (!Array.isArray(namespace) || namespace.some((label) => typeof label !== "string")) {
    throw new TypeError(`\`namespace\` must be an array of strings, got ${describeValue(namespace)}`);
  }
  if (namespace.length === 0 || namespace.some((label: string) => label === "" || label.includes("."))) {
    throw new RangeError(`\`namespace\` must hold at least one label, none empty or with a period, got ${JSON.stringify(namespace)}`);
  }
  return [...(namespace as string[])];
}

/**
 * The key a result is stored under: the tool call id and a digest of the
 * text. Stable (the same result always gets the same key, so writing it again
 * is harmless) and distinct across runs that reuse call ids.
 */
export function offloadKey(toolCallId: string | undefined, text: string): string {
  const digest = createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
  return toolCallId === undefined || toolCallId === "" ? digest : `${toolCallId}_${digest}`;
}
