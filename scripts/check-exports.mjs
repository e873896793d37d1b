// Loads the built package through its own name (the package's self-reference)
// from ES modules and from CommonJS, and checks both see the same API.
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const require = createRequire(import.meta.url);
const expected = ["SlidingWindowCompactor", "isCompactionNote", "approximateTokenCounter", "tiktokenCounter", "CompactionHook", "compactMessages", "createCompactionNode", "CompactingChatMessageHistory"];

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

// The optional integrations live on subpaths, so the main entry never needs their peers.
const subpaths = {
  "langchain-compaction/langgraph": ["createCompactionNode", "CompactionAnnotation"],
  "langchain-compaction/middleware": ["compactionMiddleware"],
};
for (const [specifier, names] of Object.entries(subpaths)) {
  const esmSub = await import(specifier);
  const cjsSub = require(specifier);
  for (const name of names) {
    assert.ok(esmSub[name] !== undefined, `ESM export ${specifier} ${name}`);
    assert.equal(esmSub[name], cjsSub[name], `${specifier} ${name} is one object for both`);
  }
}
console.log(`exports ok: ${expected.length} names from the main entry and ${Object.keys(subpaths).length} subpaths, from ESM and CommonJS`);
