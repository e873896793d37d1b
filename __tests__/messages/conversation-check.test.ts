/**
 * `assertConversation` remembers the lists it checked (`prefix-memory.ts`) and checks a continued list only past
 * the prefix that is still the very same messages. That memory is a speed device (ARCHITECTURE.md): these tests
 * hold it to the plain rule, every element of every list checked, by giving it lists that share a prefix with one
 * checked before and hold a bad element where a careless memory would skip it.
 */
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { assertConversation, assertConversationInSlices } from "../../src/messages/conversation-check";

const notAMessage = { type: "human", content: "looks like one" };

function history(): BaseMessage[] {
  return [new SystemMessage("rules"), new HumanMessage("question"), new AIMessage("answer"), new HumanMessage("next"), new AIMessage("reply")];
}

describe.each([
  ["assertConversation", (list: unknown, name?: string) => Promise.resolve().then(() => assertConversation(list, name))],
  ["assertConversationInSlices", (list: unknown, name?: string) => assertConversationInSlices(list, undefined, name)],
] as const)("%s checks what it did not check before", (_name, check) => {
  test("a continued list with a bad new element is refused at its index", async () => {
    const list = history();
    await check(list);
    await expect(check([...list, notAMessage], "state.messages")).rejects.toThrow(/`state\.messages\[5\]`/);
  });

  test("an element replaced inside a checked prefix is checked: the prefix ends where the identity breaks", async () => {
    const list = history();
    await check(list);
    const edited: unknown[] = [...list];
    edited[2] = notAMessage;
    await expect(check(edited)).rejects.toThrow(/`messages\[2\]`/);
  });

  test("a list checked before, cut back and grown with a bad element, is refused", async () => {
    const list = history();
    await check(list);
    await expect(check([...list.slice(0, 3), notAMessage])).rejects.toThrow(/`messages\[3\]`/);
  });

  test("the same list again passes, and so does a good continuation", async () => {
    const list = history();
    await check(list);
    await expect(check(list)).resolves.toBeUndefined();
    await expect(check([...list, new HumanMessage("more")])).resolves.toBeUndefined();
  });
});
