/**
 * What `protect` pins, read off the mask every stage works from (survivors of the mutation run over `src/compactors/protection.ts`). The
 * stages' suites check that pinned messages come through a compaction; here
 * each reason for pinning a message is one test: the predicate's own answer,
 * a protected call keeping its results, a protected result keeping its call
 * and that call's other results, and results without an id going with the
 * call they follow, and only with it.
 */
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { SlidingWindowCompactor, ToolResultPruningCompactor } from "../../src";
import { assertProtect, protectedMessages } from "../../src/compactors/protection";
import type { ProtectPredicate } from "../../src/compactors/protection";
import { answer, calling, human, result, system } from "../support/stages";

/** The pinned indices, or `null` for "nothing pinned". */
const pinnedIndices = (messages: BaseMessage[], protect: ProtectPredicate | undefined) => {
  const mask = protectedMessages(messages, protect);
  return mask === null ? null : [...mask.keys()].filter((index) => mask[index] === 1);
};

const idless = (label: string) => new ToolMessage({ tool_call_id: "", name: "lookup", content: label });
const at = (...indices: number[]) => (_message: BaseMessage, index: number) => indices.includes(index);

describe("protect: the predicate", () => {
  test("it must be a function or undefined; anything else is a TypeError naming it", () => {
    expect(() => assertProtect(undefined)).not.toThrow();
    expect(() => assertProtect(() => false)).not.toThrow();
    expect(() => assertProtect(null)).toThrow(new TypeError("`protect` must be a function (message, index) => boolean, got null"));
    expect(() => assertProtect(true)).toThrow(TypeError);
    expect(() => new SlidingWindowCompactor({ protect: "plan" as never })).toThrow(/^`protect` must be a function/);
  });

  test("without a predicate, or when it names nothing, nothing is pinned", () => {
    const messages = [system(), human(), calling(["a"]), result("a"), answer()];
    expect(pinnedIndices(messages, undefined)).toBeNull();
    expect(pinnedIndices(messages, () => false)).toBeNull();
  });

  test("it is called once per message, with the message and its index; only `true` pins", () => {
    const messages = [system(), human(), answer(), human(), answer()];
    const seen: [BaseMessage, number][] = [];
    protectedMessages(messages, (message, index) => {
      seen.push([message, index]);
      return false;
    });
    expect(seen).toEqual(messages.map((message, index) => [message, index]));
    // A truthy value that is not `true` (a predicate written as `m => m.id`) pins nothing.
    expect(pinnedIndices(messages, () => 1 as unknown as boolean)).toBeNull();
    expect(pinnedIndices(messages, at(2, 4))).toEqual([2, 4]);
  });
});

describe("protect: what must stay with a pinned message", () => {
  test("a pinned call keeps every result answering it, wherever they stand, and nothing else", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["a", "b"]), result("b"), answer(), result("a"),
      calling(["c"]), result("c"),
    ];
    expect(pinnedIndices(messages, at(2))).toEqual([2, 3, 5]);
  });

  test("a pinned result keeps its call, and so the call's other results", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["x"]), result("x"),
      calling(["a", "b"]), result("a"), result("b"),
    ];
    expect(pinnedIndices(messages, at(6))).toEqual([4, 5, 6]);
  });

  test("a call id asked twice ties both callers and every result of either", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["a", "b"]), result("b"),
      calling(["a"]), result("a"),
      calling(["z"]), result("z"),
    ];
    expect(pinnedIndices(messages, at(5))).toEqual([2, 3, 4, 5]);
  });

  test("results without an id go with the call they directly follow", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["a"]), result("a"),
      calling(["p", "q"]), idless("P"), idless("Q"),
      answer(),
    ];
    // The call keeps both; one of them keeps the call and, through it, the other.
    expect(pinnedIndices(messages, at(4))).toEqual([4, 5, 6]);
    expect(pinnedIndices(messages, at(6))).toEqual([4, 5, 6]);
  });

  test("a result without an id after a reply without calls, or after the user, belongs to no call", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["p"]), idless("P"),
      new AIMessage("no calls"), idless("L1"),
      new HumanMessage("go on"), idless("L2"),
    ];
    expect(pinnedIndices(messages, at(2))).toEqual([2, 3]);
    expect(pinnedIndices(messages, at(5))).toEqual([5]);
    expect(pinnedIndices(messages, at(7))).toEqual([7]);
  });

  test("at the very start: a result without an id belongs to no call; a call keeps the id-less results after it", () => {
    const leading: BaseMessage[] = [idless("L"), calling(["x"]), result("x")];
    expect(pinnedIndices(leading, at(1))).toEqual([1, 2]);
    const first: BaseMessage[] = [calling(["p", "q"]), idless("P"), idless("Q"), calling(["r"]), result("r")];
    expect(pinnedIndices(first, at(0))).toEqual([0, 1, 2]);
  });

  test("an empty call id ties nothing together", () => {
    const messages: BaseMessage[] = [
      system(), human(),
      new AIMessage({ content: "C", tool_calls: [{ id: "", name: "lookup", args: {}, type: "tool_call" }] }),
      new ToolMessage({ tool_call_id: "x", name: "lookup", content: "X" }),
      new AIMessage({ content: "D", tool_calls: [{ id: "", name: "lookup", args: {}, type: "tool_call" }] }),
      result("d"),
    ];
    expect(pinnedIndices(messages, at(2))).toEqual([2]);
  });

  test("the stages honour the whole mask: a pinned result's call and sibling are not pruned", async () => {
    const big = 400;
    const messages: BaseMessage[] = [
      system(), human(),
      calling(["a", "b"]), result("a", big), result("b", big),
      calling(["c"]), result("c", big),
      calling(["d"]), result("d", big),
      calling(["e"]), result("e", big),
      answer(),
    ];
    const counter = (list: BaseMessage[]) => list.reduce((sum, m) => sum + String(m.content).length, 0);
    const out = await new ToolResultPruningCompactor({ cache: null, minKeepResults: 1, protect: at(3) }).compact(messages, 0, counter);
    // a is pinned; b stays with it (same call); c and d are pruned; e is the newest result.
    expect(out!.map((message, index) => message === messages[index])).toEqual([
      true, true, true, true, true, true, false, true, false, true, true, true,
    ]);
  });
});
