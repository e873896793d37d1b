/**
 * examples/lcel.ts and examples/langgraph.ts: what their objects hold (the
 * lists the model was sent, the checkpointed state), checked against
 * expectations built here from how each example builds its conversation; and
 * each runs standalone, as a user runs it.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { omissionNoteMetadata, isOmissionNote, tiktokenCounter } from "../../src";
import { chatHistory, FUNCTION_TARGET, main as lcelMain, PIPE_TARGET, PROMPT_NOTE, PROMPT_TARGET } from "../../examples/lcel";
import { main as langgraphMain, PROMPT, topics, WINDOW } from "../../examples/langgraph";
import { importExamplesOffline, testRunsStandalone } from "../support/run-example";

const DEFAULT_NOTE = "[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]";

importExamplesOffline();
testRunsStandalone(["lcel.ts", "langgraph.ts"]);

/** A message by what a provider reads of it, for lists that pass through a prompt (which may copy messages). */
const shape = (message: BaseMessage) => `${message.type}: ${message.text}`;

describe("examples/lcel.ts", () => {
  const counter = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;

  /**
   * The list rule 5 leaves of `chatHistory()` at `target`: no system block and no steps, so the question and
   * the newest whole exchanges that fit with it, the note first (rule 7). Independent of the compactor.
   */
  function expectedList(target: number, note: string): string[] {
    const history = chatHistory();
    const task = history.at(-1)!;
    let available = target - counter([task]);
    let start = history.length - 1;
    while (start >= 2 && counter(history.slice(start - 2, start)) <= available) {
      available -= counter(history.slice(start - 2, start));
      start -= 2;
    }
    const removed = start;
    expect(removed).toBeGreaterThan(0);
    return [`human: ${note.replace("{num_removed}", String(removed))}`, ...history.slice(start).map(shape)];
  }

  test("each form sends the model exactly the question, the newest exchanges that fit, and a note counting the rest", async () => {
    const result = await lcelMain();
    expect(result.piped!.map(shape)).toEqual(expectedList(PIPE_TARGET, DEFAULT_NOTE));
    // The prompt adds its system message in front of the compacted history.
    expect(result.prompted!.map(shape)).toEqual(["system: You are a travel planner. Answer in one sentence.", ...expectedList(PROMPT_TARGET, PROMPT_NOTE)]);
    expect(result.compacted.map(shape)).toEqual(expectedList(FUNCTION_TARGET, DEFAULT_NOTE));
    // Kept messages are the history's own objects.
    for (const message of result.compacted) if (!isOmissionNote(message)) expect(result.history).toContain(message);
    expect(result.traced).toEqual(["compactMessages", "ScriptedChatModel"]);
    expect(result.unchanged).toBe(result.history);
  });
});

describe("examples/langgraph.ts", () => {
  const trigger = WINDOW.contextWindow * WINDOW.compactAt;
  const question = (topic: string) => `What do you know about ${topic}?`;
  /** Every question of the example makes four messages: the question, the lookup call, its result, the answer. */
  const questionTypes = ["human", "ai", "tool", "ai"];

  test("view keeps every message in state and hides the oldest whole questions; commit keeps a note and the newest questions", async () => {
    const { view, commit } = await langgraphMain();

    // View: the state holds the whole conversation.
    expect(view.messages.map((m) => m.type)).toEqual(topics.flatMap(() => questionTypes));
    expect(view.messages.filter((m) => m.type === "human").map((m) => m.text)).toEqual(topics.map(question));
    const hidden = new Set(view.view!.hiddenIds);
    expect(hidden.size).toBeGreaterThan(0);
    expect(hidden.size % questionTypes.length).toBe(0);
    expect(view.messages.slice(0, hidden.size).every((m) => hidden.has(m.id!))).toBe(true);
    // The last request was the state (without the final answer, which it produced) minus the hidden messages,
    // behind the agent's prompt and the note, which counts the hidden messages.
    const last = view.scripted!.calls.at(-1)!.messages;
    expect(last[0]!.type).toBe("system");
    expect(last[0]!.text).toBe(PROMPT);
    expect(isOmissionNote(last[1]!)).toBe(true);
    expect(omissionNoteMetadata(last[1]!)!.removed_messages).toBe(hidden.size);
    expect(last.slice(2).map((m) => m.id)).toEqual(view.messages.slice(hidden.size, -1).map((m) => m.id));

    // Commit: the state itself holds one note and the newest whole questions, and the note counts the rest.
    const notes = commit.messages.filter((m) => isOmissionNote(m));
    expect(notes).toHaveLength(1);
    expect(commit.messages[0]).toBe(notes[0]);
    const kept = commit.messages.slice(1);
    expect(kept.length % questionTypes.length).toBe(0);
    const keptQuestions = kept.length / questionTypes.length;
    expect(keptQuestions).toBeGreaterThan(0);
    expect(keptQuestions).toBeLessThan(topics.length);
    expect(kept.map((m) => m.type)).toEqual(topics.slice(-keptQuestions).flatMap(() => questionTypes));
    expect(kept.filter((m) => m.type === "human").map((m) => m.text)).toEqual(topics.slice(-keptQuestions).map(question));
    expect(omissionNoteMetadata(notes[0]!)!.removed_messages).toBe(topics.length * questionTypes.length - kept.length);

    for (const run of [view, commit]) {
      const scripted = run.scripted!;
      // Two model calls per question, each under the trigger with the tools and prompt it carries.
      expect(scripted.calls).toHaveLength(topics.length * 2);
      for (const call of scripted.calls) expect(scripted.requestTokens(call)!).toBeLessThan(trigger);
      // The cut moves rarely: the prefix sent stays put between compactions.
      const requests = scripted.calls.map((call) => call.messages);
      const moved = requests.filter((request, call) => call > 0 && !requests[call - 1]!.every((m, i) => request[i]?.id === m.id)).length;
      expect(moved).toBeGreaterThan(0);
      expect(moved).toBeLessThan(5);
    }
  });
});
