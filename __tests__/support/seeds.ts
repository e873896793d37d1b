/**
 * The seeds every fast-check property runs on.
 *
 * A clock seed finds new cases on every run; a rule that only some seeds
 * reach could still pass one run by luck and fail the next. So each property
 * also runs on a fixed list of seeds, the same cases every time. The budget of
 * runs a property had before is shared, not added to: half for the clock seed,
 * the other half split over the fixed seeds, so the suite takes as long as it
 * did.
 *
 * `FC_SEED=<seed>` replays one seed alone with the whole budget (a printed
 * failure, or a reproducible run such as the mutation tests); `FC_RUNS`
 * changes the budget of the suites that read it.
 *
 * A test file prints its seeds once, on one line, the first time it draws on
 * them (a property run or a sample): every file that runs a property says so
 * without having to remember to. With `TEST_VERBOSE=1` each property's runs
 * per seed follow.
 */
import * as fc from "fast-check";
import { diagnostic, notice } from "./diagnostics";

/** Seeds every run checks, whatever the clock says. Chosen once, arbitrarily; never tuned to make a test pass. */
export const FIXED_SEEDS: readonly number[] = [20_261_203, 1, 424_242, 987_654_321];

/** One fast-check run: its seed, how many cases, and where the seed came from. */
export interface SeedRun {
  seed: number;
  numRuns: number;
  origin: "clock" | "fixed" | "FC_SEED";
}

/** The clock seed of this process, read once so every property of a suite shares it (and prints the same). */
const clockSeed = Date.now() % 2 ** 31;

/** Whether this file's seeds were printed (a module per test file: jest gives each file its own registry). */
let announced = false;

/** Prints this file's seeds, the first time only. */
function announceSeeds(): void {
  if (announced) return;
  announced = true;
  const replay = replaySeed();
  notice(
    replay === null
      ? `fast-check seeds ${clockSeed} (clock), ${FIXED_SEEDS.join(" ")} (fixed); FC_SEED=<seed> replays one`
      : `fast-check seed ${replay} (FC_SEED)`,
  );
}

/** The seed for a sample drawn outside a property (`fc.sample`): `FC_SEED` when set, else the clock seed. */
export function sampleSeed(): number {
  announceSeeds();
  return replaySeed() ?? clockSeed;
}

/** `FC_SEED` as a number, or null when unset. */
function replaySeed(): number | null {
  const given = process.env.FC_SEED;
  return given === undefined || given === "" ? null : Number(given);
}

/**
 * The runs for a property whose whole budget is `budget` cases: the clock seed
 * with half of it, each fixed seed with an equal share of the rest (at least
 * one case each). With `FC_SEED` set, that seed alone with the whole budget.
 */
export function seedRuns(budget: number): SeedRun[] {
  announceSeeds();
  const replay = replaySeed();
  if (replay !== null) return [{ seed: replay, numRuns: budget, origin: "FC_SEED" }];
  const clockRuns = Math.ceil(budget / 2);
  const fixedRuns = Math.max(1, Math.floor((budget - clockRuns) / FIXED_SEEDS.length));
  return [{ seed: clockSeed, numRuns: clockRuns, origin: "clock" }, ...FIXED_SEEDS.map((seed) => ({ seed, numRuns: fixedRuns, origin: "fixed" as const }))];
}

/** Cases a budget really runs (the fixed shares round down). */
export function casesIn(budget: number): number {
  return seedRuns(budget).reduce((sum, run) => sum + run.numRuns, 0);
}

/** One line naming every seed of a budget and its runs. */
export function describeSeeds(budget: number): string {
  return seedRuns(budget)
    .map((run) => `${run.seed} (${run.origin}, ${run.numRuns} runs)`)
    .join(", ");
}

/** The message fast-check's own failure report gets in front, naming the seed that failed. */
function onSeed(run: SeedRun, error: unknown): Error {
  const text = error instanceof Error ? error.message : String(error);
  const failure = new Error(`fast-check seed ${run.seed} (${run.origin}) failed; replay with FC_SEED=${run.seed}\n${text}`);
  if (error instanceof Error && error.stack) failure.stack = `${failure.message}\n${error.stack.split("\n").slice(1).join("\n")}`;
  return failure;
}

/** `fc.assert` of a synchronous property on every seed run of `budget`. */
export function assertOnSeeds<Ts>(property: fc.IProperty<Ts>, budget: number, parameters: fc.Parameters<Ts> = {}): void {
  diagnostic(`property runs: ${describeSeeds(budget)}`);
  for (const run of seedRuns(budget)) {
    try {
      fc.assert(property, { ...parameters, seed: run.seed, numRuns: run.numRuns });
    } catch (error) {
      throw onSeed(run, error);
    }
  }
}

/** `fc.assert` of an asynchronous property on every seed run of `budget`. */
export async function assertOnSeedsAsync<Ts>(property: fc.IAsyncProperty<Ts>, budget: number, parameters: fc.Parameters<Ts> = {}): Promise<void> {
  diagnostic(`property runs: ${describeSeeds(budget)}`);
  for (const run of seedRuns(budget)) {
    try {
      await fc.assert(property, { ...parameters, seed: run.seed, numRuns: run.numRuns });
    } catch (error) {
      throw onSeed(run, error);
    }
  }
}
