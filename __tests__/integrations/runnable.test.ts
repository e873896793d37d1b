import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda, RunnablePassthrough } from "@langchain/core/runnables";
import { RunCollectorCallbackHandler } from "@langchain/core/tracers/run_collector";

type Run = RunCollectorCallbackHandler["tracedRuns"][number];
import { approximateTokenCounter, isOmissionNote, SlidingWindowCompactor } from "../../src";
import { compactMessages, COMPACT_MESSAGES_RUN_NAME } from "../../src/integrations/runnable";
import { ScriptedChatModel } from "../../src/testing";

/** A system prompt, `turns` old exchanges with tool calls, and a new question. */
function history(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage("You answer questions about rivers.")];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push(new HumanMessage(`How long is river ${turn}? ${"context ".repeat(30)}`));
    messages.push(new AIMessage({ content: "", tool_calls: [{ id: `len-${turn}`, name: "length", args: { river: turn } }] }));
    messages.push(new ToolMessage({ tool_call_id: `len-${turn}`, content: `${turn * 100} km. ${"detail ".repeat(40)}` }));
    messages.push(new AIMessage(`River ${turn} is ${turn * 100} km long.`));
  }
  messages.push(new HumanMessage("And which one is the longest?"));
  return messages;
}

const tokens = (messages: BaseMessage[]) => approximateTokenCounter(messages);

function assertToolPairs(messages: BaseMessage[]): void {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) for (const call of message.tool_calls ?? []) calls.add(call.id!);
    if (ToolMessage.isInstance(message)) {
      expect(calls.has(message.tool_call_id)).toBe(true);
      answered.add(message.tool_call_id);
    }
  }
  expect([...calls].sort()).toEqual([...answered].sort());
}

function echoModel(): ScriptedChatModel {
  return new ScriptedChatModel({ reply: (_messages, call) => `answer ${call}`, usage: false });
}

describe("compactMessages as a function", () => {
  it("returns the input itself when it fits, and a compacted list otherwise", async () => {
    const messages = history(8);
    const whole = tokens(messages);
    expect(await compactMessages(messages, { targetTokens: whole })).toBe(messages);

    const target = Math.floor(whole / 3);
    const compacted = await compactMessages(messages, { targetTokens: target });
    expect(compacted).not.toBe(messages);
    expect(compacted.length).toBeLessThan(messages.length);
    expect(compacted[0]).toBe(messages[0]);
    expect(compacted[compacted.length - 1]).toBe(messages[messages.length - 1]);
    expect(compacted.filter((message) => isOmissionNote(message))).toHaveLength(1);
    expect(tokens(compacted.filter((message) => !isOmissionNote(message)))).toBeLessThanOrEqual(target);
    assertToolPairs(compacted);
  });

  it("uses minKeepSteps, omissionNote and tokenCounter", async () => {
    const messages = history(6);
    // Target 50: the system prompt (12 tokens) and the question (11) fit, the newest old turn (over 60) does not,
    // and there are no steps after the question: only the two protected messages stay.
    const protectedOnly = [messages[0], messages[messages.length - 1]];
    const silent = await compactMessages(messages, { targetTokens: 50, omissionNote: null });
    expect(silent).toHaveLength(2);
    silent.forEach((message, index) => expect(message).toBe(protectedOnly[index]));

    const noted = await compactMessages(messages, { targetTokens: 50, omissionNote: "dropped {num_removed}" });
    expect(noted).toHaveLength(3);
    expect(noted[0]).toBe(messages[0]);
    expect(isOmissionNote(noted[1]!)).toBe(true);
    expect(noted[2]).toBe(messages[messages.length - 1]);
    // Six old turns of four messages each went.
    expect(noted[1]!.content).toBe(`dropped ${6 * 4}`);

    // A counter that makes everything tiny: nothing needs to go.
    let counted = 0;
    const tiny = (batch: BaseMessage[]) => {
      counted += batch.length;
      return batch.length;
    };
    expect(await compactMessages(messages, { targetTokens: 1_000, tokenCounter: tiny })).toBe(messages);
    // Deciding that the list fits reads every message, and each once: the counter is the one given, not the default.
    expect(counted).toBe(messages.length);
  });

  it("uses a given compactor", async () => {
    const messages = history(6);
    const compactor = new SlidingWindowCompactor({ omissionNote: "gone: {num_removed}", cache: null });
    const compacted = await compactMessages(messages, { targetTokens: 60, compactor });
    expect(compacted.find((message) => isOmissionNote(message))?.content).toMatch(/^gone: \d+$/);
  });

  it("rejects bad options with typed errors naming the value, before compacting anything", async () => {
    const messages = history(2);
    await expect(compactMessages(messages, { targetTokens: -1 })).rejects.toThrow(new RangeError("`targetTokens` must be a finite number of tokens of at least 0, got -1"));
    await expect(compactMessages(messages, { targetTokens: Number.NaN })).rejects.toThrow(RangeError);
    await expect(compactMessages(messages, { targetTokens: 10, minKeepSteps: 1.5 })).rejects.toThrow(/minKeepSteps.*1\.5/);
    await expect(compactMessages(messages, { targetTokens: 10, tokenCounter: 7 as never })).rejects.toThrow(/tokenCounter.*7/);
    await expect(compactMessages(messages, undefined as never)).rejects.toThrow(TypeError);
    await expect(compactMessages(messages, { targetTokens: 10, compactor: {} as never })).rejects.toThrow(/compactor.*an object/);
    const compactor = new SlidingWindowCompactor();
    await expect(compactMessages(messages, { targetTokens: 10, compactor, minKeepSteps: 2 })).rejects.toThrow(
      /`minKeepSteps` cannot be combined with `compactor`/,
    );
    await expect(compactMessages(messages, { targetTokens: 10, compactor, omissionNote: null, minKeepSteps: 0 })).rejects.toThrow(
      /`minKeepSteps` and `omissionNote` cannot be combined/,
    );
    await expect(compactMessages([new HumanMessage("a"), "b" as never], { targetTokens: 10 })).rejects.toThrow(
      new TypeError('`messages[1]` must be a BaseMessage, got "b"'),
    );
    // The Runnable form fails where it is built.
    expect(() => compactMessages({ targetTokens: -5 })).toThrow(RangeError);
  });
});

describe("compactMessages as a Runnable", () => {
  it("feeds the compacted list to the model when piped", async () => {
    const messages = history(8);
    const target = Math.floor(tokens(messages) / 3);
    const model = echoModel();
    const reply = await compactMessages({ targetTokens: target }).pipe(model).invoke(messages);
    expect(reply.content).toBe("answer 0");
    expect(model.calls).toHaveLength(1);
    const expected = await compactMessages(messages, { targetTokens: target });
    const seen = model.calls[0]!.messages;
    expect(seen.length).toBe(expected.length);
    seen.forEach((message, index) => {
      if (isOmissionNote(message)) expect(message.content).toBe(expected[index]!.content);
      else expect(message).toBe(expected[index]);
    });
    expect(seen.length).toBeLessThan(messages.length);
    assertToolPairs(seen);
  });

  it("works inside RunnablePassthrough.assign for a prompt's MessagesPlaceholder", async () => {
    const messages = history(8).slice(1);
    const target = Math.floor(tokens(messages) / 4);
    const prompt = ChatPromptTemplate.fromMessages([
      ["system", "You are {persona}."],
      new MessagesPlaceholder("history"),
    ]);
    const model = echoModel();
    const chain = RunnablePassthrough.assign({
      history: RunnableLambda.from((input: { history: BaseMessage[] }) => input.history).pipe(compactMessages({ targetTokens: target })),
    })
      .pipe(prompt)
      .pipe(model);
    await chain.invoke({ persona: "a geographer", history: messages });
    const seen = model.calls[0]!.messages;
    expect(seen[0]!.type).toBe("system");
    expect(seen[0]!.content).toBe("You are a geographer.");
    expect(isOmissionNote(seen[1])).toBe(true);
    expect(seen.length).toBeLessThan(messages.length + 1);
    expect(seen[seen.length - 1]!.content).toBe(messages[messages.length - 1]!.content);
    expect(tokens(seen.slice(2))).toBeLessThanOrEqual(target);
    assertToolPairs(seen);
  });

  it("shows up in a run collector under its run name, with callbacks passed through", async () => {
    const messages = history(6);
    const collector = new RunCollectorCallbackHandler();
    const model = echoModel();
    const chain = compactMessages({ targetTokens: 80 }).pipe(model);
    await chain.invoke(messages, { callbacks: [collector], tags: ["outer"] });

    const all: Run[] = [];
    const walk = (run: Run) => {
      all.push(run);
      for (const child of run.child_runs ?? []) walk(child as Run);
    };
    collector.tracedRuns.forEach(walk);
    const compaction = all.filter((run) => run.name === COMPACT_MESSAGES_RUN_NAME);
    expect(COMPACT_MESSAGES_RUN_NAME).toBe("compactMessages");
    expect(compaction).toHaveLength(1);
    const run = compaction[0]!;
    expect(run.error).toBeUndefined();
    expect(run.tags).toContain("outer");
    const output = (run.outputs as { output: BaseMessage[] }).output;
    expect(output.length).toBeLessThan(messages.length);
    expect(output.length).toBe(model.calls[0]!.messages.length);
    // The model ran as a sibling in the same trace.
    expect(all.some((other) => other.run_type === "llm")).toBe(true);

    // Called alone, the Runnable is a root run of its own name.
    const alone = new RunCollectorCallbackHandler();
    await compactMessages({ targetTokens: 80 }).invoke(messages, { callbacks: [alone] });
    expect(alone.tracedRuns.map((r) => r.name)).toEqual([COMPACT_MESSAGES_RUN_NAME]);
  });

  it("reports a bad input as a failed run", async () => {
    const collector = new RunCollectorCallbackHandler();
    await expect(
      compactMessages({ targetTokens: 10 }).invoke([new HumanMessage("x"), 3 as never], { callbacks: [collector] }),
    ).rejects.toThrow(/`messages\[1\]` must be a BaseMessage, got 3/);
    expect(collector.tracedRuns[0]?.error).toMatch(/messages\[1\]/);
  });
});
