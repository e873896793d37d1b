/**
 * The prefix memory (`src/messages/prefix-memory.ts`): what it offers back (the exact common prefix, only an entry
 * sharing more than half of its list) and what keeps an entry alive (its list's last message, and nothing else:
 * garbage collected in process, see `support/gc.ts`; the layout-reuse suite checks the same for whole histories in a
 * child process).
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { forgetRememberedLists, PrefixMemory } from "../../src/messages/prefix-memory";
import { collectGarbage } from "../support/gc";

describe("the prefix memory", () => {
  const list = (n: number, prefix = "m"): BaseMessage[] => [new SystemMessage("rules"), ...Array.from({ length: n }, (_, i) => new HumanMessage(`${prefix}${i}`))];

  test("a new array holding the same messages recalls the entry with exactly their number in common", () => {
    const memory = new PrefixMemory<string>();
    const seen = list(5);
    memory.remember(undefined, "state", seen, 0);
    const again = memory.recall([...seen]);
    expect(again.entry?.state).toBe("state");
    expect(again.common).toBe(seen.length);
    const longer = memory.recall([...seen, new HumanMessage("new")]);
    expect(longer.common).toBe(seen.length);
    const edited = [...seen];
    edited[4] = new HumanMessage("edited");
    expect(memory.recall(edited).common).toBe(4);
  });

  test("an entry is offered only when more than half of its list is shared", () => {
    const memory = new PrefixMemory<string>();
    const seen = list(5); // 6 messages
    memory.remember(undefined, "state", seen, 0);
    const half = [...seen.slice(0, 3), ...list(4, "other").slice(1)];
    expect(memory.recall(half)).toEqual({ entry: undefined, common: 0 });
    const more = [...seen.slice(0, 4), ...list(4, "other").slice(1)];
    expect(memory.recall(more).common).toBe(4);
  });

  test("of two remembered lists the one sharing the longer prefix is offered", () => {
    const memory = new PrefixMemory<string>();
    const shared = list(3);
    const a = [...shared, new HumanMessage("a")];
    const b = [...shared.slice(0, 3), new HumanMessage("b1"), new HumanMessage("b2")];
    memory.remember(undefined, "a", a, 0);
    memory.remember(undefined, "b", b, 0);
    const recalled = memory.recall([...a, new HumanMessage("next")]);
    expect(recalled).toEqual({ entry: expect.objectContaining({ state: "a" }), common: a.length });
  });

  test("forgetRememberedLists forgets every entry", () => {
    const memory = new PrefixMemory<string>();
    const seen = list(2);
    memory.remember(undefined, "state", seen, 0);
    forgetRememberedLists();
    expect(memory.recall([...seen])).toEqual({ entry: undefined, common: 0 });
  });

  test("remembering through the entry recalled extends it in place, shortens it, and takes the new state", () => {
    const memory = new PrefixMemory<string>();
    const seen = list(5); // 6 messages
    memory.remember(undefined, "s1", seen, 0);
    const grown = [...seen, new HumanMessage("new")];
    const first = memory.recall(grown);
    memory.remember(first.entry, "s1", grown, first.common);
    const afterGrowth = memory.recall([...grown]);
    expect(afterGrowth.entry).toBe(first.entry); // the same entry, updated
    expect(afterGrowth.common).toBe(7);
    expect(afterGrowth.entry?.list).toEqual(grown);

    const shorter = grown.slice(0, 5);
    const second = memory.recall(shorter);
    expect(second.common).toBe(5);
    memory.remember(second.entry, "s1", shorter, second.common);
    const afterCut = memory.recall([...shorter]);
    expect(afterCut.entry?.list).toHaveLength(5);
    expect(afterCut.common).toBe(5);

    memory.remember(afterCut.entry, "s2", shorter, afterCut.common);
    expect(memory.recall([...shorter]).entry?.state).toBe("s2");
  });

  test("an entry found by a later leading message: the first four messages each find it", () => {
    const memory = new PrefixMemory<string>();
    const [system, a, b, c] = list(3);
    const first = [system!, a!, b!, c!, new HumanMessage("first's own")];
    memory.remember(undefined, "first", first, 0);
    // A second list sharing the first three messages takes them as its keys; the fourth still finds the first list.
    memory.remember(undefined, "second", [system!, a!, b!, new HumanMessage("second's own")], 0);
    expect(memory.recall([...first, new HumanMessage("next")])).toEqual({ entry: expect.objectContaining({ state: "first" }), common: 5 });
  });
});

describe("what keeps a remembered entry alive", () => {
  const messages = (n: number, prefix: string): BaseMessage[] => Array.from({ length: n }, (_, i) => new HumanMessage(`${prefix}${i}`));

  /** Remembers `base`, then `base` plus one message through the recalled entry; the added message is not returned. */
  function rememberGrown(memory: PrefixMemory<string>, base: BaseMessage[], state: string): void {
    memory.remember(undefined, state, base, 0);
    const grown = [...base, new HumanMessage(`${state}: added`)];
    const recalled = memory.recall(grown);
    memory.remember(recalled.entry, state, grown, recalled.common);
  }

  test("an entry lives while its list's last message does", async () => {
    const memory = new PrefixMemory<string>();
    const seen = messages(4, "m");
    memory.remember(undefined, "state", seen, 0);
    await collectGarbage();
    expect(memory.recall([...seen]).entry?.state).toBe("state");
  });

  test("once extended, an entry is no longer kept by the message that was last before", async () => {
    const memory = new PrefixMemory<string>();
    const base = messages(4, "m");
    rememberGrown(memory, base, "state");
    // Every message of the old list is still held here; only the added one was dropped.
    await collectGarbage();
    expect(memory.recall([...base])).toEqual({ entry: undefined, common: 0 });
  });

  test("extending one entry leaves another entry ending with the same message alive", async () => {
    const memory = new PrefixMemory<string>();
    const shared = messages(1, "shared")[0]!;
    const other = [...messages(3, "o"), shared];
    const base = [...messages(3, "m"), shared];
    memory.remember(undefined, "other", other, 0);
    // `base` also ends with `shared`: its entry now holds that key, and extending it must not free `other`'s.
    memory.remember(undefined, "base", base, 0);
    memory.remember(undefined, "other", other, 0);
    const grown = [...base, new HumanMessage("added")];
    const recalled = memory.recall(grown);
    expect(recalled.entry?.state).toBe("base");
    memory.remember(recalled.entry, "base", grown, recalled.common);
    await collectGarbage();
    expect(memory.recall([...other]).entry?.state).toBe("other");
  });

  test("a leading message shared by many conversations keeps none of them alive", async () => {
    const memory = new PrefixMemory<string>();
    const system = new SystemMessage("shared rules");
    const tail = messages(3, "kept");
    // The conversation's last message is dropped; its first one (shared) and the others are held.
    memory.remember(undefined, "state", [system, ...tail, new HumanMessage("last")], 0);
    await collectGarbage();
    expect(memory.recall([system, ...tail])).toEqual({ entry: undefined, common: 0 });
  });
});
