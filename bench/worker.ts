/**
 * One measurement of the benchmark, run in its own child process so that
 * its peak memory is its own: `tsx bench/worker.ts '<json task>'` prints one
 * JSON line with the results on stdout and progress on stderr.
 */
import { trimMessages } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, CompactionPipeline, SlidingWindowCompactor, tiktokenCounter, TokenCountCache, ToolResultPruningCompactor } from "../src";
import type { TokenCounter } from "../src";
import { forgetRememberedPieces } from "../src/counting/exact-length";
import { forgetRememberedLists } from "../src/messages/prefix-memory";
import { agentConversation, agentStep, conversationBuilder } from "./conversations";
import { collectGarbage, median, medianTime, peakRss, progress, settledHeap, timeOnce } from "./measure";
import { measureSlices, measureTexts } from "./slices";
import type { SliceRow, TextRow } from "./slices";

export type CounterName = "tiktoken" | "approximate";

export interface WorkerTask {
  task: "floor" | "ours" | "trim" | "stages" | "slices" | "texts";
  size: number;
  counter: CounterName;
  budget: number;
  runs: number;
  seed: number;
  /** For `trim`: stop after this many seconds and extrapolate the rest. */
  capSeconds?: number;
}

export interface FloorResult {
  listPassMs: number;
  perMessageMs: number;
  totalTokens: number;
}

export interface OursResult {
  coldMs: number;
  coldRuns: number[];
  /** One plain counting pass, timed alternately with the cold runs in the same process. */
  interleavedFloorMs: number;
  warmCompactedMs: number;
  warmCompactedInput: number;
  warmFullMs: number;
  /** Milliseconds one plain pass of the counter takes over just the new step: the least any warm run can cost. */
  newStepCountMs: number;
  countedCold: number;
  countedWarmCompacted: number;
  countedWarmFull: number;
  keptCount: number;
  retainedBytes: number;
}

export interface TrimResult {
  /** Measured (or, when `extrapolated`, estimated) milliseconds of one `trimMessages` call. */
  ms: number;
  extrapolated: boolean;
  elapsedMs: number;
  callsDone: number;
  callsTotal: number;
  messageCountsTotal: number;
  keptCount: number;
  /** At a full run: what extrapolating from the first quarter of the calls would have predicted. */
  extrapolationCheckMs?: number;
}

/** Issue 10's speed targets for the compaction family, each timed alternately with what it is compared with. */
export interface StagesResult {
  /** One plain counting pass over the history. */
  floorMs: number;
  /** `SlidingWindowCompactor.compact`, cold (fresh cache, nothing remembered). */
  windowColdMs: number;
  /** `CompactionPipeline([ToolResultPruningCompactor, SlidingWindowCompactor]).compact`, cold. */
  pipelineColdMs: number;
  /** `ToolResultPruningCompactor.compact`, cold. */
  pruningColdMs: number;
  /** `compactWithReport` (what the integrations call), cold: the sliding window, the pipeline. */
  windowReportColdMs: number;
  pipelineReportColdMs: number;
  /** Results the pruning stage rewrote. */
  pruned: number;
  /** Messages the counter was handed: window cold, pipeline cold. */
  countedWindow: number;
  countedPipeline: number;
}

export interface WorkerOutput {
  size: number;
  inputHeapBytes: number;
  peakRssBytes: number;
  result: FloorResult | OursResult | TrimResult | StagesResult | SliceRow[] | TextRow[];
}

function counterFor(name: CounterName): TokenCounter {
  return name === "tiktoken" ? tiktokenCounter("o200k_base") : approximateTokenCounter;
}

function syncCount(counter: TokenCounter, messages: BaseMessage[]): number {
  const value = counter(messages);
  if (typeof value !== "number") throw new TypeError("the benchmark counters are synchronous");
  return value;
}

/**
 * Cold means nothing remembered: no layout or checked list of this history, and
 * no token length of any text piece (tiktoken's memory of pieces seen, see
 * `src/counting/exact-length.ts`). Every cold run and every plain counting pass
 * starts from this, so the pass and the runs beside it are measured alike.
 */
function forgetEverything(): void {
  forgetRememberedLists();
  forgetRememberedPieces();
}

/** Counts calls to a counter by wrapping it (a different function, so it has its own cache entries). */
function countingCounter(counter: TokenCounter): { counter: TokenCounter; messages: () => number } {
  let messages = 0;
  return {
    counter: (list) => {
      messages += list.length;
      return counter(list);
    },
    messages: () => messages,
  };
}

function warmUp(counter: TokenCounter): Promise<unknown> {
  // Loads the encoder and compiles the hot paths on another conversation, so "cold" means a cold count cache, not a cold JIT.
  const other = agentConversation(300, 999);
  syncCount(counter, other);
  return new SlidingWindowCompactor({ cache: new TokenCountCache() }).compact(other, 5_000, counter);
}

async function floor(task: WorkerTask, messages: BaseMessage[], counter: TokenCounter): Promise<FloorResult> {
  let totalTokens = 0;
  const list = await medianTime(task.runs, forgetEverything, () => (totalTokens = syncCount(counter, messages)));
  progress(`floor: one pass ${list.median.toFixed(1)} ms`);
  const perMessage = await medianTime(task.runs, forgetEverything, () => {
    let total = 0;
    for (const message of messages) total += syncCount(counter, [message]);
    return total;
  });
  progress(`floor: per-message calls ${perMessage.median.toFixed(1)} ms`);
  return { listPassMs: list.median, perMessageMs: perMessage.median, totalTokens };
}

async function ours(task: WorkerTask, messages: BaseMessage[], counter: TokenCounter, builder: ReturnType<typeof conversationBuilder>): Promise<OursResult> {
  const { budget, runs } = task;
  const compactWith = (cache: TokenCountCache, input: BaseMessage[], using: TokenCounter = counter) =>
    new SlidingWindowCompactor({ cache }).compact(input, budget, using);

  // Cold runs alternate with plain counting passes, so the ratio of the two is taken under the same load.
  const coldRuns: number[] = [];
  const floorRuns: number[] = [];
  // One untimed round first: the warm-up conversation is small, and code is compiled again for a list this long
  // (the first timed cold run used to take 1.5x the others), which "cold" is not meant to measure either.
  forgetEverything();
  syncCount(counter, messages);
  forgetEverything();
  await compactWith(new TokenCountCache(), messages);
  for (let run = 0; run < runs; run += 1) {
    forgetEverything();
    floorRuns.push(await timeOnce(() => syncCount(counter, messages)));
    const cache = new TokenCountCache();
    // Cold means nothing remembered: no counts, and no layout or checked list of this history either.
    forgetEverything();
    coldRuns.push(await timeOnce(() => compactWith(cache, messages)));
  }
  const cold = { median: median(coldRuns), runs: coldRuns };
  const interleavedFloorMs = median(floorRuns);
  progress(`ours: cold ${cold.median.toFixed(2)} ms (runs ${cold.runs.map((t) => t.toFixed(1)).join(", ")}); one pass, interleaved ${interleavedFloorMs.toFixed(1)} ms`);

  // One new step per run, so that every warm run has uncounted messages to count.
  const steps = Array.from({ length: runs }, () => agentStep(builder, 2));

  forgetEverything();
  const cacheA = new TokenCountCache();
  const compacted = (await compactWith(cacheA, messages)) ?? messages;
  const warmA = await medianTime(runs, (run) => [...compacted, ...steps[run]!], (input) => compactWith(cacheA, input));
  progress(`ours: warm, compacted result + 1 step (${compacted.length + 3} messages) ${warmA.median.toFixed(3)} ms`);

  forgetEverything();
  const cacheB = new TokenCountCache();
  await compactWith(cacheB, messages);
  const warmB = await medianTime(runs, (run) => [...messages, ...steps[run]!], (input) => compactWith(cacheB, input));
  progress(`ours: warm, full history + 1 step ${warmB.median.toFixed(3)} ms`);
  const newStep = await medianTime(runs, (run) => steps[run]!, (step) => syncCount(counter, step));
  progress(`ours: counting the new step alone ${newStep.median.toFixed(3)} ms`);

  // Untimed: how many messages each kind of run hands to the counter.
  forgetEverything();
  const probe = countingCounter(counter);
  const probeCache = new TokenCountCache();
  const probeCompacted = (await compactWith(probeCache, messages, probe.counter)) ?? messages;
  const countedCold = probe.messages();
  const extra = agentStep(builder, 2);
  await compactWith(probeCache, [...probeCompacted, ...extra], probe.counter);
  const countedWarmCompacted = probe.messages() - countedCold;
  await compactWith(probeCache, [...messages, ...agentStep(builder, 2)], probe.counter);
  const countedWarmFull = probe.messages() - countedCold - countedWarmCompacted;

  // Memory a cache holds once it knows every message (compactWithReport counts them all), beyond the input.
  const before = settledHeap();
  const heldCache = new TokenCountCache();
  const held = await new SlidingWindowCompactor({ cache: heldCache }).compactWithReport(messages, budget, counter);
  const retainedBytes = settledHeap() - before;
  if (held.keptCount < 0) throw new Error("unreachable");

  return {
    coldMs: cold.median,
    coldRuns: cold.runs,
    interleavedFloorMs,
    warmCompactedMs: warmA.median,
    warmCompactedInput: compacted.length + 3,
    warmFullMs: warmB.median,
    newStepCountMs: newStep.median,
    countedCold,
    countedWarmCompacted,
    countedWarmFull,
    keptCount: compacted.length,
    retainedBytes,
  };
}

/**
 * The pipeline recommended for agents, the sliding window alone and the
 * pruning stage alone, each cold (a fresh cache, nothing remembered), timed
 * in turn with one plain counting pass so that their ratios are taken under
 * the same load.
 */
async function stages(task: WorkerTask, messages: BaseMessage[], counter: TokenCounter): Promise<StagesResult> {
  const { budget, runs } = task;
  const window = (cache: TokenCountCache) => new SlidingWindowCompactor({ cache });
  const pipeline = (cache: TokenCountCache) => new CompactionPipeline([new ToolResultPruningCompactor({ cache }), window(cache)], { cache });
  const pruning = (cache: TokenCountCache) => new ToolResultPruningCompactor({ cache });
  const floorRuns: number[] = [];
  const windowRuns: number[] = [];
  const pipelineRuns: number[] = [];
  const pruningRuns: number[] = [];
  const windowReportRuns: number[] = [];
  const pipelineReportRuns: number[] = [];
  type Made = Pick<SlidingWindowCompactor, "compact" | "compactWithReport">;
  const cold = async (make: (cache: TokenCountCache) => Made, withReport = false) => {
    forgetEverything();
    const compactor = make(new TokenCountCache());
    return timeOnce(() => (withReport ? compactor.compactWithReport(messages, budget, counter) : compactor.compact(messages, budget, counter)));
  };
  for (let run = 0; run < runs; run += 1) {
    forgetEverything();
    floorRuns.push(await timeOnce(() => syncCount(counter, messages)));
    windowRuns.push(await cold(window));
    pipelineRuns.push(await cold(pipeline));
    pruningRuns.push(await cold(pruning));
    windowReportRuns.push(await cold(window, true));
    pipelineReportRuns.push(await cold(pipeline, true));
    progress(
      `stages run ${run + 1}: floor ${floorRuns.at(-1)!.toFixed(1)} ms, window ${windowRuns.at(-1)!.toFixed(1)} ms, pipeline ${pipelineRuns.at(-1)!.toFixed(1)} ms, ` +
        `pruning ${pruningRuns.at(-1)!.toFixed(1)} ms, with reports: window ${windowReportRuns.at(-1)!.toFixed(1)} ms, pipeline ${pipelineReportRuns.at(-1)!.toFixed(1)} ms`,
    );
  }
  // Untimed: what each handed to the counter, and how many results pruning rewrote.
  forgetEverything();
  const probeWindow = countingCounter(counter);
  await window(new TokenCountCache()).compact(messages, budget, probeWindow.counter);
  forgetEverything();
  const probePipeline = countingCounter(counter);
  await pipeline(new TokenCountCache()).compact(messages, budget, probePipeline.counter);
  const report = await pruning(new TokenCountCache()).compactWithReport(messages, budget, counter);
  return {
    floorMs: median(floorRuns),
    windowColdMs: median(windowRuns),
    pipelineColdMs: median(pipelineRuns),
    pruningColdMs: median(pruningRuns),
    windowReportColdMs: median(windowReportRuns),
    pipelineReportColdMs: median(pipelineReportRuns),
    pruned: report.rewritten.length,
    countedWindow: probeWindow.messages(),
    countedPipeline: probePipeline.messages(),
  };
}

class Stop extends Error {}

/**
 * `trimMessages` ("last", includeSystem, startOn "human") with the same
 * counter and budget. Its cost is a sum over counter calls on ever shorter
 * prefixes, all known in advance from the per-message counts, so a run cut
 * off at `capSeconds` is extrapolated by the tokens the remaining calls will
 * count at the rate measured so far.
 */
async function trim(task: WorkerTask, messages: BaseMessage[], counter: TokenCounter): Promise<TrimResult> {
  const { budget } = task;
  // trimMessages counts [system, newest, ..., oldest] and drops the oldest one per call until the prefix fits.
  const perMessage = messages.map((message) => syncCount(counter, [message]));
  const reversed = [perMessage[0]!, ...perMessage.slice(1).reverse()];
  const prefix = new Float64Array(reversed.length + 1);
  for (let i = 0; i < reversed.length; i += 1) prefix[i + 1] = prefix[i]! + reversed[i]!;
  const callTokens: number[] = [];
  let messageCountsTotal = 0;
  for (let i = 0; i < reversed.length; i += 1) {
    const length = reversed.length - i;
    callTokens.push(prefix[length]!);
    messageCountsTotal += length;
    if (prefix[length]! <= budget) break;
  }
  const totalTokens = callTokens.reduce((a, b) => a + b, 0);

  const capMs = (task.capSeconds ?? Infinity) * 1000;
  const callEnds: number[] = [];
  let start = 0;
  const timed = (list: BaseMessage[]): number => {
    if (performance.now() - start > capMs) throw new Stop();
    const value = syncCount(counter, list);
    callEnds.push(performance.now() - start);
    if (callEnds.length % 100 === 0) progress(`trimMessages: ${callEnds.length} of ${callTokens.length} counter calls, ${(callEnds.at(-1)! / 1000).toFixed(1)} s`);
    return value;
  };
  forgetEverything(); // its prefixes' pieces are learnt as it goes, as ours are
  collectGarbage();
  start = performance.now();
  let kept = -1;
  let finished = true;
  try {
    const result = await trimMessages(messages, { maxTokens: budget, strategy: "last", includeSystem: true, startOn: "human", tokenCounter: timed });
    kept = result.length;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    finished = false;
  }
  const elapsedMs = performance.now() - start;
  const estimate = (calls: number, ms: number) => {
    let done = 0;
    for (let i = 0; i < calls; i += 1) done += callTokens[i]!;
    return (ms * totalTokens) / done;
  };
  let extrapolationCheckMs: number | undefined;
  if (finished && callEnds.length >= 8) {
    const quarter = Math.floor(callEnds.length / 4);
    extrapolationCheckMs = estimate(quarter, callEnds[quarter - 1]!);
  }
  if (finished && callEnds.length !== callTokens.length) {
    throw new Error(`trimMessages made ${callEnds.length} counter calls, the model predicted ${callTokens.length}`);
  }
  return {
    ms: finished ? elapsedMs : estimate(callEnds.length, elapsedMs),
    extrapolated: !finished,
    elapsedMs,
    callsDone: callEnds.length,
    callsTotal: callTokens.length,
    messageCountsTotal,
    keptCount: kept,
    ...(extrapolationCheckMs === undefined ? {} : { extrapolationCheckMs }),
  };
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? "") as WorkerTask;
  // Issue 31's measurements build their own inputs (bench/slices.ts).
  if (task.task === "slices" || task.task === "texts") {
    const result = task.task === "slices" ? await measureSlices() : await measureTexts();
    collectGarbage();
    process.stdout.write(`${JSON.stringify({ size: task.size, inputHeapBytes: 0, peakRssBytes: peakRss(), result } satisfies WorkerOutput)}\n`);
    return;
  }
  const counter = counterFor(task.counter);
  await warmUp(counter);
  const builder = conversationBuilder(task.seed);
  const messages = agentConversation(task.size, task.seed, builder);
  const inputHeapBytes = settledHeap();
  let result: WorkerOutput["result"];
  if (task.task === "floor") result = await floor(task, messages, counter);
  else if (task.task === "ours") result = await ours(task, messages, counter, builder);
  else if (task.task === "stages") result = await stages(task, messages, counter);
  else result = await trim(task, messages, counter);
  collectGarbage();
  const output: WorkerOutput = { size: task.size, inputHeapBytes, peakRssBytes: peakRss(), result };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
