/**
 * Reading this library's metadata back from a store (survivors of
 * a mutation run of `src/messages/note.ts` and `compaction-metadata.ts`).
 * Stores may hand counts back as strings or lose the metadata's shape: a
 * count is a whole number of at most 15 digits or 0, a `null` entry is no
 * metadata (not a crash), a summary is a human message, and writing the
 * metadata keeps the message's other `response_metadata`.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { omissionNoteMetadata, isCompactionMessage, isOmissionNote } from "../../src";
import { isSummaryMessage, withCompactionMetadata } from "../../src/messages/compaction-metadata";

const noteWith = (removed: unknown, kept: unknown = 3) =>
  new HumanMessage({ content: "[omitted]", response_metadata: { compaction: { strategy: "sliding_window", removed_messages: removed, kept_messages: kept } } });

describe("a stored count", () => {
  test.each([
    [12, 12],
    ["12", 12],
    ["007", 7],
    ["999999999999999", 999_999_999_999_999],
    ["x12", 0],
    ["12x", 0],
    ["1 2", 0],
    ["1234567890123456", 0],
    [-1, 0],
    [1.5, 0],
    [null, 0],
  ])("%p reads as %p", (stored, expected) => {
    expect(omissionNoteMetadata(noteWith(stored))).toEqual({ strategy: "sliding_window", removed_messages: expected, kept_messages: 3 });
  });
});

test("a null metadata entry is no metadata, not a crash", () => {
  const message = new HumanMessage({ content: "hi", response_metadata: { compaction: null } });
  expect(isOmissionNote(message)).toBe(false);
  expect(omissionNoteMetadata(message)).toBeUndefined();
  expect(isCompactionMessage(message)).toBe(false);
});

test("a summary is a human message carrying the summarization strategy", () => {
  const metadata = { compaction: { strategy: "summarization", summarized_messages: 4 } };
  expect(isSummaryMessage(new HumanMessage({ content: "summary", response_metadata: metadata }))).toBe(true);
  expect(isSummaryMessage(new AIMessage({ content: "summary", response_metadata: metadata }))).toBe(false);
});

test("writing the metadata keeps the message's other response_metadata and leaves the message as it was", () => {
  const message = new AIMessage({ content: "x", response_metadata: { model_name: "m", finish_reason: "stop" } });
  const written = withCompactionMetadata(message, { strategy: "sliding_window", removed_messages: 2, kept_messages: 1 });
  expect(written).toEqual({ model_name: "m", finish_reason: "stop", compaction: { strategy: "sliding_window", removed_messages: 2, kept_messages: 1 } });
  expect(message.response_metadata).toEqual({ model_name: "m", finish_reason: "stop" });
});
