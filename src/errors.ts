import { BaseMessage } from "@langchain/core/messages";

/**
 * Errors of this library. Bad arguments get the standard `TypeError` or
 * `RangeError` with a message that names the bad value; a counter that fails
 * is wrapped in {@link TokenCounterError}, which keeps the original as `cause`.
 */

/** A token counter threw while counting a message. */
export class TokenCounterError extends Error {
  /** Always `"TokenCounterError"`, so the error can be told apart without `instanceof` (e.g. across copies of the package). */
  override readonly name = "TokenCounterError";
  constructor(
    message: string,
    /** Index, in the list being compacted, of the message the counter failed on. */
    readonly index: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A short, safe rendering of a bad value for an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  // `100n`, as it is written: a BigInt shown as `100` reads like the number that would have been accepted.
  if (typeof value === "bigint") return `${value}n`;
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const ctor = (value as { constructor?: { name?: string } }).constructor?.name;
  return ctor && ctor !== "Object" ? `${/^[aeiou]/i.test(ctor) ? "an" : "a"} ${ctor}` : "an object";
}

/**
 * Throws a `TypeError` unless `value` is a number: a string, `null`, an
 * object or a BigInt is the wrong type, not a number out of range. `NaN` is a
 * number, and is left to the range check that follows.
 */
function assertNumber(name: string, value: unknown, expected: string): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(`\`${name}\` must be ${expected}, got ${describeValue(value)}`);
  }
}

/** Throws unless `value` is a whole number of at least `min` (`TypeError` for a non-number, else `RangeError`). */
export function assertWholeNumber(name: string, value: unknown, min = 0): asserts value is number {
  const expected = `a whole number of at least ${min}`;
  assertNumber(name, value, expected);
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`\`${name}\` must be ${expected}, got ${describeValue(value)}`);
  }
}

/** Throws unless `value` is a finite number of at least 0 (`TypeError` for a non-number, else `RangeError`). */
export function assertTokenBudget(name: string, value: unknown): asserts value is number {
  const expected = "a finite number of tokens of at least 0";
  assertNumber(name, value, expected);
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`\`${name}\` must be ${expected}, got ${describeValue(value)}`);
  }
}

/** The message of an error thrown by user code (a getter, a counter), for wrapping it. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : describeValue(error);
}

/**
 * Throws a `TypeError` naming the first element of `tools` that is no tool:
 * a LangChain tool, or a definition a provider accepts, always has a `name`
 * (LangChain, Anthropic), a `function.name` (OpenAI) or a `type` (a
 * provider's built-in tool such as `{ type: "web_search" }`).
 */
export function assertTools(tools: unknown, name = "tools"): void {
  if (!Array.isArray(tools)) throw new TypeError(`\`${name}\` must be an array, got ${describeValue(tools)}`);
  for (let index = 0; index < tools.length; index += 1) {
    const tool: unknown = tools[index];
    if (typeof tool === "object" && tool !== null && !Array.isArray(tool)) {
      const { name: toolName, function: fn, type } = tool as { name?: unknown; function?: { name?: unknown } | null; type?: unknown };
      const fnName = typeof fn === "object" && fn !== null ? fn.name : undefined;
      if (typeof toolName === "string" || typeof fnName === "string" || typeof type === "string") continue;
    }
    throw new TypeError(
      `\`${name}[${index}]\` must be a tool or a tool definition (with a \`name\`, a \`function.name\` or a \`type\`), got ${describeValue(tool)}`,
    );
  }
}

/**
 * Throws a `TypeError` naming the first of `messages[from..]` that is not a
 * `BaseMessage`, or whose getters throw while it is checked.
 */
export function assertMessagesFrom(messages: readonly unknown[], from: number, name = "messages", to = messages.length): void {
  for (let index = from; index < to; index += 1) assertMessageAt(messages, index, name);
}

/** {@link assertMessagesFrom} for one index. */
export function assertMessageAt(messages: readonly unknown[], index: number, name: string): void {
  assertMessage(messages[index], `${name}[${index}]`);
}

/** Throws a `TypeError` naming `label` unless `value` is a `BaseMessage` whose getters can be read. */
export function assertMessage(value: unknown, label: string): asserts value is BaseMessage {
  let valid: boolean;
  try {
    valid = BaseMessage.isInstance(value);
  } catch (error) {
    // A message whose getters throw (a proxy, a broken subclass): named here, not as "Cannot read properties".
    throw new TypeError(`\`${label}\` cannot be read as a BaseMessage: ${reasonOf(error)}`, { cause: error });
  }
  if (!valid) throw new TypeError(`\`${label}\` must be a BaseMessage, got ${describeValue(value)}`);
}

/** The longest delay Node keeps for a timer (2^31 - 1 ms, about 24.8 days): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Throws unless `value` is a number of milliseconds a timer can wait: above
 * 0 and at most {@link MAX_TIMER_MS} (`TypeError` for a non-number, else
 * `RangeError`). Node would turn a longer delay into 1 ms, so every wait
 * would end at once.
 */
export function assertTimerDelay(name: string, value: unknown): asserts value is number {
  const expected = `a positive number of milliseconds of at most ${MAX_TIMER_MS} (the longest timer Node keeps)`;
  assertNumber(name, value, expected);
  if (!(value > 0 && value <= MAX_TIMER_MS)) {
    throw new RangeError(`\`${name}\` must be ${expected}, got ${describeValue(value)}`);
  }
}
