/**
 * Text of a data warehouse as an analyst agent meets it: a table's
 * definition (`SHOW CREATE TABLE`: one line per column with its type and a
 * comment on its unit and meaning), query results printed as psql prints
 * them, the CSV extracts and loader logs users paste, and chart specs with
 * their data inline. All of it is generated from a seed; a result from its
 * query's text (through `randomFor`), so running a query again prints the
 * same result.
 */
import { int, pick, prose, randomString, sentence } from "./text";
import type { Random } from "./text";

/** One column of a table's definition. */
export interface Column {
  name: string;
  type: string;
  notNull: boolean;
  /** What the column holds and in which unit (what a query writer checks the definition for). */
  comment: string;
}

/** A table as `SHOW CREATE TABLE` describes it. */
export interface TableSchema {
  name: string;
  rows: number;
  partitionedBy: string;
  columns: readonly Column[];
}

/**
 * A column's line in its table's definition (as Snowflake's `GET_DDL` prints it, without the comma): name, type,
 * nullability and comment. The line is what shows the definition is in view: queries, results and charts name a
 * column without its type, and the comment tells apart same-named columns of different tables (`region` is in each).
 */
export function columnDefinition(column: Column): string {
  return `${column.name} ${column.type}${column.notNull ? " NOT NULL" : ""} COMMENT '${column.comment.replace(/'/g, "''")}'`;
}

const COLUMN_STEMS = [
  "promo", "warehouse", "carrier", "tax", "shipping", "payment", "device", "campaign", "coupon", "return", "margin", "fx",
  "invoice", "loyalty", "basket", "fulfilment", "supplier", "store", "courier", "voucher", "segment", "cohort", "billing",
  "contract", "partner", "affiliate", "referral", "bundle", "subscription", "gift", "pickup", "review", "support", "credit",
];
/** Column name endings and the type each implies. */
const COLUMN_ENDINGS: readonly (readonly [string, string])[] = [
  ["_id", "BIGINT"],
  ["_code", "VARCHAR(16)"],
  ["_flag", "BOOLEAN"],
  ["_eur", "NUMERIC(18,2)"],
  ["_minor", "BIGINT"],
  ["_at", "TIMESTAMP"],
  ["_date", "DATE"],
  ["_count", "INTEGER"],
  ["_pct", "NUMERIC(9,4)"],
  ["_name", "VARCHAR(255)"],
  ["_status", "VARCHAR(32)"],
  ["_version", "SMALLINT"],
];

/** The note a definition gives a column of `type`: its unit or meaning, which is why an analyst reads it. */
function commentFor(random: Random, type: string): string {
  const unit =
    type === "NUMERIC(18,2)"
      ? pick(random, ["in EUR, net of VAT", "in EUR, gross", "in EUR at the month's average FX rate"])
      : type === "BIGINT"
        ? pick(random, ["surrogate key", "in minor units (cents) of the order currency", "foreign key"])
        : type === "NUMERIC(9,4)"
          ? "a fraction from 0 to 1, not a percentage"
          : type === "TIMESTAMP"
            ? pick(random, ["UTC", "local time of the store, no zone"])
            : type === "BOOLEAN"
              ? "null when unknown"
              : "free text";
  return `${sentence(random, int(random, 4, 9)).slice(0, -1)}; ${unit}`;
}

/** `count` columns: the `core` ones the analyses query, then generated ones, spread among them as a real table grows. */
export function tableColumns(random: Random, core: readonly Column[], count: number): Column[] {
  const columns = [...core];
  const names = new Set(core.map((column) => column.name));
  while (columns.length < count) {
    const [ending, type] = pick(random, COLUMN_ENDINGS);
    const name = `${pick(random, COLUMN_STEMS)}${random() < 0.3 ? `_${pick(random, COLUMN_STEMS)}` : ""}${ending}`;
    if (names.has(name)) continue;
    names.add(name);
    const column: Column = { name, type, notNull: random() < 0.4, comment: commentFor(random, type) };
    columns.splice(int(random, Math.min(3, columns.length), columns.length), 0, column);
  }
  return columns;
}

/** A table's definition (`SHOW CREATE TABLE`): every column with its type, nullability and comment. */
export function tableDefinition(schema: TableSchema): string {
  const lines = [`CREATE TABLE ${schema.name} (`];
  schema.columns.forEach((column, index) => {
    const comma = index === schema.columns.length - 1 ? "" : ",";
    lines.push(`  ${columnDefinition(column)}${comma}`);
  });
  lines.push(`)`, `PARTITION BY (${schema.partitionedBy});`, `-- ${schema.columns.length} columns, about ${schema.rows.toLocaleString("en-US")} rows`);
  return lines.join("\n");
}

/** A value of `type`, as a result prints it. Amounts stay under a million (the figures the analyses report are larger). */
export function valueOf(random: Random, type: string): string {
  if (type.startsWith("NUMERIC(18")) return (random() * 999_999).toFixed(2);
  if (type.startsWith("NUMERIC")) return random().toFixed(4);
  if (type.startsWith("VARCHAR(2") || type.startsWith("VARCHAR(6")) return sentence(random, int(random, 1, 4)).slice(0, -1).toLowerCase();
  if (type.startsWith("VARCHAR")) return randomString(random, "abcdefghijklmnopqrstuvwxyz", int(random, 4, 10));
  if (type === "BIGINT") return String(int(random, 100_000, 99_999_999));
  if (type === "INTEGER" || type === "SMALLINT") return String(int(random, 0, 4_000));
  if (type === "BOOLEAN") return random() < 0.5 ? "t" : "f";
  if (type === "DATE") return `20${int(random, 23, 24)}-${String(int(random, 1, 12)).padStart(2, "0")}-${String(int(random, 1, 28)).padStart(2, "0")}`;
  if (type === "TIMESTAMP") return `${valueOf(random, "DATE")} ${String(int(random, 0, 23)).padStart(2, "0")}:${String(int(random, 0, 59)).padStart(2, "0")}:${String(int(random, 0, 59)).padStart(2, "0")}`;
  return randomString(random, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 3);
}

/** A column of a result: a SQL type (a generated value of it) or the values it takes (one of them per row). */
export type ResultColumnKind = string | readonly string[];

/** What a query's result holds: its columns, the rows the analysis is after, and generated rows around them. */
export interface ResultShape {
  header: readonly string[];
  kinds: readonly ResultColumnKind[];
  /** Rows the analysis reads (an aggregate's every row, a detail's notable one), placed in the middle of the others. */
  fixed: readonly (readonly string[])[];
  /** Generated rows besides the fixed ones. */
  generated: number;
}

/** A result as psql prints it (aligned columns, a row count), with the warehouse's run time and result id. */
export function resultTable(random: Random, shape: ResultShape, resultId: string): string {
  const generated = Array.from({ length: shape.generated }, () => shape.kinds.map((kind) => (typeof kind === "string" ? valueOf(random, kind) : pick(random, kind))));
  const middle = Math.floor(generated.length / 2);
  const rows = [...generated.slice(0, middle), ...shape.fixed, ...generated.slice(middle)];
  const widths = shape.header.map((name, c) => Math.min(40, Math.max(name.length, ...rows.map((row) => row[c]!.length))));
  const line = (cells: readonly string[]) => ` ${cells.map((cell, c) => cell.padEnd(widths[c]!)).join(" | ")}`.trimEnd();
  return [
    line(shape.header),
    widths.map((width) => "-".repeat(width + 2)).join("+"),
    ...rows.map(line),
    `(${rows.length} ${rows.length === 1 ? "row" : "rows"}, ${int(random, 1, 40) / 10} s, result ${resultId})`,
  ].join("\n");
}

/** A CSV extract: the header line, then one line per row. */
export function csvText(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  return [header, ...rows].map((row) => row.map(cell).join(",")).join("\n");
}

/** A nightly loader's log: the run, each partition loaded, and the error line of each failed partition. */
export interface LoaderLog {
  text: string;
  /** The failed partitions' error lines, as the log prints them. */
  errorLines: string[];
}

/** The log of run `runId` loading `table`'s `partitions` (values of `partitionedBy`), about `bytes` long, with `failed` among them. */
export function loaderLog(random: Random, table: TableSchema, runId: string, partitions: readonly string[], failed: readonly string[], bytes: number): LoaderLog {
  let second = int(random, 0, 600);
  const stamp = () => {
    second += int(random, 1, 40);
    return `[${partitions.at(-1)}T03:${String(Math.floor(second / 60) % 60).padStart(2, "0")}:${String(second % 60).padStart(2, "0")}.${String(int(random, 0, 999)).padStart(3, "0")}Z]`;
  };
  const lines = [`${stamp()} INFO loader: run ${runId} started: ${table.name}, ${partitions.length} partitions, mode=merge`];
  const errorLines: string[] = [];
  const perPartition = Math.max(1, Math.round(bytes / Math.max(1, partitions.length) / 130));
  for (const partition of partitions) {
    lines.push(`${stamp()} INFO loader: partition ${table.partitionedBy}=${partition}: extracting from ${pick(random, ["pos_eu", "pos_us", "shop_api", "marketplace_feed"])}`);
    for (let k = 1; k < perPartition; k += 1) {
      lines.push(`${stamp()} ${random() < 0.1 ? "WARN" : "DEBUG"} loader: ${sentence(random, int(random, 6, 14))} rows=${int(random, 1_000, 90_000)} batch=${k}`);
    }
    if (failed.includes(partition)) {
      const error = `${stamp()} ERROR loader: partition ${table.partitionedBy}=${partition} failed after ${int(random, 2, 5)} retries: ${pick(random, [`duplicate key value violates unique constraint ${table.name.split(".").pop()!}_pkey`, "could not serialize access due to concurrent update", "source file truncated at byte " + String(int(random, 10_000, 900_000))])}`;
      lines.push(error);
      errorLines.push(error);
    } else {
      lines.push(`${stamp()} INFO loader: partition ${table.partitionedBy}=${partition}: merged ${int(random, 10_000, 120_000)} rows`);
    }
  }
  lines.push(`${stamp()} ERROR loader: run ${runId} finished with ${failed.length} failed partitions; downstream models were not refreshed`);
  return { text: lines.join("\n"), errorLines };
}

/** A Vega-Lite spec with its data inline (what a chart tool stores): `values` rows, then styling. */
export function chartSpec(random: Random, title: string, fields: readonly { name: string; type: "nominal" | "quantitative" | "temporal" }[], values: readonly Record<string, string | number>[]): string {
  const [x, y, colour] = fields;
  return JSON.stringify(
    {
      $schema: "https://vega.github.io/schema/vega-lite/v5.json",
      title,
      description: prose(random, int(random, 120, 300)),
      width: 720,
      height: 360,
      data: { values },
      mark: { type: x?.type === "temporal" ? "line" : "bar", tooltip: true },
      encoding: {
        ...(x === undefined ? {} : { x: { field: x.name, type: x.type } }),
        ...(y === undefined ? {} : { y: { field: y.name, type: y.type, axis: { format: ",.0f" } } }),
        ...(colour === undefined ? {} : { color: { field: colour.name, type: colour.type } }),
      },
      config: { font: "Inter", axis: { labelFontSize: 11, titleFontSize: 12 }, legend: { orient: "bottom" } },
    },
    null,
    1,
  );
}
