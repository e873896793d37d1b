/**
 * CPU time spent inside a strategy's hooks: the middleware's `beforeModel`
 * and `wrapModelCall` (without the model call it wraps), or a LangGraph
 * pre-model node. Measured with `process.cpuUsage()`, so time the event loop
 * spends elsewhere is not billed to compaction.
 */
import type { AgentMiddleware } from "langchain";

/** Accumulates CPU microseconds over many timed segments. */
export class CpuMeter {
  micros = 0;

  /** Starts a segment; call the returned function to end it (a second call does nothing). */
  start(): () => void {
    const from = process.cpuUsage();
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const spent = process.cpuUsage(from);
      this.micros += spent.user + spent.system;
    };
  }

  /** `work` with its CPU time added. */
  async time<T>(work: () => Promise<T> | T): Promise<T> {
    const stop = this.start();
    try {
      return await work();
    } finally {
      stop();
    }
  }
}

type Handler = (request: unknown) => Promise<unknown>;
type WrapModelCall = (request: unknown, handler: Handler) => Promise<unknown>;
type Hook = (...args: unknown[]) => unknown;

/**
 * The same middleware with its hooks timed by `meter`; the handler that
 * `wrapModelCall` calls (the model, or the next middleware) is left out.
 */
export function timedMiddleware<M extends AgentMiddleware>(middleware: M, meter: CpuMeter): M {
  const timed = { ...middleware } as unknown as { beforeModel?: Hook; wrapModelCall?: WrapModelCall };
  const before = (middleware as { beforeModel?: Hook }).beforeModel;
  if (typeof before === "function") timed.beforeModel = (...args: unknown[]) => meter.time(() => before(...args));
  const wrap = (middleware as { wrapModelCall?: WrapModelCall }).wrapModelCall;
  if (typeof wrap === "function") {
    timed.wrapModelCall = async (request, handler) => {
      let stop = meter.start();
      try {
        return await wrap(request, async (inner) => {
          stop();
          try {
            return await handler(inner);
          } finally {
            stop = meter.start();
          }
        });
      } finally {
        stop();
      }
    };
  }
  return timed as unknown as M;
}
