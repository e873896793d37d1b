/**
 * Issue 31 §6: long high-entropy text is counted within 3% of the exact count. `tiktokenCounter` samples a text of
 * SAMPLED_TEXT characters or more (src/counting/sampled-length.ts); here its count of 1 MB of each kind, and of texts
 * mixing kinds, is compared with js-tiktoken's own `encode` (special-token spellings as plain text). Apart from the
 * other counting tests because encoding 1 MB of CJK text takes js-tiktoken tens of seconds; speed is measured in
 * `npm run bench`, never here.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { tiktokenCounter } from "../../src";
import { SAMPLED_TEXT } from "../../src/counting/sampled-length";
import { offlineEncoder } from "../../src/counting/tiktoken";
import { BASE64, cjkText, HEX, int, minifiedJson, pick, prose, randomString, seededRandom } from "../../bench/conversations";
import type { Random } from "../../bench/conversations";
import { FIXED_SEEDS, sampleSeed } from "../support/seeds";
import { diagnostic } from "../support/diagnostics";

const MB = 1 << 20;
const FRAMING = 4; // 3 per message + 1 for the role
const count = tiktokenCounter("o200k_base") as (messages: BaseMessage[]) => number;
const encoder = offlineEncoder("o200k_base");
const SEEDS = [sampleSeed(), FIXED_SEEDS[0]!];

const KINDS: [string, (random: Random, chars: number) => string][] = [
  ["random base64", (random, chars) => randomString(random, BASE64, chars)],
  ["random hex", (random, chars) => randomString(random, HEX, chars)],
  ["minified JSON", minifiedJson],
  ["half prose, half base64", (random, chars) => prose(random, chars / 2).slice(0, chars / 2) + randomString(random, BASE64, chars / 2)],
  ["JSON, prose and hex in thirds", (random, chars) => {
    const third = Math.floor(chars / 3);
    return minifiedJson(random, third) + prose(random, third).slice(0, third) + randomString(random, HEX, chars - 2 * third);
  }],
];

/** The counter's count of `text` as its relative error against js-tiktoken. */
function relativeError(text: string): number {
  const exact = encoder.encode(text, [], []).length;
  return (count([new HumanMessage(text)]) - FRAMING - exact) / exact;
}

describe("1 MB texts are counted within 3% of exact encoding", () => {
  test.each(KINDS)("%s", (_name, make) => {
    for (const seed of SEEDS) {
      const text = make(seededRandom(seed), MB);
      expect(text.length).toBe(MB);
      const error = relativeError(text);
      if (Math.abs(error) > 0.03) throw new Error(`seed ${seed}: counted ${(error * 100).toFixed(2)}% off the exact count`);
    }
  }, 120_000);

  test("CJK text", () => {
    // One seed: js-tiktoken takes tens of seconds to encode 1 MB of CJK text.
    const seed = SEEDS[0]!;
    const error = relativeError(cjkText(seededRandom(seed), MB));
    if (Math.abs(error) > 0.03) throw new Error(`seed ${seed}: counted ${(error * 100).toFixed(2)}% off the exact count`);
  }, 240_000);
});

test("texts from SAMPLED_TEXT to five times it, two kinds split at a random place, are counted within 3% of exact encoding", () => {
  const random = seededRandom(SEEDS[0]!);
  let worst = 0;
  for (let k = 0; k < 24; k += 1) {
    const length = SAMPLED_TEXT + int(random, 0, 4 * SAMPLED_TEXT);
    const split = int(random, 0, length);
    const first = pick(random, KINDS)[1](random, split).slice(0, split);
    const text = first + pick(random, KINDS)[1](random, length - first.length).slice(0, length - first.length);
    const error = relativeError(text);
    worst = Math.max(worst, Math.abs(error));
    if (Math.abs(error) > 0.03) throw new Error(`seed ${SEEDS[0]}, text ${k} (${length} characters, split at ${split}): ${(error * 100).toFixed(2)}% off`);
  }
  diagnostic(`worst error over 24 texts: ${(worst * 100).toFixed(2)}%`);
}, 180_000);
