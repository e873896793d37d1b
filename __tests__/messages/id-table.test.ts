/**
 * The layout's table of call ids (`src/messages/id-table.ts`) against a plain
 * model: the ids in the order they were first added, and a `Map` from id to
 * its number. Every `intern`, `find` and `pop` must answer as the model does,
 * over sequences long enough to grow the table several times (it starts with
 * room for 64 ids) and to pop ids back across a growth, with ids drawn from a
 * small pool too (so that they repeat, and probes meet other ids), and ids
 * that differ in one character or are empty.
 */
import * as fc from "fast-check";
import { hashOf, IdTable } from "../../src/messages/id-table";
import { assertOnSeeds } from "../support/seeds";

const budget = Number(process.env.FC_RUNS ?? 300);

type Operation = { kind: "intern"; id: string } | { kind: "find"; id: string } | { kind: "pop" };

/** Ids that repeat often, ids that differ only in their last or first character, the empty id, and long random ones. */
const id: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 0, max: 400 }).map((n) => `call_${n}`),
  fc.integer({ min: 0, max: 9 }).map((n) => `${n}call_same_suffix`),
  fc.constant(""),
  fc.string({ minLength: 1, maxLength: 40 }),
);

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 6, arbitrary: id.map((value): Operation => ({ kind: "intern", id: value })) },
  { weight: 3, arbitrary: id.map((value): Operation => ({ kind: "find", id: value })) },
  { weight: 1, arbitrary: fc.constant<Operation>({ kind: "pop" }) },
);

/** Runs `operations` on a table and on the model; returns the first disagreement, or null. */
function disagreement(operations: readonly Operation[]): string | null {
  const table = new IdTable();
  const order: string[] = [];
  const numbers = new Map<string, number>();
  for (const [step, op] of operations.entries()) {
    if (op.kind === "pop") {
      table.pop();
      const gone = order.pop();
      if (gone !== undefined) numbers.delete(gone);
    } else if (op.kind === "find") {
      const got = table.find(op.id);
      const want = numbers.get(op.id) ?? -1;
      if (got !== want) return `step ${step}: find(${JSON.stringify(op.id)}) = ${got}, model ${want}`;
    } else {
      const got = table.intern(op.id);
      let want = numbers.get(op.id);
      if (want === undefined) {
        want = order.length;
        order.push(op.id);
        numbers.set(op.id, want);
      }
      if (got !== want) return `step ${step}: intern(${JSON.stringify(op.id)}) = ${got}, model ${want}`;
    }
    if (table.size !== order.length) return `step ${step}: size ${table.size}, model ${order.length}`;
    if (table.cellsInUse() !== order.length) return `step ${step}: ${table.cellsInUse()} cells in use for ${order.length} ids`;
  }
  // Every id the model holds is still found under its number (a pop must not have cut another id's probe chain).
  for (const [value, number] of numbers) if (table.find(value) !== number) return `after all: find(${JSON.stringify(value)}) = ${table.find(value)}, model ${number}`;
  return null;
}

describe("IdTable", () => {
  it("answers every intern, find and pop as a Map of first-added ids does, across growth and pops", () => {
    assertOnSeeds(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 700, size: "max" }), (operations) => {
        expect(disagreement(operations)).toBeNull();
      }),
      Math.max(4, Math.floor(budget / 6)),
    );
  });

  it("pops ids added across several growths one by one, every other id still found after each pop", () => {
    assertOnSeeds(
      fc.property(fc.uniqueArray(id, { minLength: 1, maxLength: 300, size: "max" }), (ids) => {
        const table = new IdTable();
        for (const value of ids) table.intern(value);
        // A boolean, not expect(): a failing case is shrunk over many runs, and each failed expect() would print a diff.
        for (let left = ids.length - 1; left >= 0; left -= 1) {
          table.pop();
          if (table.find(ids[left]!) !== -1 || table.cellsInUse() !== left) return false;
          for (let n = 0; n < left; n += 1) if (table.find(ids[n]!) !== n) return false;
        }
        return true;
      }),
      Math.max(4, Math.floor(budget / 6)),
    );
  });

  it("numbers 10,000 distinct ids in order, finds each again, and pops them all back to empty", () => {
    const table = new IdTable();
    const ids = Array.from({ length: 10_000 }, (_, n) => `toolu_${n.toString(36).padStart(6, "0")}`);
    expect(ids.filter((value, n) => table.intern(value) !== n)).toEqual([]);
    expect(ids.filter((value, n) => table.find(value) !== n)).toEqual([]);
    expect(table.intern(ids[1234]!)).toBe(1234);
    expect(table.size).toBe(10_000);
    for (let left = ids.length - 1; left >= 0; left -= 1) {
      table.pop();
      expect(table.size).toBe(left);
      if (left % 1000 === 0) {
        expect(table.find(ids[left]!)).toBe(-1);
        if (left > 0) expect(table.find(ids[left - 1]!)).toBe(left - 1);
      }
    }
    expect(table.find(ids[0]!)).toBe(-1);
  });

  it("finds an id by its content, not by the string object holding it", () => {
    const table = new IdTable();
    const built = ["call", "abc", "123"].join("_");
    table.intern(built);
    expect(table.find(JSON.parse(JSON.stringify(built)) as string)).toBe(0);
    expect(table.intern(`call_abc_${"123"}`)).toBe(0);
    expect(table.size).toBe(1);
  });

  it("tells two ids with the same hash apart (a pair found by searching call_0, call_1, ...)", () => {
    const [first, second] = ["call_946719", "call_1199484"];
    expect(hashOf(first)).toBe(hashOf(second));
    const table = new IdTable();
    expect(table.intern(first)).toBe(0);
    expect(table.find(second)).toBe(-1);
    expect(table.intern(second)).toBe(1);
    expect([table.find(first), table.find(second)]).toEqual([0, 1]);
    table.pop();
    expect([table.find(first), table.find(second)]).toEqual([0, -1]);
  });

  it("does nothing when popped empty", () => {
    const table = new IdTable();
    table.pop();
    expect(table.size).toBe(0);
    expect(table.intern("a")).toBe(0);
    expect(table.find("a")).toBe(0);
  });
});
