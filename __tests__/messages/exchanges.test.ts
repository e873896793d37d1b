/**
 * One definition of "which messages belong together" (`src/messages/exchanges.ts`), read in every shape a
 * provider puts a call in, and used by every stage: each stage × each call shape × `protect` on the call and on the
 * result, the pruning stage's trailing batch and the offload stage's newest step of each shape, the tool name a
 * placeholder gives, the transcript a summary model is shown, and the token count of a call.
 */
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import {
  approximateTokenCounter,
  CompactionPipeline,
  SlidingWindowCompactor,
  SummarizationCompactor,
  ToolResultOffloadCompactor,
  ToolResultPruningCompactor,
} from "../../src";
import type { Compactor, ProtectPredicate } from "../../src";
import { exchangesOf, toolCallIdsOf, toolCallsIn } from "../../src/messages/exchanges";
import { layoutConversation } from "../../src/messages/layout";
import { renderTranscript } from "../../src/compactors/transcript";
import { lengthCounter, system, x } from "../support/stages";
import { ScriptedSummaryModel } from "../support/summary-model";
import { InMemoryStore } from "@langchain/langgraph";
import { RAW_TOOL_CALLS_WARNING, withCoreWarning } from "../support/core-warnings";

type Shape = "tool_calls" | "invalid_tool_calls" | "additional_kwargs" | "tool_use" | "function_call" | "v1_tool_call";
const SHAPES: Shape[] = ["tool_calls", "invalid_tool_calls", "additional_kwargs", "tool_use", "function_call", "v1_tool_call"];

/** An assistant message whose calls stand only in `shape`, as that provider's integration leaves them. */
function asking(shape: Shape, ids: string[], name = "search", text = "C".repeat(10)): AIMessage {
  const textBlock = { type: "text", text };
  switch (shape) {
    case "tool_calls":
      return new AIMessage({ content: text, tool_calls: ids.map((id) => ({ id, name, args: { q: id }, type: "tool_call" as const })) });
    case "invalid_tool_calls":
      return new AIMessage({ content: text, invalid_tool_calls: ids.map((id) => ({ id, name, args: '{"q": ', error: "Malformed args.", type: "invalid_tool_call" as const })) });
    case "additional_kwargs":
      // @langchain/core warns about this shape (a provider package too old to parse its calls); checked, not printed.
      return withCoreWarning(RAW_TOOL_CALLS_WARNING, () =>
        new AIMessage({ content: text, additional_kwargs: { tool_calls: ids.map((id) => ({ id, type: "function" as const, function: { name, arguments: `{"q":"${id}"}` } })) } }),
      );
    case "tool_use":
      return new AIMessage({ content: [textBlock, ...ids.map((id) => ({ type: "tool_use", id, name, input: { q: id } }))] as never });
    case "function_call":
      return new AIMessage({ content: [textBlock, ...ids.map((id) => ({ type: "function_call", id: `fc_${id}`, call_id: id, name, arguments: `{"q":"${id}"}` }))] as never });
    case "v1_tool_call":
      return new AIMessage({ content: [textBlock, ...ids.map((id) => ({ type: "tool_call", id, name, args: { q: id } }))] as never });
  }
}

/** A result without a `name`, so a placeholder must find the tool's name from the call. */
const resultOf = (id: string, n = 400) => new ToolMessage({ tool_call_id: id, content: x(n, `R${id}:`) });
const task = () => new HumanMessage("H".repeat(10));

/** Instructions, the task, then three steps: the first asks in `shape`; every result is large. */
function conversation(shape: Shape): { messages: BaseMessage[]; call: AIMessage; result: ToolMessage } {
  const call = asking(shape, ["a"]);
  const result = resultOf("a");
  const messages: BaseMessage[] = [
    system(), task(),
    call, result,
    asking("tool_calls", ["b"]), resultOf("b"),
    asking("tool_calls", ["c"]), resultOf("c"),
    new AIMessage("D".repeat(10)),
  ];
  return { messages, call, result };
}

interface StageCase {
  name: string;
  build: (protect: ProtectPredicate) => Compactor;
}

const summaryModel = () => new ScriptedSummaryModel(() => "short");
const STAGES: StageCase[] = [
  { name: "sliding window", build: (protect) => new SlidingWindowCompactor({ minKeepSteps: 0, cache: null, protect }) },
  { name: "pruning", build: (protect) => new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 10, cache: null, protect }) },
  { name: "summarization", build: (protect) => new SummarizationCompactor({ model: summaryModel(), minKeepSteps: 0, maxSummaryTokens: 5, cache: null, protect }) },
  { name: "offloading", build: (protect) => new ToolResultOffloadCompactor({ store: new InMemoryStore(), minTokens: 10, previewChars: 20, cache: null, protect }) },
  {
    name: "pipeline (pruning, offloading, summarization, window)",
    build: (protect) =>
      new CompactionPipeline([
        new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 10, cache: null, protect }),
        new ToolResultOffloadCompactor({ store: new InMemoryStore(), minTokens: 10, previewChars: 20, cache: null, protect }),
        new SummarizationCompactor({ model: summaryModel(), minKeepSteps: 0, maxSummaryTokens: 5, cache: null, protect }),
        new SlidingWindowCompactor({ minKeepSteps: 0, cache: null, protect }),
      ]),
  },
];

describe.each(STAGES)("$name: a protected call keeps its result, a protected result keeps its call, in every shape", ({ build }) => {
  test.each(SHAPES)("calls in %s", async (shape) => {
    for (const pin of ["call", "result"] as const) {
      const { messages, call, result } = conversation(shape);
      const pinned = pin === "call" ? call : result;
      const report = await build((message) => message === pinned).compactWithReport(messages, 0, lengthCounter);
      // The stage did act (the target is 0), and neither partner was touched.
      expect(report.messages).not.toBeNull();
      expect(report.messages).toContain(call);
      expect(report.messages).toContain(result);
    }
  });
});

describe("the pruning stage's trailing batch, in every shape", () => {
  test.each(SHAPES)("the newest step's results (asked in %s) are never pruned, even one standing before another message", async (shape) => {
    const p = resultOf("p");
    const q = resultOf("q");
    const old = resultOf("x");
    const messages: BaseMessage[] = [system(), task(), asking("tool_calls", ["x"]), old, asking(shape, ["p", "q"]), p, new AIMessage({ content: "still working" }), q];
    const report = await new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 10, cache: null }).compactWithReport(messages, 0, lengthCounter);
    const rewritten = report.rewritten.map((entry) => entry.original);
    expect(rewritten).toEqual([old]);
  });

  test.each(SHAPES)("a pruned result without a name is named after its call (asked in %s)", async (shape) => {
    const messages: BaseMessage[] = [system(), task(), asking(shape, ["a"], "grep_logs"), resultOf("a"), asking("tool_calls", ["b"]), resultOf("b")];
    const report = await new ToolResultPruningCompactor({ minKeepResults: 1, minTokens: 10, cache: null }).compactWithReport(messages, 0, lengthCounter);
    expect(report.rewritten).toHaveLength(1);
    expect(String(report.rewritten[0]!.replacement.content)).toContain("`grep_logs`");
  });
});

describe("the offload stage's newest step, in every shape", () => {
  test.each(SHAPES)("every result of the newest step (asked in %s) stays, wherever it stands", async (shape) => {
    const p = resultOf("p");
    const q = resultOf("q");
    const old = resultOf("x");
    const messages: BaseMessage[] = [system(), task(), asking("tool_calls", ["x"]), old, asking(shape, ["p", "q"]), p, new AIMessage("note"), q];
    const report = await new ToolResultOffloadCompactor({ store: new InMemoryStore(), minTokens: 10, previewChars: 20, cache: null }).compactWithReport(messages, 0, lengthCounter);
    expect(report.rewritten.map((entry) => entry.original)).toEqual([old]);
  });
});

describe("the transcript and the count read every shape", () => {
  test.each(SHAPES)("a call in %s is shown to the summary model with its name and id, once", (shape) => {
    const transcript = renderTranscript([asking(shape, ["a7"], "fetch_page")]);
    expect(transcript.match(/calls fetch_page\(/g)).toHaveLength(1);
    expect(transcript).toContain("with id a7");
  });

  test("a call standing in two places at once (Anthropic's blocks and parsed calls) is shown and counted once", () => {
    const both = new AIMessage({
      content: [{ type: "text", text: "x" }, { type: "tool_use", id: "a", name: "search", input: { q: "a" } }] as never,
      tool_calls: [{ id: "a", name: "search", args: { q: "a" }, type: "tool_call" }],
    });
    const parsedOnly = new AIMessage({ content: [{ type: "text", text: "x" }] as never, tool_calls: [{ id: "a", name: "search", args: { q: "a" }, type: "tool_call" }] });
    expect(renderTranscript([both]).match(/calls search\(/g)).toHaveLength(1);
    expect(approximateTokenCounter([both])).toBe(approximateTokenCounter([parsedOnly]));
  });

  test.each(SHAPES)("a call in %s is charged by the estimate (its name and arguments count)", (shape) => {
    const short = asking(shape, ["a"], "s");
    const long = asking(shape, ["a"], "s".repeat(401));
    expect(approximateTokenCounter([long]) - approximateTokenCounter([short])).toBe(100);
  });
});

describe("exchangesOf: the rules, one each", () => {
  const exchangeOf = (messages: BaseMessage[]) => {
    const { of, members } = exchangesOf(messages);
    return { of: [...of], members: members.map((list) => [...list]) };
  };

  test.each(SHAPES)("rule 1 and 2: a call in %s and its results, wherever they stand, are one exchange", (shape) => {
    const messages = [task(), resultOf("a"), asking(shape, ["a", "b"]), new HumanMessage("h"), resultOf("b")];
    expect(exchangeOf(messages).members).toEqual([[1, 2, 4]]);
  });

  test("rule 1: messages asking for the same id are one exchange, with all their results", () => {
    const messages = [asking("tool_calls", ["a"]), resultOf("a"), asking("tool_use", ["a", "b"]), resultOf("b"), asking("tool_calls", ["c"]), resultOf("c")];
    expect(exchangeOf(messages).members).toEqual([[0, 1, 2, 3], [4, 5]]);
  });

  test("rule 2: a result whose id nobody asks for is in no exchange, even right after a call", () => {
    const messages = [asking("tool_calls", ["a"]), resultOf("ghost"), resultOf("a")];
    expect(exchangeOf(messages).of).toEqual([0, -1, 0]);
  });

  test("rule 3: a result without an id joins the asking message it directly follows, and only that one", () => {
    const idless = (label: string) => new ToolMessage({ tool_call_id: "", content: label });
    const withoutIds = new AIMessage({ content: "", tool_calls: [{ name: "s", args: {}, type: "tool_call" }] });
    const messages = [withoutIds, idless("1"), idless("2"), new AIMessage("reply"), idless("3"), task(), idless("4")];
    expect(exchangeOf(messages).of).toEqual([0, 0, 0, -1, -1, -1, -1]);
  });

  test("ids: the fast reading equals the readable one, in every shape and in a message holding several", () => {
    for (const shape of SHAPES) expect(toolCallIdsOf(asking(shape, ["a", "b"]))).toEqual(["a", "b"]);
    const mixed = new AIMessage({
      content: [{ type: "tool_use", id: "u", name: "s", input: {} }, { type: "function_call", call_id: "f", name: "s", arguments: "{}" }] as never,
      tool_calls: [{ id: "t", name: "s", args: {}, type: "tool_call" }],
      invalid_tool_calls: [{ id: "i", name: "s", args: "{", error: "bad", type: "invalid_tool_call" }],
      additional_kwargs: { tool_calls: [{ id: "t", type: "function", function: { name: "s", arguments: "{}" } }, { id: "r", type: "function", function: { name: "s", arguments: "{}" } }] },
    });
    expect(toolCallsIn(mixed).map((call) => call.id)).toEqual(["t", "i", "r", "u", "f"]);
  });

  test.each(SHAPES)("the layout never splits an exchange asked in %s", (shape) => {
    const messages = [system(), task(), asking(shape, ["a"]), new AIMessage("between"), resultOf("a"), task(), asking(shape, ["b", "c"]), resultOf("c"), new AIMessage("x"), resultOf("b")];
    const layout = layoutConversation(messages);
    const groupOf = new Map<number, number>();
    [...layout.turns, ...layout.steps].forEach((group, g) => group.members.forEach((index) => groupOf.set(index, g)));
    for (const members of exchangesOf(messages).members) {
      expect(new Set(members.map((index) => groupOf.get(index))).size).toBe(1);
    }
  });
});

describe("exchangesOf: repeated ids", () => {
  test("messages asking for the same id are joined only when a result answers it", () => {
    const unanswered = [asking("tool_calls", ["a"]), asking("tool_calls", ["a"])];
    expect(exchangesOf(unanswered).members.map((list) => [...list])).toEqual([[0], [1]]);
    const answered = [...unanswered, resultOf("a")];
    expect(exchangesOf(answered).members.map((list) => [...list])).toEqual([[0, 1, 2]]);
  });
});
