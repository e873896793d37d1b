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
  /** Whether the saver stored the write before the fault was raised. */
  stored: boolean;
  /** Whether the failed write carried RemoveMessages (a commit-mode compaction) or was the checkpoint right after one. */
  compactionWrite: boolean;
}

type Put = BaseCheckpointSaver["put"];
type PutWrites = BaseCheckpointSaver["putWrites"];
type Writes = Parameters<PutWrites>[1];

function carriesRemovals(writes: Writes): boolean {
  return writes.some(([, value]) => (Array.isArray(value) ? value : [value]).some((item) => RemoveMessage.isInstance(item)));
}

/** Counts writes and fails the `failAt`-th one (1-based); `Infinity` only counts. */
export class FaultInjector {
  calls = 0;
  fired: FaultRecord | null = null;
  private afterRemovals = false;

  constructor(
    readonly failAt: number,
    /** Raise the fault after the saver stored the write, instead of before. */
    readonly afterStore: boolean,
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
    saver.putWrites = (...args: Parameters<PutWrites>) => {
      const compaction = carriesRemovals(args[1]);
      if (compaction) this.afterRemovals = true;
      return this.around("putWrites", compaction, () => putWrites(...args));
    };
    return saver;
  }

  private async around<T>(method: FaultRecord["method"], compactionWrite: boolean, write: () => Promise<T>): Promise<T> {
    this.calls += 1;
    if (this.calls !== this.failAt) return write();
    if (this.afterStore) await write();
    this.fired = { method, call: this.calls, stored: this.afterStore, compactionWrite };
    throw new InjectedFault(`injected fault in ${method} call ${this.calls}`);
  }
}
