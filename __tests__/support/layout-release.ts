/**
 * Run with `node --expose-gc` (by `layout-reuse.test.ts`): lays out and
 * compacts many histories, drops them, and checks with a
 * `FinalizationRegistry` that their messages were collected, so the
 * remembered layouts and checked lists hold nothing once the history is gone.
 * Prints one JSON line.
 */
import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { SlidingWindowCompactor } from "../../src/compactors/sliding-window";
import { layoutConversation } from "../../src/messages/layout";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

// A system prompt shared by every history, as an app's constant: it must not keep any history alive.
const shared = new SystemMessage("You are a helpful agent.");
let collected = 0;
const registry = new FinalizationRegistry<null>(() => {
  collected += 1;
});

async function useOneHistory(thread: number): Promise<void> {
  const history: BaseMessage[] = [shared, new HumanMessage(`task ${thread}`)];
  for (let i = 0; i < 500; i += 1) {
    history.push(new AIMessage({ content: "x".repeat(200), tool_calls: [{ id: `c${i}`, name: "f", args: {}, type: "tool_call" }] }));
    history.push(new ToolMessage({ tool_call_id: `c${i}`, content: "y".repeat(200) }));
  }
  // The last message stands for the history: it is what the memory is keyed by.
  registry.register(history[history.length - 1]!, null);
  const compactor = new SlidingWindowCompactor({ cache: null });
  for (let call = 0; call < 3; call += 1) {
    history.push(new AIMessage(`answer ${call}`));
    layoutConversation([...history]);
    await compactor.compact([...history], 2_000);
  }
}

async function main(): Promise<void> {
  const total = 40;
  gc!();
  const start = process.memoryUsage().heapUsed;
  for (let thread = 0; thread < total; thread += 1) await useOneHistory(thread);
  for (let round = 0; round < 10 && collected < total; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc!();
  }
  const heapGrowthMb = (process.memoryUsage().heapUsed - start) / 2 ** 20;
  process.stdout.write(`${JSON.stringify({ collected, total, heapGrowthMb })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
