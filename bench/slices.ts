/**
 * Issue 31's measurements, run in a worker process (see `worker.ts`):
 *
 * - `slices`: the longest stall of the event loop during long compactions, and
 *   their total time, with time slices (the default) and with slicing off
 *   (`setSliceMs(Infinity)`: everything in one go, as before slices), timed in
 *   turn in one process so that their ratio is taken under the same load;
 * - `texts`: `tiktokenCounter` on 1 MB of high-entropy text against
 *   js-tiktoken's own `encode` of it, time and error.
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, CompactingChatMessageHistory, SlidingWindowCompactor, tiktokenCounter, TokenCountCache } from "../src";
import type { TokenCounter } from "../src";
import { forgetRememberedPieces } from "../src/counting/exact-length";
import { offlineEncoder } from "../src/counting/tiktoken";
import { forgetRememberedLists } from "../src/messages/prefix-memory";
import { setSliceMs, SLICE_MS } from "../src/time-slices";
import { agentConversation, BASE64, cjkText, HEX, minifiedJson, randomString, seededRandom, withNewestResult } from "./conversations";
import { collectGarbage, median, progress } from "./measure";

const MB = 1 << 20;

/** One long compaction, measured with slices and in one go. */
export interface SliceRow {
  work: string;
  /** Medians of the runs' total milliseconds. */
  slicedMs: number;
  oneGoMs: number;
  /** The longest stall of each run, in milliseconds: the median over runs and the worst. */
  slicedStallMs: number;
  slicedWorstStallMs: number;
  oneGoStallMs: number;
  runs: number;
}

/** One text counted by `tiktokenCounter` and by js-tiktoken. */
export interface TextRow {
  text: string;
  chars: number;
  oursMs: number;
  encodeMs: number;
  /** (ours − exact) / exact. */
  error: number;
}

/**
 * Runs `work` while a timer callback asks every millisecond when it last ran:
 * the longest gap between two of its turns (and from the last one to the end)
 * is the longest the event loop was held.
 */
async function timedWithStall(work: () => Promise<unknown>): Promise<{ ms: number; stallMs: number }> {
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 20));
  let last = performance.now();
  let longest = 0;
  let running = true;
  const probe = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setTimeout(probe, 1);
  };
  setTimeout(probe, 1);
  const start = performance.now();
  await work();
  const end = performance.now();
  running = false;
  return { ms: end - start, stallMs: Math.max(longest, end - last) };
}

/** A chat of `turns` short questions and answers after a system prompt. */
function chat(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You answer questions about the weather.")];
  for (let turn = 0; turn < turns; turn += 1) messages.push(new HumanMessage(`q${turn}: how warm will it be tomorrow?`), new AIMessage(`a${turn}: mild, around twenty degrees.`));
  return messages;
}

interface SliceCase {
  work: string;
  runs: number;
  /** Builds a fresh run: nothing remembered, nothing counted (a new cache, a new store). */
  prepare: () => Promise<() => Promise<unknown>>;
}

function sliceCases(): SliceCase[] {
  const history = agentConversation(100_000, 1);
  const payload = randomString(seededRandom(5), BASE64, MB);
  const withPayload = withNewestResult(history, payload);
  const small = withNewestResult(agentConversation(200, 2), payload);
  const tiktoken = tiktokenCounter("o200k_base");
  const window = () => new SlidingWindowCompactor({ cache: new TokenCountCache() });
  const viewRead = async (messages: BaseMessage[], counter: TokenCounter) => {
    const store = new InMemoryChatMessageHistory();
    await store.addMessages(messages);
    const read = new CompactingChatMessageHistory({ history: store, targetTokens: 20_000, tokenCounter: counter, compactor: window() });
    return () => read.getMessages();
  };
  return [
    { work: "SlidingWindowCompactor.compactWithReport, 100,000 messages, approximate counter", runs: 5, prepare: async () => () => window().compactWithReport(history, 20_000, approximateTokenCounter) },
    { work: "SlidingWindowCompactor.compact, 100,000 messages, tiktoken o200k", runs: 5, prepare: async () => () => window().compact(history, 20_000, tiktoken) },
    { work: "history read (view), 200 messages + one 1 MB base64 tool result, tiktoken o200k", runs: 5, prepare: () => viewRead(small, tiktoken) },
    { work: "history read (view), 100,000 messages + one 1 MB base64 tool result, tiktoken o200k", runs: 2, prepare: () => viewRead(withPayload, tiktoken) },
    {
      work: "history commit (in-memory store), 40,001-message chat, approximate counter",
      runs: 5,
      prepare: async () => {
        const store = new InMemoryChatMessageHistory();
        await store.addMessages(chat(20_000));
        const committing = new CompactingChatMessageHistory({ history: store, targetTokens: 300, mode: "commit", compactor: window() });
        return () => committing.getMessages();
      },
    },
  ];
}

/** Forgets what a run could reuse from the one before (layouts, checked lists, text pieces). */
function forgetEverything(): void {
  forgetRememberedLists();
  forgetRememberedPieces();
}

export async function measureSlices(): Promise<SliceRow[]> {
  const rows: SliceRow[] = [];
  for (const { work, runs, prepare } of sliceCases()) {
    // Compiled first, and the encoder loaded, on the same work: "in one go" and "sliced" then run the same code.
    forgetEverything();
    await (await prepare())();
    const sliced: { ms: number; stallMs: number }[] = [];
    const oneGo: { ms: number; stallMs: number }[] = [];
    for (let run = 0; run < runs; run += 1) {
      for (const sliceMs of [Number.POSITIVE_INFINITY, SLICE_MS]) {
        forgetEverything();
        const go = await prepare();
        setSliceMs(sliceMs);
        const measured = await timedWithStall(go);
        setSliceMs(SLICE_MS);
        (sliceMs === SLICE_MS ? sliced : oneGo).push(measured);
      }
      progress(`${work}: run ${run + 1}: sliced ${sliced.at(-1)!.ms.toFixed(0)} ms (stall ${sliced.at(-1)!.stallMs.toFixed(1)}), in one go ${oneGo.at(-1)!.ms.toFixed(0)} ms (stall ${oneGo.at(-1)!.stallMs.toFixed(0)})`);
    }
    rows.push({
      work,
      slicedMs: median(sliced.map((m) => m.ms)),
      oneGoMs: median(oneGo.map((m) => m.ms)),
      slicedStallMs: median(sliced.map((m) => m.stallMs)),
      slicedWorstStallMs: Math.max(...sliced.map((m) => m.stallMs)),
      oneGoStallMs: median(oneGo.map((m) => m.stallMs)),
      runs,
    });
  }
  return rows;
}

export async function measureTexts(): Promise<TextRow[]> {
  const random = seededRandom(31);
  const texts: [string, string][] = [
    ["1 MB of random base64", randomString(random, BASE64, MB)],
    ["1 MB of random hex", randomString(random, HEX, MB)],
    ["1 MB of minified JSON", minifiedJson(random, MB)],
    ["1 MB of CJK text", cjkText(random, MB)],
  ];
  const counter = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;
  const encoder = offlineEncoder("o200k_base");
  // Loads the ranks and compiles both paths before anything is timed.
  counter([new HumanMessage(randomString(random, BASE64, 100_000))]);
  encoder.encode(randomString(random, BASE64, 100_000), [], []);
  const rows: TextRow[] = [];
  for (const [text, value] of texts) {
    const oursRuns: number[] = [];
    let ours = 0;
    for (let run = 0; run < 3; run += 1) {
      forgetRememberedPieces();
      collectGarbage();
      const start = performance.now();
      ours = counter([new HumanMessage(value)]) - 4;
      oursRuns.push(performance.now() - start);
    }
    collectGarbage();
    const start = performance.now();
    const exact = encoder.encode(value, [], []).length;
    const encodeMs = performance.now() - start;
    rows.push({ text, chars: value.length, oursMs: median(oursRuns), encodeMs, error: (ours - exact) / exact });
    progress(`${text}: ours ${median(oursRuns).toFixed(1)} ms, encode ${encodeMs.toFixed(0)} ms, error ${(((ours - exact) / exact) * 100).toFixed(2)}%`);
  }
  return rows;
}
