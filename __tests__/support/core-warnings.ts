/**
 * Warnings `@langchain/core` prints for input a test builds on purpose. A
 * test that provokes one checks that it came, through a spy, instead of
 * letting it print into the suite's output.
 */

/** What `new AIMessage(...)` warns when its calls stand only in `additional_kwargs.tool_calls` (the raw OpenAI shape). */
export const RAW_TOOL_CALLS_WARNING = /New LangChain packages are available that more efficiently handle tool calling/;

/**
 * `make()`, which must make `console.warn` print `warning` at least once: those
 * warnings are checked and kept quiet; any other warning prints as usual.
 * Throws when `warning` did not come.
 */
export function withCoreWarning<T>(warning: RegExp, make: () => T): T {
  const warn = console.warn.bind(console);
  let seen = 0;
  const spy = jest.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
    if (warning.test(args.map(String).join(" "))) seen += 1;
    else warn(...args);
  });
  let value: T;
  try {
    value = make();
  } finally {
    spy.mockRestore();
  }
  if (seen === 0) throw new Error(`expected @langchain/core to warn ${warning}, and it did not`);
  return value;
}
