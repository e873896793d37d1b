import { IntList } from "./int-list";

/**
 * The tool-call ids of one conversation, numbered in the order they were
 * first added (0, 1, 2, ...): finding an id and adding it when it is new is
 * one probe, and ids are removed newest first, which is how the layout undoes
 * a stretch of the list.
 *
 * Why not a `Map<string, number>`: the layout registers every call id of a
 * history it has not seen and must notice an id asked for twice. A `Map`
 * needs a `get` and a `set` for that, so the layout made one `set` per id and
 * told a repeat by the map not growing, then laid the whole list out again
 * looking ids up first. Here finding and adding are one probe, with no
 * second pass for a conversation that repeats an id, and the table stores
 * each id's hash beside its number: a probe compares strings only when the
 * hashes match, and growing rehashes without reading an id again. A fresh
 * layout of the benchmark's 100,000-message history took 53 ms against 57 to
 * 59 ms with the `Map` (the same process, alternated).
 */
export class IdTable {
  /** The ids by number. */
  private ids: string[] = [];
  /** The hash of each id, by number. */
  private hashes = new IntList();
  /** Open addressing, linear probing: each cell holds an id's number + 1, or 0 when empty. At most half full. */
  private cells = new Int32Array(128);
  private mask = 127;

  /** How many ids the table holds; the next id added gets this number. */
  get size(): number {
    return this.ids.length;
  }

  /** The number of `id`, or -1 when it is not in the table. */
  find(id: string): number {
    const entry = this.cells[this.cellOf(id, hashOf(id))]!;
    return entry - 1;
  }

  /** The number of `id`, adding it first (as number {@link size}) when it is new. */
  intern(id: string): number {
    const hash = hashOf(id);
    const cell = this.cellOf(id, hash);
    const entry = this.cells[cell]!;
    if (entry !== 0) return entry - 1;
    const number = this.ids.length;
    this.ids.push(id);
    this.hashes.push(hash);
    if ((number + 1) * 2 > this.cells.length) this.rehash(this.cells.length * 2);
    else this.cells[cell] = number + 1;
    return number;
  }

  /**
   * Removes the newest id. Clearing its cell cannot cut another id's probe
   * chain: a chain only runs over cells that were taken when its id was
   * added, and every id added after this one is gone already.
   */
  pop(): void {
    const number = this.ids.length - 1;
    if (number < 0) return;
    this.cells[this.cellOf(this.ids[number]!, this.hashes.data[number]!)] = 0;
    this.ids.pop();
    this.hashes.length = number;
  }

  /** How many cells hold an id: {@link size} always (a pop leaves no stale cell behind). For tests. */
  cellsInUse(): number {
    let used = 0;
    for (const entry of this.cells) if (entry !== 0) used += 1;
    return used;
  }

  /** The cell holding `id`, or the empty cell where it would go. */
  private cellOf(id: string, hash: number): number {
    const { cells, ids, mask } = this;
    const hashes = this.hashes.data;
    let cell = hash & mask;
    for (;;) {
      const entry = cells[cell]!;
      if (entry === 0 || (hashes[entry - 1] === hash && ids[entry - 1] === id)) return cell;
      cell = (cell + 1) & mask;
    }
  }

  /** Rebuilds the cells at `capacity`, in the order the ids were added (which keeps `pop` safe). */
  private rehash(capacity: number): void {
    const cells = new Int32Array(capacity);
    const mask = capacity - 1;
    const hashes = this.hashes.data;
    for (let number = 0; number < this.ids.length; number += 1) {
      let cell = hashes[number]! & mask;
      while (cells[cell] !== 0) cell = (cell + 1) & mask;
      cells[cell] = number + 1;
    }
    this.cells = cells;
    this.mask = mask;
  }
}

/** FNV-1a over the UTF-16 code units, then a final mix so that the low bits (the ones a cell index uses) depend on every unit. Exported for tests. */
export function hashOf(id: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let k = 0; k < id.length; k += 1) hash = Math.imul(hash ^ id.charCodeAt(k), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash;
}
