/**
 * `layoutCheckedConversation` checks a list in the same pass that lays it
 * out, and checks a continued list only past the prefix it checked before.
 * These tests pin which messages that skips (only ones already checked, by
 * identity) and what a refused list leaves behind (nothing to trust: the next
 * list is laid out as a fresh one would be).
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { freshLayout, layoutCheckedConversation, layoutConversation } from "../../src/messages/layout";

/** An object that looks like a message to a careless reader, but is none. */
const impostor = (): BaseMessage => ({ type: "human", content: "not a message" }) as unknown as BaseMessage;

function conversation(): BaseMessage[] {
  return [
    new SystemMessage("instructions"),
    new HumanMessage("older question"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "lookup", args: {} }] }),
    new ToolMessage({ content: "found", tool_call_id: "c1" }),
    new HumanMessage("current task"),
    new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "lookup", args: {} }] }),
    new ToolMessage({ content: "found again", tool_call_id: "c2" }),
  ];
}

describe("layoutCheckedConversation refuses what is not a list of messages", () => {
  test("a value that is no array, named with the argument's name (default `messages`)", () => {
    expect(() => layoutCheckedConversation(null)).toThrow(new TypeError("`messages` must be an array of BaseMessage, got null"));
    expect(() => layoutCheckedConversation("hello", "state.messages")).toThrow(new TypeError('`state.messages` must be an array of BaseMessage, got "hello"'));
  });

  test("an element that is no message, at its index, in a list never seen", () => {
    const messages = conversation();
    messages.splice(3, 0, impostor());
    expect(() => layoutCheckedConversation(messages, "input")).toThrow(new TypeError("`input[3]` must be a BaseMessage, got an object"));
  });
});

describe("a continued list is checked past the prefix checked before, and only there", () => {
  test("a prefix laid out unchecked is still checked: the unchecked layout checked nothing", () => {
    // `layoutConversation` trusts its caller; the engine remembers this list but has checked none of it.
    const messages = conversation();
    messages[2] = impostor();
    expect(() => layoutConversation(messages)).not.toThrow();
    expect(() => layoutCheckedConversation(messages)).toThrow(new TypeError("`messages[2]` must be a BaseMessage, got an object"));
    expect(() => layoutCheckedConversation([...messages, new AIMessage("more")])).toThrow(/`messages\[2\]`/);
  });

  test("a new message past a checked prefix is checked under the name given", () => {
    const messages = conversation();
    expect(layoutCheckedConversation(messages, "state.messages")).toEqual(freshLayout(messages));
    const next = [...messages, impostor()];
    expect(() => layoutCheckedConversation(next, "state.messages")).toThrow(new TypeError(`\`state.messages[${messages.length}]\` must be a BaseMessage, got an object`));
  });

  test("an element replaced inside a checked prefix is checked: the prefix ends where the identity breaks", () => {
    const messages = conversation();
    layoutCheckedConversation(messages);
    const edited = messages.map((message, index) => (index === 1 ? impostor() : message));
    expect(() => layoutCheckedConversation(edited)).toThrow(new TypeError("`messages[1]` must be a BaseMessage, got an object"));
  });

  test("a new user message, which turns the task into history and relays it, still checks what it reads again", () => {
    const messages = conversation();
    layoutCheckedConversation(messages);
    // The task's stretch is undone and laid out again from index 4; a bad message after it is still found.
    const next = [...messages, new HumanMessage("next task"), impostor()];
    expect(() => layoutCheckedConversation(next)).toThrow(new TypeError(`\`messages[${messages.length + 1}]\` must be a BaseMessage, got an object`));
  });

  test("a checked list cut back is checked no further than its end", () => {
    const messages = conversation();
    layoutCheckedConversation(messages);
    const cut = messages.slice(0, -2); // most of the list: the remembered layout is rewound, not dropped
    expect(layoutCheckedConversation(cut)).toEqual(freshLayout(cut));
    expect(layoutCheckedConversation([])).toEqual(freshLayout([]));
  });

  test("after a refusal, the good list laid out next equals a fresh layout, checked or not", () => {
    const messages = conversation();
    layoutCheckedConversation(messages);
    expect(() => layoutCheckedConversation([...messages, new AIMessage("one"), impostor()])).toThrow(TypeError);
    const good = [...messages, new AIMessage("one"), new AIMessage("two")];
    expect(layoutCheckedConversation(good)).toEqual(freshLayout(good));
    expect(layoutConversation([...good, new HumanMessage("again")])).toEqual(freshLayout([...good, new HumanMessage("again")]));
  });

  test("a message whose getters throw is named, not left to crash, and the next layout is a fresh one", () => {
    const messages = conversation();
    layoutConversation(messages);
    const broken = new AIMessage("broken");
    Object.defineProperty(broken, "type", {
      get() {
        throw new Error("getter exploded");
      },
    });
    const next = [...messages, broken];
    let thrown: unknown;
    try {
      layoutConversation(next);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as TypeError).message).toBe(`\`messages[${messages.length}]\` cannot be read as a message: getter exploded`);
    expect(((thrown as TypeError).cause as Error).message).toBe("getter exploded");
    const good = [...messages, new AIMessage("fine")];
    expect(layoutConversation(good)).toEqual(freshLayout(good));
  });
});
