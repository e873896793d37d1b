import { describeValue } from "../errors";

/**
 * When the hook compacts (a trigger) and down to what (a target).
 *
 * A trigger is a condition on the conversation about to be sent, or a
 * combination of them:
 * - `{ fraction }`: the estimated context (messages plus what the request
 *   carries besides them) reaches `contextWindow × fraction`; the default is
 *   `{ fraction: compactAt }`;
 * - `{ tokens }`: the estimated context reaches this many tokens;
 * - `{ messages }`: the conversation holds at least this many messages;
 * - `{ turns }`: it holds at least this many user turns (real human
 *   messages, the current task included);
 * - `{ any: [...] }` / `{ all: [...] }`: at least one / every one of them.
 *
 * A target is what a compaction aims for, in one of the same units:
 * `{ fraction }` of the window (the default, `{ fraction: compactTo }`),
 * `{ tokens }`, or the `{ messages }` / `{ turns }` to keep, which the hook
 * turns into the tokens those newest messages or turns take.
 */

/** One condition, or a combination of them (see the module comment). */
export type CompactionTrigger =
  | {
      /** Compact when the estimated context reaches this fraction of the context window, in (0, 1]. */
      fraction: number;
    }
  | {
      /** Compact when the estimated context reaches this many tokens (a whole number, at least 1). */
      tokens: number;
    }
  | {
      /** Compact when the conversation holds at least this many messages (a whole number, at least 1). */
      messages: number;
    }
  | {
      /** Compact when the conversation holds at least this many user turns, the current task included (a whole number, at least 1). */
      turns: number;
    }
  | {
      /** Compact when at least one of these conditions holds. */
      any: CompactionTrigger[];
    }
  | {
      /** Compact when every one of these conditions holds. */
      all: CompactionTrigger[];
    };

/** What a compaction aims for (see the module comment). */
export type CompactionTarget =
  | {
      /** Compact down to this fraction of the context window (minus the overhead), in (0, 1]. */
      fraction: number;
    }
  | {
      /** Compact down to this many tokens (a whole number, at least 1). */
      tokens: number;
    }
  | {
      /** Keep the newest this many messages: the target is the tokens they take (a whole number, at least 1). */
      messages: number;
    }
  | {
      /** Keep the newest this many user turns: the target is the tokens they take (a whole number, at least 1). */
      turns: number;
    };

/** What a trigger reads of the conversation; each is asked for only when a condition needs it. */
export interface TriggerReadings {
  /** The estimated context, in tokens. */
  tokens(): Promise<number>;
  messages(): number;
  turns(): number;
  contextWindow: number;
}

const KINDS = ["fraction", "tokens", "messages", "turns"] as const;

function singleKey(value: object): string | undefined {
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
}

function assertAmount(path: string, kind: string, amount: unknown): void {
  if (typeof amount !== "number") throw new TypeError(`\`${path}.${kind}\` must be a number, got ${describeValue(amount)}`);
  if (kind === "fraction") {
    if (!(amount > 0 && amount <= 1)) throw new RangeError(`\`${path}.fraction\` must be a fraction of the context window in (0, 1], got ${describeValue(amount)}`);
  } else if (!Number.isSafeInteger(amount) || amount < 1) {
    throw new RangeError(`\`${path}.${kind}\` must be a whole number of at least 1, got ${describeValue(amount)}`);
  }
}

/** Throws a `TypeError`/`RangeError` naming the bad part unless `value` is a {@link CompactionTrigger}. */
export function assertTrigger(value: unknown, path = "trigger"): asserts value is CompactionTrigger {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`\`${path}\` must be an object such as { fraction: 0.7 }, { messages: 200 } or { any: [...] }, got ${describeValue(value)}`);
  }
  const key = singleKey(value);
  if (key === "any" || key === "all") {
    const list = (value as Record<string, unknown>)[key];
    if (!Array.isArray(list) || list.length === 0) throw new TypeError(`\`${path}.${key}\` must be a non-empty array of triggers, got ${describeValue(list)}`);
    list.forEach((entry, index) => assertTrigger(entry, `${path}.${key}[${index}]`));
    return;
  }
  if (key === undefined || !(KINDS as readonly string[]).includes(key)) {
    throw new TypeError(`\`${path}\` must have exactly one of fraction, tokens, messages, turns, any or all, got keys ${JSON.stringify(Object.keys(value))}`);
  }
  assertAmount(path, key, (value as Record<string, unknown>)[key]);
}

/** Throws a `TypeError`/`RangeError` naming the bad part unless `value` is a {@link CompactionTarget}. */
export function assertTarget(value: unknown, path = "target"): asserts value is CompactionTarget {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`\`${path}\` must be an object such as { fraction: 0.4 } or { messages: 50 }, got ${describeValue(value)}`);
  }
  const key = singleKey(value);
  if (key === undefined || !(KINDS as readonly string[]).includes(key)) {
    throw new TypeError(`\`${path}\` must have exactly one of fraction, tokens, messages or turns, got keys ${JSON.stringify(Object.keys(value))}`);
  }
  assertAmount(path, key, (value as Record<string, unknown>)[key]);
}

/** Whether `trigger` holds of the conversation `readings` describe. Token estimates are made at most once. */
export async function triggerFires(trigger: CompactionTrigger, readings: TriggerReadings): Promise<boolean> {
  let tokens: Promise<number> | undefined;
  const estimate = () => (tokens ??= readings.tokens());
  const holds = async (condition: CompactionTrigger): Promise<boolean> => {
    if ("any" in condition) {
      for (const part of condition.any) if (await holds(part)) return true;
      return false;
    }
    if ("all" in condition) {
      for (const part of condition.all) if (!(await holds(part))) return false;
      return true;
    }
    if ("messages" in condition) return readings.messages() >= condition.messages;
    if ("turns" in condition) return readings.turns() >= condition.turns;
    if ("tokens" in condition) return (await estimate()) >= condition.tokens;
    return (await estimate()) >= readings.contextWindow * condition.fraction;
  };
  return holds(trigger);
}

/** The smallest token level at which `trigger` can fire on tokens alone, or `undefined` when it has no token condition. */
export function triggerTokens(trigger: CompactionTrigger, contextWindow: number): number | undefined {
  if ("any" in trigger || "all" in trigger) {
    const levels = ("any" in trigger ? trigger.any : trigger.all).map((part) => triggerTokens(part, contextWindow)).filter((level): level is number => level !== undefined);
    if (levels.length === 0) return undefined;
    return "any" in trigger ? Math.min(...levels) : Math.max(...levels);
  }
  if ("tokens" in trigger) return trigger.tokens;
  if ("fraction" in trigger) return contextWindow * trigger.fraction;
  return undefined;
}
