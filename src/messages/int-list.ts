/**
 * A growable list of 32-bit integers in a typed array that doubles when full:
 * reused from one extension of a layout to the next by setting `length` back
 * (no array growth, nothing for the GC to copy). Read through `data`, which
 * is replaced when it grows; entries past `length` are stale.
 */
export class IntList {
  data = new Int32Array(64);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length] = value;
    this.length += 1;
  }
}
