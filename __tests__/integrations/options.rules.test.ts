/**
 * Rules of the LCEL form and the middleware's options that a mutation run of the integration suites showed
 * unpinned (TESTING.md): a prompt value is compacted like the list it holds (directly and as a Runnable),
 * anything else that is not a list is refused, and bad options objects are typed errors naming the value.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { COMPACTION_VIEW_KEY, compactMessages, createCompactionNode } from "../../src";
import { compactionMiddleware } from "../../src/integrations/middleware";

/** system, then ten turns of about 50 tokens each (approximate counter), then the task. */
function history(): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You are terse.")];
  for (let t = 0; t < 10; t += 1) messages.push(new HumanMessage(`question ${t} ${"q".repeat(80)}`), new AIMessage(`answer ${t} ${"a".repeat(80)}`));
  messages.push(new HumanMessage("the task"));
  return messages;
}

describe("compactMessages input", () => {
  const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder("history")]);

  test("a prompt value is compacted like the messages it holds, in both forms", async () => {
    const messages = history();
    const value = await prompt.invoke({ history: messages });
    const expected = await compactMessages(messages, { targetTokens: 150 });
    expect(expected.length).toBeLessThan(messages.length);
    const direct = await compactMessages(value, { targetTokens: 150 });
    expect(direct.map((message) => message.content)).toEqual(expected.map((message) => message.content));
    const viaRunnable = await compactMessages({ targetTokens: 150 }).invoke(value);
    expect(viaRunnable.map((message) => message.content)).toEqual(expected.map((message) => message.content));
  });

  test("an object that is not a prompt value, or a missing input, is a TypeError naming it", async () => {
    const runnable = compactMessages({ targetTokens: 150 });
    await expect(runnable.invoke({ toChatMessages: "not a function" } as never)).rejects.toThrow(TypeError);
    await expect(runnable.invoke(null as never)).rejects.toThrow(/null/);
    await expect(runnable.invoke("hello" as never)).rejects.toThrow(/hello/);
  });
});

describe("options objects", () => {
  test.each([null, "fast", 7])("compactMessages(%p) is a TypeError naming it", (options) => {
    expect(() => compactMessages(options as never)).toThrow(TypeError);
    expect(() => compactMessages(options as never)).toThrow(/compactMessages options must be an object/);
    expect(() => compactMessages(options as never)).toThrow(String(options));
  });

  test("with messages, bad options reject (the direct form returns a promise)", async () => {
    await expect(compactMessages(history(), null as never)).rejects.toThrow(/compactMessages options must be an object, got null/);
    await expect(compactMessages(history(), [] as never)).rejects.toThrow(TypeError);
  });

  test.each([null, "fast", 7])("compactionMiddleware(%p) is a TypeError naming it", (options) => {
    expect(() => compactionMiddleware(options as never)).toThrow(TypeError);
    expect(() => compactionMiddleware(options as never)).toThrow(/compactionMiddleware options must be an object/);
    expect(() => compactionMiddleware(options as never)).toThrow(String(options));
  });
});

describe("the graph node's overhead options are checked when it is created", () => {
  const cyclic: Record<string, unknown> = { type: "object" };
  cyclic.self = cyclic;

  test.each<[string, object, typeof TypeError | typeof RangeError, string]>([
    ["a tool that is no tool", { tools: [{}] }, TypeError, "`tools[0]` must be a tool or a tool definition (with a `name`, a `function.name` or a `type`), got an object"],
    ["tools that are no array", { tools: "lookup" }, TypeError, '`tools` must be an array, got "lookup"'],
    ["a tool whose schema cannot be serialized", { tools: [{ name: "lookup", parameters: cyclic }] }, TypeError, "`tools` cannot be turned into the JSON schemas a request carries"],
    ["a system message that is no message", { systemMessage: 5 }, TypeError, "`systemMessage` must be a message or a string, got 5"],
    ["a plain-object system message", { systemMessage: { role: "system", content: "x" } }, TypeError, "`systemMessage` must be a message or a string, got an object"],
    ["negative extraTokens", { extraTokens: -1 }, RangeError, "`extraTokens` must be a finite number of tokens of at least 0, got -1"],
    ["extraTokens that are no number", { extraTokens: "5" }, TypeError, '`extraTokens` must be a finite number of tokens of at least 0, got "5"'],
  ])("%s: createCompactionNode throws, synchronously, with the hook's message", (_label, overhead, type, message) => {
    const create = () => createCompactionNode({ contextWindow: 1_000, ...overhead } as never);
    expect(create).toThrow(type);
    expect(create).toThrow(message);
  });

  test("good overhead options make a node that counts them", async () => {
    const bare = createCompactionNode({ contextWindow: 1_000 });
    const heavy = createCompactionNode({ contextWindow: 1_000, systemMessage: "s".repeat(1_200), extraTokens: 50 });
    const state = { messages: history(), [COMPACTION_VIEW_KEY]: null };
    // The same history fits without the overhead and needs compacting with it.
    expect((await bare(state)).llmInputMessages).toHaveLength(state.messages.length);
    expect((await heavy(state)).llmInputMessages!.length).toBeLessThan(state.messages.length);
  });
});

describe("compactionMiddleware refuses the graph node's overhead options, which it would ignore", () => {
  test.each([
    ["tools", [{ name: "lookup" }], "an array of 1"],
    ["systemMessage", "You are terse.", '"You are terse."'],
    ["extraTokens", 100, "100"],
  ])("%s: a TypeError naming it", (name, value, shown) => {
    const create = () => compactionMiddleware({ contextWindow: 1_000, [name]: value } as never);
    expect(create).toThrow(TypeError);
    expect(create).toThrow(`\`${name}\` is an option of createCompactionNode, not of compactionMiddleware`);
    expect(create).toThrow(`got ${shown}`);
  });

  test("undefined is the same as leaving them out", () => {
    expect(() => compactionMiddleware({ contextWindow: 1_000, tools: undefined, systemMessage: undefined, extraTokens: undefined } as never)).not.toThrow();
  });
});

describe("the graph node's options and state", () => {
  test.each([null, "fast", 7])("createCompactionNode(%p) is a TypeError naming it", (options) => {
    expect(() => createCompactionNode(options as never)).toThrow(TypeError);
    expect(() => createCompactionNode(options as never)).toThrow(/createCompactionNode options must be an object/);
    expect(() => createCompactionNode(options as never)).toThrow(String(options));
  });

  test.each([null, "state", 3])("a node given %p as the graph state rejects with a TypeError naming it", async (state) => {
    const node = createCompactionNode({ contextWindow: 1_000 });
    await expect(node(state as never)).rejects.toThrow(TypeError);
    await expect(node(state as never)).rejects.toThrow(new RegExp(`the compaction node expects a graph state object, got .*${String(state)}`));
  });
});
