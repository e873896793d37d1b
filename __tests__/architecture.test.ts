/**
 * ARCHITECTURE.md is the map from a rule to where it lives: this holds the map
 * to the code. Every file its tables name exists, every function, class,
 * constant or type they name is declared in that file, and no file under
 * `src/` imports from a layer below its own in the layers table.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(__dirname, "..");

interface Table {
  headers: string[];
  rows: string[][];
}

/** The markdown tables of `text`: a header row, a separator row, then rows. */
function tablesOf(text: string): Table[] {
  const tables: Table[] = [];
  const lines = text.split("\n");
  const cells = (line: string) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
  for (let i = 0; i + 1 < lines.length; i += 1) {
    if (!lines[i]!.trim().startsWith("|") || !/^\|\s*:?-{3,}/.test(lines[i + 1]!.trim())) continue;
    const table: Table = { headers: cells(lines[i]!), rows: [] };
    let j = i + 2;
    for (; j < lines.length && lines[j]!.trim().startsWith("|"); j += 1) table.rows.push(cells(lines[j]!));
    tables.push(table);
    i = j - 1;
  }
  return tables;
}

/** The code spans of a cell: `a`, `b` → ["a", "b"]. */
function spans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

const escape = (name: string) => name.replace(/[$]/g, "\\$");

/** Whether `name` (or `Class.member`) is declared in `source`. */
export function declares(source: string, name: string): boolean {
  const [owner, member] = name.split(".");
  const declaration = new RegExp(`(?:function\\*?|class|interface|type|enum|const|let|var)\\s+${escape(owner!)}\\b`);
  const at = source.search(declaration);
  if (at < 0) return false;
  if (member === undefined) return true;
  const memberDeclaration = new RegExp(
    `^\\s*(?:(?:public|private|protected|static|readonly|async|override|get|set)\\s+)*${escape(member)}\\s*[(<:=]`,
    "m",
  );
  return memberDeclaration.test(source.slice(at));
}

const architecture = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
const tables = tablesOf(architecture);
const column = (table: Table, name: string) => table.headers.indexOf(name);

/** Every row of every table with a `file` and a `function` column: the files and the names it gives. */
const namedRows = tables.flatMap((table) => {
  const file = column(table, "file");
  const fn = column(table, "function");
  if (file < 0 || fn < 0) return [];
  return table.rows.map((row) => ({ label: row[0]!, files: spans(row[file]!), names: spans(row[fn]!) }));
});

describe("ARCHITECTURE.md's tables name what the code holds", () => {
  test("the rule and device tables are there and name files and functions", () => {
    expect(namedRows.length).toBeGreaterThan(40);
    for (const row of namedRows) {
      expect({ row: row.label, files: row.files.length > 0, names: row.names.length > 0 }).toEqual({ row: row.label, files: true, names: true });
    }
  });

  test.each(namedRows.map((row) => [row.label, row] as const))("%s", (_label, row) => {
    const sources = row.files.map((file) => {
      expect({ file, exists: existsSync(join(ROOT, file)) }).toEqual({ file, exists: true });
      return readFileSync(join(ROOT, file), "utf8");
    });
    for (const name of row.names) {
      expect({ name, in: row.files, declared: sources.some((source) => declares(source, name)) }).toEqual({ name, in: row.files, declared: true });
    }
  });

  test("every path in a `where`, `defined in` or test column exists", () => {
    const paths: string[] = [];
    for (const table of tables) {
      for (const header of ["where", "defined in", "test holding it to the plain rule"]) {
        const at = column(table, header);
        if (at >= 0) for (const row of table.rows) paths.push(...spans(row[at]!));
      }
    }
    expect(paths.length).toBeGreaterThan(20);
    const missing = paths.filter((path) => !existsSync(join(ROOT, path.replace(/\/$/, ""))));
    expect(missing).toEqual([]);
  });

  test("a wrong name is caught", () => {
    const source = "export class Engine {\n  private place(from: number): void {}\n}\nexport function groupConversation() {}\nconst LIMIT = 1;";
    expect(declares(source, "groupConversation")).toBe(true);
    expect(declares(source, "LIMIT")).toBe(true);
    expect(declares(source, "Engine.place")).toBe(true);
    expect(declares(source, "groupConversations")).toBe(false);
    expect(declares(source, "Engine.join")).toBe(false);
    expect(declares(source, "Other.place")).toBe(false);
  });
});

// ---------------------------------------------------------------------------
// Layers

/** The layers, first to last, each with the files and folders it holds (from the layers table). */
function layersOf(): { name: string; paths: string[] }[] {
  const table = tables.find((candidate) => candidate.headers[0] === "layer");
  if (table === undefined) throw new Error("ARCHITECTURE.md has no layers table");
  const where = column(table, "where");
  return table.rows.map((row) => ({ name: row[0]!, paths: spans(row[where]!).map((path) => path.replace(/\/$/, "")) }));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The relative modules `source` imports or re-exports (static and dynamic imports, requires). */
export function importsOf(source: string): string[] {
  const found = new Set<string>();
  const patterns = [/(?:import|export)\s[^;]*?from\s*["'](\.[^"']*)["']/g, /import\s*\(\s*["'](\.[^"']*)["']\s*\)/g, /require\s*\(\s*["'](\.[^"']*)["']\s*\)/g, /import\s*["'](\.[^"']*)["']/g];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.add(match[1]!);
  return [...found];
}

/** The index of the layer holding `file` (relative to the project), -1 when none does. */
function layerIndexOf(layers: { paths: string[] }[], file: string): number {
  return layers.findIndex((layer) => layer.paths.some((path) => file === path || file.startsWith(`${path}/`)));
}

/** The imports in `src` that reach a later layer: `importer → imported`. */
export function upwardImports(layers: { paths: string[] }[], files: { path: string; source: string }[]): string[] {
  const found: string[] = [];
  for (const { path, source } of files) {
    const own = layerIndexOf(layers, path);
    for (const specifier of importsOf(source)) {
      const target = relative(ROOT, resolve(ROOT, dirname(path), specifier)).replace(/\.ts$/, "");
      const targetLayer = layerIndexOf(layers, `${target}.ts`) >= 0 ? layerIndexOf(layers, `${target}.ts`) : layerIndexOf(layers, target);
      if (targetLayer > own) found.push(`${path} → ${specifier}`);
    }
  }
  return found;
}

describe("no file under src imports from a later layer", () => {
  const layers = layersOf();
  const entries = ["src/index.ts"];
  const files = sourceFiles(join(ROOT, "src"))
    .map((path) => relative(ROOT, path))
    .filter((path) => !entries.includes(path))
    .map((path) => ({ path, source: readFileSync(join(ROOT, path), "utf8") }));

  test("the layers are the ones ARCHITECTURE.md lists, in its order", () => {
    expect(layers.map((layer) => layer.name)).toEqual(["shared", "messages", "counting", "compactors", "integrations", "testing"]);
  });

  test("every source file is in a layer", () => {
    expect(files.filter((file) => layerIndexOf(layers, file.path) < 0).map((file) => file.path)).toEqual([]);
  });

  test("imports reach only the file's own layer or earlier ones", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(upwardImports(layers, files)).toEqual([]);
  });

  test("an upward import is caught, in every form", () => {
    const forms = [
      'import { layoutConversation } from "../messages/layout";\nimport { compactMessages } from "../integrations/runnable";',
      'export { compactMessages } from "../integrations/runnable";',
      'import type { Compactor } from "../compactors/compactor";',
      'const runnable = await import("../integrations/runnable");',
    ];
    for (const source of forms) expect(upwardImports(layers, [{ path: "src/counting/example.ts", source }])).toHaveLength(1);
    expect(upwardImports(layers, [{ path: "src/integrations/example.ts", source: 'import { x } from "../counting/cache";\nimport "../errors";' }])).toEqual([]);
  });
});
