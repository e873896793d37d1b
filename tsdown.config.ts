import { defineConfig } from "tsdown";

/**
 * The dual build: the same sources compiled twice, to ES modules (`.mjs`,
 * types `.d.mts`) and to CommonJS (`.cjs`, types `.d.cts`). Each build
 * imports the peers' matching entry points, so an ES-module app and the
 * package share one copy of `@langchain/core` (its classes, its `isInstance`
 * markers), and so does a CommonJS app. Every dependency and peer stays
 * external (tsdown's default for `dependencies` and `peerDependencies`);
 * the entries share their common code through chunks within each format.
 */
export default defineConfig({
  entry: {
    index: "src/index.ts",
    langgraph: "src/integrations/langgraph.ts",
    middleware: "src/integrations/middleware.ts",
    testing: "src/testing/index.ts",
  },
  format: ["esm", "cjs"],
  platform: "node",
  target: "node20",
  outDir: "dist",
  fixedExtension: true,
  dts: true,
  // No source maps: `src` is not shipped, and maps pointing at missing files only confuse debuggers.
  sourcemap: false,
  clean: true,
  hash: false,
  tsconfig: "tsconfig.build.json",
  // Code the entries share goes to `dist/chunks/` (one copy per format), beside the three entry files.
  outputOptions: (options, format) => {
    const ext = format === "cjs" ? "c" : "m";
    return {
      ...options,
      chunkFileNames: (chunk) => `chunks/[name]${chunk.name.endsWith(".d") ? `.${ext}ts` : `.${ext}js`}`,
    };
  },
});
