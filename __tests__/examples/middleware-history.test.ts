/**
 * examples/middleware.ts and examples/history.ts: what their objects hold
 * (the agent's state, the store, the archive, what the model was sent),
 * checked against expectations built here from the questions each example
 * asks; and each runs standalone, as a user runs it.
 */
import { approximateTokenCounter, omissionNoteMetadata, isOmissionNote } from "../../src";
import { BUDGET, main as historyMain, QUESTIONS } from "../../examples/history";
import { cities, main as middlewareMain, WINDOW } from "../../examples/middleware";
import { importExamplesOffline, testRunsStandalone } from "../support/run-example";

importExamplesOffline();
testRunsStandalone(["middleware.ts", "history.ts"]);

test("examples/middleware.ts: view keeps the state whole, commit keeps a note and the newest questions, requests stay under the trigger", async () => {
  const { view, commit } = await middlewareMain();
  const question = (city: string) => `What is the weather in ${city}?`;
  const questionTypes = ["human", "ai", "tool", "ai"]; // the question, the weather call, its result, the answer

  expect(view.messages.map((m) => m.type)).toEqual(cities.flatMap(() => questionTypes));
  expect(view.messages.filter((m) => m.type === "human").map((m) => m.text)).toEqual(cities.map(question));
  expect(view.messages.some((m) => isOmissionNote(m))).toBe(false);

  const notes = commit.messages.filter((m) => isOmissionNote(m));
  expect(notes).toHaveLength(1);
  const kept = commit.messages.filter((m) => !isOmissionNote(m));
  const keptQuestions = kept.length / questionTypes.length;
  expect(Number.isInteger(keptQuestions)).toBe(true);
  expect(keptQuestions).toBeGreaterThan(0);
  expect(keptQuestions).toBeLessThan(cities.length);
  expect(kept.map((m) => m.type)).toEqual(cities.slice(-keptQuestions).flatMap(() => questionTypes));
  expect(kept.filter((m) => m.type === "human").map((m) => m.text)).toEqual(cities.slice(-keptQuestions).map(question));
  expect(omissionNoteMetadata(notes[0]!)!.removed_messages).toBe(cities.length * questionTypes.length - kept.length);

  const trigger = WINDOW.contextWindow * WINDOW.compactAt;
  for (const run of [view, commit]) {
    const scripted = run.scripted!;
    expect(scripted.calls).toHaveLength(cities.length * 2);
    for (const call of scripted.calls) expect(scripted.requestTokens(call)!).toBeLessThan(trigger);
    // Compaction happened for the model in both modes: some requests carried a note.
    expect(scripted.calls.some((call) => call.messages.some((m) => isOmissionNote(m)))).toBe(true);
  }
});

test("examples/history.ts: every exchange is in the store or the archive, once and in order; the note counts the archive", async () => {
  const { stored, archive } = await historyMain();
  const notes = stored.filter((m) => isOmissionNote(m));
  expect(notes).toHaveLength(1);
  // No system block in the store: the note stands first.
  expect(stored[0]).toBe(notes[0]);
  const archived = archive.filter((m) => !isOmissionNote(m));
  expect(archived.length).toBeGreaterThan(0);
  const everything = [...archived, ...stored.slice(1)];
  expect(everything.map((m) => m.type)).toEqual(QUESTIONS.flatMap(() => ["human", "ai"]));
  expect(everything.filter((m) => m.type === "human").map((m) => m.text)).toEqual(QUESTIONS);
  expect(omissionNoteMetadata(notes[0]!)!.removed_messages).toBe(archived.length);
  // The store stays below the point where it would be compacted again.
  expect(approximateTokenCounter(stored)).toBeLessThan(BUDGET.contextWindow * BUDGET.compactAt);
});
