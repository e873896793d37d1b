/**
 * `raceAbort` (src/compactors/abort.ts): the work is abandoned as soon as the
 * signal aborts, and a signal that outlives many compactions (one per
 * session, say) is left without the listeners of the ones that finished.
 */
import { getEventListeners } from "node:events";
import { raceAbort } from "../../src/compactors/abort";

const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

test("work that settles removes its abort listener, whether it resolved or rejected", async () => {
  const controller = new AbortController();
  await expect(raceAbort(Promise.resolve(7), controller.signal)).resolves.toBe(7);
  expect(listeners(controller.signal)).toBe(0);
  await expect(raceAbort(Promise.reject(new RangeError("bad")), controller.signal)).rejects.toThrow(RangeError);
  expect(listeners(controller.signal)).toBe(0);
});

test("an abort rejects with the signal's reason while the work still runs", async () => {
  const controller = new AbortController();
  let finish!: (value: number) => void;
  const raced = raceAbort(new Promise<number>((resolve) => (finish = resolve)), controller.signal);
  expect(listeners(controller.signal)).toBe(1);
  const reason = new Error("stop");
  controller.abort(reason);
  await expect(raced).rejects.toBe(reason);
  finish(1);
});

test("an already aborted signal rejects at once; no signal returns the work itself", async () => {
  const reason = new Error("already");
  const work = Promise.reject(new Error("ignored"));
  await expect(raceAbort(work, AbortSignal.abort(reason))).rejects.toBe(reason);
  const plain = Promise.resolve(1);
  expect(raceAbort(plain, undefined)).toBe(plain);
});
