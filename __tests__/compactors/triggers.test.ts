/**
 * Triggers and targets (`src/compactors/triggers.ts`): each condition, any/all, the token estimate made at most once
 * and only when a condition needs it, and every malformed trigger refused with the part named.
 */
import { assertTarget, assertTrigger, triggerFires, triggerTokens } from "../../src/compactors/triggers";
import type { CompactionTrigger } from "../../src/compactors/triggers";

function readings(sizes: { tokens: number; messages: number; turns: number }, contextWindow = 1_000) {
  const asked = { tokens: 0 };
  return {
    asked,
    value: {
      contextWindow,
      tokens: async () => {
        asked.tokens += 1;
        return sizes.tokens;
      },
      messages: () => sizes.messages,
      turns: () => sizes.turns,
    },
  };
}

describe("triggerFires", () => {
  const at = { tokens: 700, messages: 40, turns: 6 };
  test.each<[CompactionTrigger, boolean]>([
    [{ fraction: 0.7 }, true],
    [{ fraction: 0.71 }, false],
    [{ tokens: 700 }, true],
    [{ tokens: 701 }, false],
    [{ messages: 40 }, true],
    [{ messages: 41 }, false],
    [{ turns: 6 }, true],
    [{ turns: 7 }, false],
    [{ any: [{ messages: 41 }, { turns: 6 }] }, true],
    [{ any: [{ messages: 41 }, { turns: 7 }] }, false],
    [{ all: [{ messages: 40 }, { tokens: 700 }] }, true],
    [{ all: [{ messages: 40 }, { tokens: 701 }] }, false],
    [{ all: [{ any: [{ turns: 99 }, { fraction: 0.5 }] }, { messages: 10 }] }, true],
  ])("%j on 700 tokens of a 1,000 window, 40 messages, 6 turns: %p", async (trigger, expected) => {
    expect(await triggerFires(trigger, readings(at).value)).toBe(expected);
  });

  test("the token estimate is made once however many conditions read it, and never when none does", async () => {
    const twice = readings(at);
    await triggerFires({ all: [{ tokens: 100 }, { fraction: 0.5 }, { any: [{ tokens: 50 }] }] }, twice.value);
    expect(twice.asked.tokens).toBe(1);
    const counts = readings(at);
    await triggerFires({ any: [{ messages: 1 }, { turns: 1 }] }, counts.value);
    expect(counts.asked.tokens).toBe(0);
    // `any` stops at the first condition that holds.
    const early = readings(at);
    await triggerFires({ any: [{ messages: 1 }, { tokens: 1 }] }, early.value);
    expect(early.asked.tokens).toBe(0);
  });
});

describe("triggerTokens", () => {
  test("the token level at which a trigger fires on tokens alone", () => {
    expect(triggerTokens({ fraction: 0.7 }, 1_000)).toBe(700);
    expect(triggerTokens({ tokens: 123 }, 1_000)).toBe(123);
    expect(triggerTokens({ messages: 5 }, 1_000)).toBeUndefined();
    expect(triggerTokens({ any: [{ tokens: 900 }, { fraction: 0.5 }, { turns: 2 }] }, 1_000)).toBe(500);
    expect(triggerTokens({ all: [{ tokens: 900 }, { fraction: 0.5 }] }, 1_000)).toBe(900);
    expect(triggerTokens({ all: [{ messages: 9 }] }, 1_000)).toBeUndefined();
  });
});

describe("malformed triggers and targets name the bad part", () => {
  test.each<[unknown, RegExp, ErrorConstructor]>([
    [null, /^`trigger` must be an object/, TypeError],
    [{}, /exactly one of fraction, tokens, messages, turns, any or all, got keys \[\]/, TypeError],
    [{ tokens: 5, messages: 3 }, /got keys \["tokens","messages"\]/, TypeError],
    [{ percent: 50 }, /got keys \["percent"\]/, TypeError],
    [{ fraction: 1.5 }, /^`trigger.fraction` must be a fraction of the context window in \(0, 1\], got 1.5/, RangeError],
    [{ fraction: 0 }, /^`trigger.fraction`/, RangeError],
    [{ messages: 2.5 }, /^`trigger.messages` must be a whole number of at least 1, got 2.5/, RangeError],
    [{ turns: "3" }, /^`trigger.turns` must be a number, got "3"/, TypeError],
    [{ any: [] }, /^`trigger.any` must be a non-empty array/, TypeError],
    [{ all: [{ tokens: 1 }, { turns: 0 }] }, /^`trigger.all\[1\].turns`/, RangeError],
  ])("trigger %j", (value, message, kind) => {
    expect(() => assertTrigger(value)).toThrow(kind);
    expect(() => assertTrigger(value)).toThrow(message);
  });

  test("targets: one amount, no combinations", () => {
    expect(() => assertTarget({ fraction: 0.4 })).not.toThrow();
    expect(() => assertTarget({ messages: 30 })).not.toThrow();
    expect(() => assertTarget({ any: [{ tokens: 1 }] })).toThrow(/exactly one of fraction, tokens, messages or turns/);
    expect(() => assertTarget({ tokens: -1 })).toThrow(RangeError);
    expect(() => assertTarget(7)).toThrow(/^`target` must be an object/);
  });
});
