/**
 * Fault injection for LangGraph checkpointers: wraps a real saver so that its
 * N-th write (`put` or `putWrites`, counted together) fails once, either
 * before anything reaches the saver (the write is lost) or after the saver
 * stored it (the acknowledgement is lost). Everything else goes to the real
 * saver unchanged.
 */
import { RemoveMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";

/** The error the injector throws, so a test can tell it from a real failure. */
export class InjectedFault extends Error {
  override readonly name = "InjectedFault";
}

/** What the injected fault hit. */
export interface FaultRecord {
  method: "put" | "putWrites";
  call: number;
  /** Whether the saver stored the write (or, `"torn"`, part of it) before the fault was raised. */
  stored: boolean | "torn";
  /** Whether the failed write carried RemoveMessages (a commit-mode compaction) or was the checkpoint right after one. */
  compactionWrite: boolean;
}

type Put = BaseCheckpointSaver["put"];
type PutWrites = BaseCheckpointSaver["putWrites"];
type Writes = Parameters<PutWrites>[1];

function carriesRemovals(writes: Writes): boolean {
  return writes.some(([, value]) => (Array.isArray(value) ? value : [value]).some((item) => RemoveMessage.isInstance(item)));
}

/** The writes with every message that is not a RemoveMessage dropped. */
function tornWrites(writes: Writes): Writes {
  return writes.map(([channel, value]) => [channel, Array.isArray(value) ? value.filter((item) => RemoveMessage.isInstance(item)) : value]);
}

/** Counts writes and fails the `failAt`-th one (1-based); `Infinity` only counts. */
export class FaultInjector {
  calls = 0;
  /** The 1-based numbers of the writes that carried RemoveMessages, or were the checkpoint right after them. */
  readonly compactionCalls: number[] = [];
  fired: FaultRecord | null = null;
  private afterRemovals = false;
  private loseNextPut = false;

  constructor(
    readonly failAt: number,
    /**
     * `false`: the fault comes before the saver sees the write. `true`: after
     * it stored it. `"torn"`: after it stored only the RemoveMessages of a
     * `putWrites`, and the checkpoint `put` right after it is lost too (a
     * broken, non-atomic saver: the control case that the tests' accounting
     * must catch; with that `put` stored, LangGraph resumes from it and the
     * torn writes never matter).
     */
    readonly afterStore: boolean | "torn",
  ) {}

  /** Makes `saver`'s writes go through this injector (the saver object itself is patched and returned). */
  wrap<S extends BaseCheckpointSaver>(saver: S): S {
    const put: Put = saver.put.bind(saver);
    const putWrites: PutWrites = saver.putWrites.bind(saver);
    saver.put = (...args: Parameters<Put>) => {
      const compaction = this.afterRemovals;
      this.afterRemovals = false;
      return this.around("put", compaction, () => put(...args));
    };
    saver.putWrites = (config, writes, taskId, taskPath) => {
      const compaction = carriesRemovals(writes);
      if (compaction) this.afterRemovals = true;
      return this.around("putWrites", compaction, (torn) => putWrites(config, torn ? tornWrites(writes) : writes, taskId, taskPath));
    };
    return saver;
  }

  private async around<T>(method: FaultRecord["method"], compactionWrite: boolean, write: (torn: boolean) => Promise<T>): Promise<T> {
    this.calls += 1;
    if (compactionWrite) this.compactionCalls.push(this.calls);
    if (this.loseNextPut && method === "put") {
      this.loseNextPut = false;
      throw new InjectedFault(`injected fault in put call ${this.calls}, after a torn write`);
    }
    if (this.calls !== this.failAt) return write(false);
    this.loseNextPut = this.afterStore === "torn";
    if (this.afterStore !== false) await write(this.afterStore === "torn");
    this.fired = { method, call: this.calls, stored: this.afterStore, compactionWrite };
    throw new InjectedFault(`injected fault in ${method} call ${this.calls}`);
  }
}
