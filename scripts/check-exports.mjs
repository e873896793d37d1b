// Loads the built package through its own name (the package's self-reference)
// from ES modules and from CommonJS, and checks both see the same API.
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const require = createRequire(import.meta.url);
const expected = ["SlidingWindowCompactor", "isCompactionNote", "approximateTokenCounter", "tiktokenCounter", "CompactionHook"];

const esm = await import("langchain-compaction");
const cjs = require("langchain-compaction");
for (const name of expected) {
  assert.equal(typeof esm[name], "function", `ESM export ${name}`);
  assert.equal(typeof cjs[name], "function", `CommonJS export ${name}`);
  assert.equal(esm[name], cjs[name], `${name} is one object for both`);
}
const { AIMessage, HumanMessage } = await import("@langchain/core/messages");
const compactor = new esm.SlidingWindowCompactor();
const history = [new HumanMessage("a ".repeat(400)), new AIMessage("b ".repeat(400)), new HumanMessage("task")];
const compacted = await compactor.compact(history, 20);
assert.ok(compacted && compacted.some((message) => cjs.isCompactionNote(message)), "the ESM build compacts");
console.log(`exports ok: ${expected.length} names from ESM and CommonJS`);
