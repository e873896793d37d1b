import { BaseMessage, HumanMessage } from "@langchain/core/messages";
import { COMPACTION_METADATA_KEY } from "./compaction-metadata";
import { isHuman } from "./roles";

/** The default omission note. `{num_removed}` is replaced by the number of messages removed. */
export const DEFAULT_OMISSION_NOTE =
  "[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]";

/** Metadata carried by every omission note, under `response_metadata.compaction`. */
export interface OmissionNoteMetadata {
  /** Always `"sliding_window"`: only the sliding window writes omission notes. */
  strategy: "sliding_window";
  /** Messages removed from the conversation so far, including those folded in from earlier notes. */
  removed_messages: number;
  /** Messages kept by the compaction that wrote this note (the note itself not included). */
  kept_messages: number;
}

/** Where the metadata lives (see `compaction-metadata.ts` for why `response_metadata`). */
const METADATA_KEY = COMPACTION_METADATA_KEY;

/**
 * A stored count as a whole number: stores may hand numbers back as strings
 * or lose them, and a folded note must never turn the new count into `NaN`
 * or a concatenated string. What cannot be read counts as 0.
 */
function storedCount(value: unknown): number {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : 0;
  if (typeof value === "string" && /^\d{1,15}$/.test(value)) return Number(value);
  return 0;
}

function metadataOf(message: BaseMessage): OmissionNoteMetadata | undefined {
  const meta = (message.response_metadata as Record<string, unknown> | undefined)?.[METADATA_KEY];
  if (typeof meta !== "object" || meta === null) return undefined;
  const candidate = meta as Record<string, unknown>;
  if (candidate.strategy !== "sliding_window") return undefined;
  return {
    strategy: "sliding_window",
    removed_messages: storedCount(candidate.removed_messages),
    kept_messages: storedCount(candidate.kept_messages),
  };
}

/**
 * Whether `message` is an omission note written by this library. Decided by
 * the note's metadata, never by its text: a user who types "[3 earlier
 * messages were removed ...]" is still the user.
 */
export function isOmissionNote(message: unknown): message is HumanMessage {
  return BaseMessage.isInstance(message) && isHuman(message) && metadataOf(message) !== undefined;
}

/**
 * The metadata of a omission note, or `undefined` for any other message.
 * Counts are read defensively (see `storedCount`): a fresh object, never the message's own.
 */
export function omissionNoteMetadata(message: BaseMessage): OmissionNoteMetadata | undefined {
  return isHuman(message) ? metadataOf(message) : undefined;
}

/** Replaces every `{num_removed}`; other braces are left exactly as written. */
export function renderOmissionNote(template: string, numRemoved: number): string {
  return template.split("{num_removed}").join(String(numRemoved));
}

/** Builds the note that stands in for the removed messages. */
export function createOmissionNote(template: string, removed: number, kept: number): HumanMessage {
  const compaction: OmissionNoteMetadata = {
    strategy: "sliding_window",
    removed_messages: removed,
    kept_messages: kept,
  };
  return new HumanMessage({
    content: renderOmissionNote(template, removed),
    response_metadata: { [METADATA_KEY]: compaction },
  });
}
