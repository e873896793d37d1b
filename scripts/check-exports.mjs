// Loads the built package through its own name (the package's self-reference),
// from ES modules and from CommonJS. The two are separate builds of the same
// sources (dist/*.mjs and dist/*.cjs), so each is checked on its own: its API,
// that it works, and that it runs on the matching build of @langchain/core.
// The one thing they share on purpose is the token-count cache (a registry
// symbol on globalThis, see src/counting/cache.ts).
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const require = createRequire(import.meta.url);
const expected = ["SlidingWindowCompactor", "isOmissionNote", "approximateTokenCounter", "tiktokenCounter", "CompactionHook", "compactMessages", "createCompactionNode", "CompactingChatMessageHistory"];
const subpaths = {
  "langchain-compaction/langgraph": ["createCompactionNode", "CompactionAnnotation", "CompactionGraphAnnotation"],
  "langchain-compaction/middleware": ["compactionMiddleware"],
  "langchain-compaction/testing": ["ScriptedChatModel"],
};
const coreLoadedAsCommonJS = () => Object.keys(require.cache).filter((path) => path.includes("@langchain/core"));

// The ES-module build first, before anything loads CommonJS: it must import the peers' ES-module entry points.
const esm = await import("langchain-compaction");
for (const specifier of Object.keys(subpaths)) await import(specifier);
assert.deepEqual(coreLoadedAsCommonJS(), [], "the ES-module build loads no CommonJS copy of @langchain/core");
const cjs = require("langchain-compaction");

const esmCore = {
  messages: await import("@langchain/core/messages"),
  history: await import("@langchain/core/chat_history"),
};
const cjsCore = { messages: require("@langchain/core/messages"), history: require("@langchain/core/chat_history") };
assert.notEqual(esmCore.messages.HumanMessage, cjsCore.messages.HumanMessage, "this check needs both copies of @langchain/core");

for (const [label, pkg, core] of [
  ["ESM", esm, esmCore],
  ["CommonJS", cjs, cjsCore],
]) {
  for (const name of expected) assert.equal(typeof pkg[name], "function", `${label} export ${name}`);
  const { AIMessage, HumanMessage } = core.messages;
  const history = [new HumanMessage("a ".repeat(400)), new AIMessage("b ".repeat(400)), new HumanMessage("task")];
  const compacted = await new pkg.SlidingWindowCompactor().compact(history, 20);
  assert.ok(compacted && compacted.some((message) => pkg.isOmissionNote(message)), `the ${label} build compacts`);
  assert.ok(compacted.at(-1) === history.at(-1), `the ${label} build keeps the task`);
  // Stores of either copy of @langchain/core are accepted (a check of methods, never instanceof).
  for (const store of [new esmCore.history.InMemoryChatMessageHistory(), new cjsCore.history.InMemoryChatMessageHistory()]) {
    const wrapped = new pkg.CompactingChatMessageHistory({ history: store, targetTokens: 20 });
    await wrapped.addMessages(history);
    const read = await wrapped.getMessages();
    assert.ok(read.some((message) => pkg.isOmissionNote(message)), `the ${label} wrapper compacts a ${store.constructor.name}`);
  }
}
// Notes are recognised by metadata, so each copy recognises the other's.
const note = (await new cjs.SlidingWindowCompactor().compact([new esmCore.messages.HumanMessage("x ".repeat(300)), new esmCore.messages.HumanMessage("task")], 5))[0];
assert.ok(esm.isOmissionNote(note), "a CommonJS note is a note to the ES-module build");
// The dual-package decision: one token-count cache per process.
assert.equal(esm.sharedTokenCountCache, cjs.sharedTokenCountCache, "both builds share one token-count cache");
// A cache made by one copy is accepted by the other.
const foreignCache = new cjs.TokenCountCache();
assert.equal(new esm.SlidingWindowCompactor({ cache: foreignCache }).cache, foreignCache, "a cache of the other build is accepted");

// The optional integrations live on subpaths, so the main entry never needs their peers.
for (const [specifier, names] of Object.entries(subpaths)) {
  const esmSub = await import(specifier);
  const cjsSub = require(specifier);
  for (const name of names) {
    assert.ok(esmSub[name] !== undefined, `ESM export ${specifier} ${name}`);
    assert.ok(cjsSub[name] !== undefined, `CommonJS export ${specifier} ${name}`);
  }
}
console.log(`exports ok: ${expected.length} names from the main entry and ${Object.keys(subpaths).length} subpaths, each from its ESM and its CommonJS build`);
