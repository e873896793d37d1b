/**
 * Real servers for the integration tests. URLs come from the environment with
 * this machine's defaults. Locally a missing server skips its tests with a
 * printed notice; under CI=true a missing server is a failure.
 */
import { Socket } from "node:net";
import { notice } from "./diagnostics";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

const underCI = process.env.CI === "true" || process.env.CI === "1";

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000);
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
    socket.connect(Number(port || defaultPort), hostname.replace(/^\[|\]$/g, ""));
  });
}

/**
 * Resolves to true when the server answers. When it does not: under CI throws
 * (the suite fails), locally prints why its tests are skipped and resolves false.
 */
export async function requireServer(name: "Redis" | "PostgreSQL", url: string): Promise<boolean> {
  const ok = await reachable(url, name === "Redis" ? 6379 : 5432);
  if (ok) return true;
  if (underCI) throw new Error(`${name} is not reachable at ${url}, and CI=true requires it`);
  notice(`[skip] ${name} is not reachable at ${url}: its tests are skipped (set CI=true to make this a failure)`);
  return false;
}
