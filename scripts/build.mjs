// Builds dist/cjs with tsc (CommonJS plus declarations) and, beside it, thin
// ES-module entry points that re-export the CommonJS build. One copy of the
// code serves both, so `import` and `require` share a single token-count cache.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], {
  stdio: "inherit",
});

const entries = ["index", "integrations/langgraph", "integrations/middleware"];
for (const entry of entries) {
  const cjsPath = join(root, "dist/cjs", `${entry}.js`);
  let names;
  try {
    names = Object.keys(require(cjsPath)).filter((name) => name !== "__esModule");
  } catch (error) {
    if (error && error.code === "MODULE_NOT_FOUND" && String(error.message).includes(cjsPath)) continue;
    throw error;
  }
  const esmPath = join(root, "dist/esm", `${entry}.mjs`);
  mkdirSync(dirname(esmPath), { recursive: true });
  const target = relative(dirname(esmPath), cjsPath).split("\\").join("/");
  const lines = [`import cjs from "${target.startsWith(".") ? target : `./${target}`}";`];
  for (const name of names) lines.push(`export const ${name} = cjs.${name};`);
  writeFileSync(esmPath, `${lines.join("\n")}\n`);
  const typesTarget = `${target.replace(/\.js$/, "")}`;
  writeFileSync(esmPath.replace(/\.mjs$/, ".d.mts"), `export * from "${typesTarget}.js";\n`);
}
console.log("built dist/cjs and dist/esm");
