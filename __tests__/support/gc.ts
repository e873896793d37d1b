/**
 * A full garbage collection from inside a jest test (no `--expose-gc` on the command line): V8's flag is set at run
 * time and `gc` taken from a fresh context. A `WeakRef`'s target is kept until the job that made or read it ends, so
 * each collection runs after a turn of the event loop.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export async function collectGarbage(): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}
