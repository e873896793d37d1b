/**
 * The data analyst agent: one long session preparing a quarterly business
 * review against a warehouse. The agent reads a table's definition
 * (`describe_table`, 40-130 columns, each with its type and a comment on its
 * unit and which rows to exclude) and checks every column a query uses
 * against it, so each later `run_sql` on that table needs the definition in
 * view: a query that filters on a flag or sums an amount is only right if
 * the definition says what the flag and the unit are. Results range from a
 * six-row aggregate (a few hundred bytes) to weekly breakdowns and top-N
 * lists of up to 25 KB. Charts (`save_chart`) carry their data inline and the
 * report (`write_report`) is written whole, so several tool-call inputs are
 * large.
 *
 * Unlike the other workloads, much of what the agent needs arrives in the
 * user's own messages: finance's monthly targets (a CSV of about 7 KB), a
 * loader's log (7-13 KB) and a CRM export (4-12 KB) are pasted into the
 * chat, and later steps need their rows (a query inlines the quarter's
 * targets; a report quotes the log's error lines). No strategy that edits
 * tool results can make room by clearing them; when they are gone the agent
 * asks the user to paste them again. Follow-up requests build on figures
 * found turns before (the Q3 revenue per region, compared with Q4 and
 * with targets, quoted in the report); the agent runs the query again when
 * a figure is out of view. Between requests the user asks which result id
 * backed a figure, which chart id the first chart got, or for the ids they
 * gave with their pastes.
 */
import { z } from "zod/v4";
import { factPlanter } from "../facts";
import { int, pick, prose, randomFor, seededRandom, sentence, shuffled } from "../text";
import type { Random } from "../text";
import { chartSpec, columnDefinition, csvText, loaderLog, resultTable, tableColumns, tableDefinition } from "../warehouse-text";
import type { Column, ResultColumnKind, ResultShape, TableSchema } from "../warehouse-text";
import type { Fact, InfoView, PlanStep, ToolCallSpec, UserTurn, Workload, WorkloadOptions, World } from "../workload";

const REGIONS = ["EMEA-North", "EMEA-South", "NA-East", "NA-West", "APAC", "LATAM"];
const CHANNELS = ["web", "app", "marketplace", "retail", "phone", "partner"];
const REFUND_REASONS = ["damaged", "late_delivery", "wrong_item", "not_as_described", "changed_mind", "duplicate_charge", "fraud"];
const DEVICES = ["desktop", "ios", "android", "tablet"];
const SEGMENTS = ["enterprise", "mid-market", "smb", "public sector"];
const SCRATCH_TABLE = "scratch.crm_key_accounts";

const column = (name: string, type: string, comment: string): Column => ({ name, type, notNull: true, comment });

/** The columns the analyses query; the rest of each table is generated around them. */
const ORDERS_CORE: readonly Column[] = [
  column("order_id", "BIGINT", "surrogate key of the order"),
  column("order_date", "DATE", "the day the order was placed, store-local; partition key"),
  column("region", "VARCHAR(32)", "sales region of the store, e.g. EMEA-North"),
  column("channel", "VARCHAR(32)", "web, app, marketplace, retail, phone or partner"),
  column("customer_id", "BIGINT", "null for guest checkouts"),
  column("net_revenue_eur", "NUMERIC(18,2)", "after discounts, net of VAT, in EUR; refunds are in finance.refunds"),
  column("gross_revenue_eur", "NUMERIC(18,2)", "list price times units before discounts, in EUR"),
  column("units", "INTEGER", "items in the order"),
  column("order_status", "VARCHAR(16)", "placed, completed, cancelled or fraud_hold; only completed orders count as revenue"),
  column("is_test_order", "BOOLEAN", "internal test orders; exclude them from every report"),
  column("loaded_at", "TIMESTAMP", "when the loader merged the row, UTC"),
];
const REFUNDS_CORE: readonly Column[] = [
  column("refund_id", "BIGINT", "surrogate key of the refund"),
  column("order_id", "BIGINT", "the refunded order in sales.orders_fact"),
  column("account_id", "BIGINT", "the CRM account of the customer"),
  column("refund_date", "DATE", "the day the refund was booked; partition key"),
  column("region", "VARCHAR(32)", "sales region of the refunded order"),
  column("reason_code", "VARCHAR(32)", "why the customer was refunded, from the support tool"),
  column("refund_amount_eur", "NUMERIC(18,2)", "money returned to the customer, in EUR, VAT included"),
  column("refund_status", "VARCHAR(16)", "requested, approved, paid or rejected; only paid refunds left the company"),
];
const SESSIONS_CORE: readonly Column[] = [
  column("session_id", "VARCHAR(36)", "UUID of the visit"),
  column("session_date", "DATE", "the day the visit started, UTC; partition key"),
  column("region", "VARCHAR(32)", "sales region from the visitor's geo-IP"),
  column("device_type", "VARCHAR(16)", "desktop, ios, android or tablet"),
  column("pageviews", "INTEGER", "pages seen in the visit"),
  column("converted", "BOOLEAN", "the visit ended with a completed order"),
  column("is_bot", "BOOLEAN", "flagged by the bot filter; exclude from traffic figures"),
];

/** A query the plan runs, as the warehouse answers it. */
interface PlannedQuery {
  resultId: string;
  shape: ResultShape;
  /** The figures its result shows (info keys), so a refetch of one records them all. */
  figures: readonly string[];
}

/** A number the analyses report and later requests build on, and the query whose result shows it. */
interface Figure {
  value: string;
  sql: string;
}

/** Data the user pasted: the lines later steps need (by info key), and the block they paste again when asked. */
interface Paste {
  label: string;
  block: string;
  lines: Map<string, string>;
}

const SYSTEM_PROMPT = [
  "You are a data analyst agent working in the company's warehouse (PostgreSQL dialect). describe_table prints a table's definition;",
  "read it before you query a table and check every column you use against it (its unit, which rows to exclude). run_sql runs one query",
  "and prints the result with its result id. load_csv loads data the user pasted into a scratch table; save_chart stores a Vega-Lite chart",
  "with its data inline; write_report publishes a Markdown report. Report every figure with the result id it came from.",
  "Never guess a column or a number: if it is no longer in front of you, describe the table or run the query again, or ask the user",
  "to paste their data again.",
  prose(seededRandom(17), 1_000),
].join("\n");

const fenced = (language: string, text: string) => `\`\`\`${language}\n${text}\n\`\`\``;

/** An amount of `min` to `max` euros with cents, different from every one in `used`. */
function amount(random: Random, min: number, max: number, used: Set<string>): string {
  let value: string;
  do value = `${int(random, min, max)}.${String(int(random, 0, 99)).padStart(2, "0")}`;
  while (used.has(value));
  used.add(value);
  return value;
}

/** The analyst workload of `seed`: 9 requests and 6 questions (3 requests and 2 questions with `quick`). */
export function analystWorkload(seed: number, options: WorkloadOptions = {}): Workload {
  const random = seededRandom(seed * 5227 + 17);
  const { facts, fact } = factPlanter(random);
  const year = pick(random, [2023, 2024]);
  const focus = pick(random, REGIONS);
  const channels = shuffled(random, CHANNELS).slice(0, int(random, 3, 4));
  const quarter = (q: 3 | 4) => ({ label: `${year}-Q${q}`, from: `${year}-${q === 3 ? "07" : "10"}-01`, to: `${year}-${q === 3 ? "09-30" : "12-31"}`, months: (q === 3 ? [7, 8, 9] : [10, 11, 12]).map((m) => `${year}-${String(m).padStart(2, "0")}`) });
  const q3 = quarter(3);
  const q4 = quarter(4);
  const weeks = (q: ReturnType<typeof quarter>) => Array.from({ length: 13 }, (_, w) => new Date(Date.parse(`${q.from}T00:00:00Z`) + w * 7 * 86_400_000).toISOString().slice(0, 10));

  const schema = (name: string, core: readonly Column[], columns: [number, number], partitionedBy: string): TableSchema => ({
    name,
    rows: int(random, 20, 900) * 1_000_000,
    partitionedBy,
    columns: tableColumns(random, core, int(random, ...columns)),
  });
  const orders = schema("sales.orders_fact", ORDERS_CORE, [70, 120], "order_date");
  const refunds = schema("finance.refunds", REFUNDS_CORE, [40, 80], "refund_date");
  const sessions = schema("web.sessions", SESSIONS_CORE, [80, 130], "session_date");
  const tables = new Map([orders, refunds, sessions].map((table) => [table.name, table]));
  const queries = new Map<string, PlannedQuery>(); // by SQL text
  const figures = new Map<string, Figure>(); // by info key
  const pastes = new Map<string, Paste>(); // by info key of each line
  const charts = new Map<string, string>(); // chart title -> chart id
  const used = new Set<string>();
  const turns: UserTurn[] = [];

  const columnKey = (table: TableSchema, name: string) => `column:${table.name}:${name}`;
  const columnOf = (table: TableSchema, name: string) => {
    const found = table.columns.find((c) => c.name === name);
    if (found === undefined) throw new RangeError(`analyst workload: ${table.name} has no column ${name}`);
    return found;
  };
  /** Result column kinds: the column's type, or the values a categorical column takes. */
  const kindOf = (table: TableSchema, name: string): ResultColumnKind =>
    name === "region" ? REGIONS : name === "channel" ? channels : name === "reason_code" ? REFUND_REASONS : name === "device_type" ? DEVICES : columnOf(table, name).type;
  /** A column of the table no analysis is about (a flag, an id, a code): real queries on wide tables filter on such columns. */
  const otherColumn = (table: TableSchema, core: readonly Column[]) => pick(random, table.columns.filter((c) => !core.some((k) => k.name === c.name)));
  const filterOn = (c: Column) => (c.type === "BOOLEAN" ? `${c.name} IS NOT TRUE` : `${c.name} IS NOT NULL`);

  const describe = (table: TableSchema): PlanStep => ({
    needs: [],
    content: `Reading the definition of ${table.name} before querying it.`,
    calls: [{ name: "describe_table", args: { table: table.name }, provides: table.columns.map((c) => columnKey(table, c.name)) }],
  });
  /** A `run_sql` step: it needs the definition of every column it uses, and `extra` (pasted rows, figures). */
  const query = (content: string, table: TableSchema, columns: readonly string[], sql: string, shape: ResultShape, figureKeys: readonly string[] = [], extra: readonly string[] = []) => {
    const resultId = fact("RS", "tool", "result id");
    queries.set(sql, { resultId, shape, figures: figureKeys });
    for (const key of figureKeys) figures.get(key)!.sql = sql;
    const step: PlanStep = { needs: [...columns.map((name) => columnKey(table, name)), ...extra], content, calls: [{ name: "run_sql", args: { query: sql }, provides: figureKeys }] };
    return { step, resultId };
  };
  const figure = (key: string, value: string) => {
    figures.set(key, { value, sql: "" });
    return value;
  };
  const answer = (text: string, needs: readonly string[] = []): PlanStep => ({ needs, content: `${text} ${prose(random, int(random, 200, 700))}`, calls: [] });
  const question = (text: string, factId: string, source: Fact["source"]) => turns.push({ user: text, question: { fact: factId, source }, steps: [{ needs: [], content: "", calls: [] }] });
  const sample = (table: TableSchema, core: readonly Column[], dateColumn: string, q: ReturnType<typeof quarter>) => {
    const columns = [...core.slice(0, 7).map((c) => c.name), ...shuffled(random, table.columns.filter((c) => !core.includes(c))).slice(0, int(random, 2, 5)).map((c) => c.name)];
    const rows = int(random, 15, 70);
    const sql = `SELECT ${columns.join(", ")}\nFROM ${table.name}\nWHERE ${dateColumn} BETWEEN '${q.from}' AND '${q.to}'\nORDER BY ${dateColumn} DESC\nLIMIT ${rows};`;
    return query(`Looking at a sample of ${table.name}.`, table, columns, sql, { header: columns, kinds: columns.map((name) => kindOf(table, name)), fixed: [], generated: rows }).step;
  };

  // Net revenue per region in a quarter: the figures the whole review builds on.
  const revenueFilter = otherColumn(orders, ORDERS_CORE);
  const revenue = (q: ReturnType<typeof quarter>) => {
    const keys = REGIONS.map((region) => `figure:revenue:${q.label}:${region}`);
    const fixed = REGIONS.map((region, r) => [region, figure(keys[r]!, amount(random, 20_000_000, 90_000_000, used)), String(int(random, 2_000_000, 9_000_000)), String(int(random, 200_000, 900_000))]);
    const sql = [
      "SELECT region, SUM(net_revenue_eur) AS net_revenue_eur, SUM(units) AS units, COUNT(*) AS orders",
      "FROM sales.orders_fact",
      `WHERE order_date BETWEEN '${q.from}' AND '${q.to}'`,
      "  AND order_status = 'completed'",
      "  AND NOT is_test_order",
      `  AND ${filterOn(revenueFilter)}`,
      "GROUP BY region",
      "ORDER BY region;",
    ].join("\n");
    const columns = ["region", "net_revenue_eur", "units", "order_date", "order_status", "is_test_order", revenueFilter.name];
    const { step, resultId } = query(`Summing ${q.label} net revenue per region.`, orders, columns, sql, { header: ["region", "net_revenue_eur", "units", "orders"], kinds: [], fixed, generated: 0 }, keys);
    return { step, resultId, keys, value: (region: string) => figures.get(`figure:revenue:${q.label}:${region}`)!.value };
  };
  const revenueLine = (q: ReturnType<typeof quarter>, r: ReturnType<typeof revenue>) => `${q.label} net revenue by region (completed orders, test orders excluded; result ${r.resultId}): ${REGIONS.map((region) => `${region} ${r.value(region)} EUR`).join(", ")}.`;

  // 1. Q3 revenue: describe, sample, aggregate, weekly or monthly breakdown, chart.
  const revenueQ3 = revenue(q3);
  const grain = pick(random, ["week", "month"] as const);
  const periods = grain === "week" ? weeks(q3) : q3.months.map((m) => `${m}-01`);
  const peakKey = "figure:revenue-peak";
  const peak = [focus, pick(random, channels), pick(random, periods), figure(peakKey, amount(random, 1_000_000, 1_900_000, used)), String(int(random, 5_000, 40_000))];
  const breakdownFilter = otherColumn(orders, ORDERS_CORE);
  const breakdown = query(
    `Breaking ${q3.label} revenue down by region, channel and ${grain}.`,
    orders,
    ["region", "channel", "order_date", "net_revenue_eur", "order_status", "is_test_order", breakdownFilter.name],
    [
      `SELECT region, channel, date_trunc('${grain}', order_date)::date AS ${grain}, SUM(net_revenue_eur) AS net_revenue_eur, COUNT(*) AS orders`,
      "FROM sales.orders_fact",
      `WHERE order_date BETWEEN '${q3.from}' AND '${q3.to}' AND order_status = 'completed' AND NOT is_test_order AND ${filterOn(breakdownFilter)}`,
      "GROUP BY 1, 2, 3",
      "ORDER BY 1, 2, 3;",
    ].join("\n"),
    { header: ["region", "channel", grain, "net_revenue_eur", "orders"], kinds: [REGIONS, channels, periods, "NUMERIC(18,2)", "INTEGER"], fixed: [peak], generated: REGIONS.length * channels.length * periods.length - 1 },
    [peakKey],
  );
  // The chart shows the focus region's channels over the quarter (the peak among them), its data inline.
  const q3ChartTitle = `Net revenue of ${focus} by ${grain} and channel, ${q3.label}`;
  const q3Chart = fact("CH", "tool", "chart id");
  charts.set(q3ChartTitle, q3Chart);
  const chartValues = channels.flatMap((channel) =>
    periods.map((period) => ({ channel, [grain]: period, net_revenue_eur: channel === peak[1] && period === peak[2] ? Number(peak[3]) : Number((random() * 999_999).toFixed(2)) })),
  );
  turns.push({
    user: `We're preparing the ${q3.label} business review. Start with sales.orders_fact: what was net revenue per region in ${q3.label}, and how did it move by channel over the quarter? A chart would help. ${sentence(random, int(random, 6, 14))}`,
    steps: [
      describe(orders),
      sample(orders, ORDERS_CORE, "order_date", q3),
      revenueQ3.step,
      breakdown.step,
      {
        needs: [peakKey],
        content: "Saving the chart of the breakdown.",
        calls: [{ name: "save_chart", args: { title: q3ChartTitle, spec: chartSpec(random, q3ChartTitle, [{ name: grain, type: "temporal" }, { name: "net_revenue_eur", type: "quantitative" }, { name: "channel", type: "nominal" }], chartValues) } }],
      },
      answer(`${revenueLine(q3, revenueQ3)} The chart is saved as ${q3Chart}; the strongest ${grain} was ${peak[1]} in ${focus} from ${peak[2]} (${peak[3]} EUR).`, revenueQ3.keys),
    ],
  });

  // 2. The user pastes finance's monthly targets; Q3 against them (the query inlines the quarter's rows).
  const budgetVersion = fact("BG", "user", "budget version");
  const budgetHeader = ["region", "month", "target_net_revenue_eur", "target_orders", "owner", "comment"];
  const months = Array.from({ length: 12 }, (_, m) => `${year}-${String(m + 1).padStart(2, "0")}`);
  const budgetRows = REGIONS.flatMap((region) => months.map((month) => [region, month, `${int(random, 6_000, 30_000)}000.00`, String(int(random, 60_000, 300_000)), `${pick(random, ["a.berg", "k.osei", "m.tanaka", "l.moreau", "s.patel"])}@example.com`, sentence(random, int(random, 2, 12)).slice(0, -1)]));
  const budgetCsv = csvText(budgetHeader, budgetRows);
  const budgetLines = budgetCsv.split("\n");
  const budget: Paste = { label: "budget targets", block: fenced("csv", budgetCsv), lines: new Map() };
  const budgetKey = (region: string, month: string) => `paste:budget:${region}:${month}`;
  budgetRows.forEach((row, index) => {
    const key = budgetKey(row[0]!, row[1]!);
    budget.lines.set(key, budgetLines[index + 1]!);
    pastes.set(key, budget);
  });
  const budgetKeys = (q: ReturnType<typeof quarter>, regions = REGIONS) => regions.flatMap((region) => q.months.map((month) => budgetKey(region, month)));
  const againstTargets = (q: ReturnType<typeof quarter>, actuals: ReturnType<typeof revenue>) => {
    const targetRows = budgetRows.filter((row) => q.months.includes(row[1]!));
    const sql = [
      "WITH targets(region, month, target_net_revenue_eur) AS (",
      "  VALUES",
      targetRows.map((row) => `    ('${row[0]}', '${row[1]}', ${row[2]})`).join(",\n"),
      "), actuals AS (",
      "  SELECT region, SUM(net_revenue_eur) AS net_revenue_eur",
      "  FROM sales.orders_fact",
      `  WHERE order_date BETWEEN '${q.from}' AND '${q.to}' AND order_status = 'completed' AND NOT is_test_order AND ${filterOn(revenueFilter)}`,
      "  GROUP BY region",
      ")",
      "SELECT a.region, a.net_revenue_eur, SUM(t.target_net_revenue_eur) AS target_net_revenue_eur, round(a.net_revenue_eur / SUM(t.target_net_revenue_eur), 4) AS attainment",
      "FROM actuals a JOIN targets t USING (region)",
      "GROUP BY a.region, a.net_revenue_eur",
      "ORDER BY attainment;",
    ].join("\n");
    const fixed = REGIONS.map((region) => {
      const target = targetRows.filter((row) => row[0] === region).reduce((sum, row) => sum + Number(row[2]), 0);
      return [region, actuals.value(region), target.toFixed(2), (Number(actuals.value(region)) / target).toFixed(4)];
    });
    return query(`Comparing ${q.label} with finance's targets.`, orders, ["region", "net_revenue_eur", "order_date", "order_status", "is_test_order", revenueFilter.name], sql, { header: ["region", "net_revenue_eur", "target_net_revenue_eur", "attainment"], kinds: [], fixed, generated: 0 }, [], budgetKeys(q)).step;
  };
  turns.push({
    user: `Finance sent the monthly targets for ${year} (budget version ${budgetVersion}, signed off last week). How did each region do against target in ${q3.label}?\n\n${budget.block}`,
    steps: [againstTargets(q3, revenueQ3), answer(`Against the targets you pasted, ${q3.label} attainment per region is in the table above; ${focus} is the one to watch.`)],
  });
  question(`For the audit trail: which result id did the ${q3.label} net revenue figure for ${focus} come from?`, revenueQ3.resultId, "tool");

  // 3. The user pastes a failed loader run's log; which partitions are missing, and does the Q3 figure hold?
  const runId = fact("JR", "user", "loader run id");
  const lastDay = Date.parse(`${q3.to}T00:00:00Z`);
  const partitions = Array.from({ length: int(random, 12, 40) }, (_, d) => new Date(lastDay - d * 86_400_000).toISOString().slice(0, 10)).reverse();
  const failed = shuffled(random, partitions).slice(0, int(random, 2, 3)).sort();
  const log = loaderLog(random, orders, runId, partitions, failed, int(random, 6_000, 12_000));
  const loader: Paste = { label: "loader log", block: fenced("", log.text), lines: new Map() };
  const errorKeys = log.errorLines.map((line, index) => {
    const key = `paste:loader:${index}`;
    loader.lines.set(key, line);
    pastes.set(key, loader);
    return key;
  });
  const partitionCheck = query(
    "Counting the rows of each loaded partition.",
    orders,
    ["order_date", "net_revenue_eur", "loaded_at"],
    `SELECT order_date, COUNT(*) AS row_count, SUM(net_revenue_eur) AS net_revenue_eur, MAX(loaded_at) AS last_loaded_at\nFROM sales.orders_fact\nWHERE order_date BETWEEN '${partitions[0]}' AND '${partitions.at(-1)}'\nGROUP BY order_date\nORDER BY order_date;`,
    { header: ["order_date", "row_count", "net_revenue_eur", "last_loaded_at"], kinds: [partitions, "INTEGER", "NUMERIC(18,2)", "TIMESTAMP"], fixed: [], generated: partitions.length },
    [],
    errorKeys,
  );
  const revenueKey = (q: ReturnType<typeof quarter>, region: string) => `figure:revenue:${q.label}:${region}`;
  turns.push({
    user: `Heads-up: last night's backfill of sales.orders_fact failed. Here's the loader log:\n\n${loader.block}\n\nWhich partitions are affected, and does it change the ${q3.label} number you gave me for ${focus}?`,
    steps: [
      partitionCheck.step,
      answer(`Partitions ${failed.join(", ")} failed and hold yesterday's rows. The ${focus} ${q3.label} figure of ${revenueQ3.value(focus)} EUR includes those days as they were before the backfill, so it stands until the rerun.`, [...errorKeys, revenueKey(q3, focus)]),
    ],
  });

  // 4. Refunds: describe, sample, per region, per reason, the largest ones.
  const refundKeys = REGIONS.map((region) => `figure:refunds:${region}`);
  const refundFixed = REGIONS.map((region, r) => [region, figure(refundKeys[r]!, amount(random, 1_000_000, 9_000_000, used)), String(int(random, 2_000, 40_000))]);
  const refundFilter = otherColumn(refunds, REFUNDS_CORE);
  const refundsByRegion = query(
    `Summing paid refunds per region in ${q3.label}.`,
    refunds,
    ["region", "refund_amount_eur", "refund_date", "refund_status", refundFilter.name],
    `SELECT region, SUM(refund_amount_eur) AS refunded_eur, COUNT(*) AS refunds\nFROM finance.refunds\nWHERE refund_date BETWEEN '${q3.from}' AND '${q3.to}' AND refund_status = 'paid' AND ${filterOn(refundFilter)}\nGROUP BY region\nORDER BY region;`,
    { header: ["region", "refunded_eur", "refunds"], kinds: [], fixed: refundFixed, generated: 0 },
    refundKeys,
  );
  const topRefunds = int(random, 80, 220);
  const topExtra = otherColumn(refunds, REFUNDS_CORE);
  const refundValue = (region: string) => figures.get(`figure:refunds:${region}`)!.value;
  turns.push({
    user: `Next, refunds in finance.refunds: how much did we pay back per region in ${q3.label}, for which reasons, and what do the largest refunds look like?`,
    steps: [
      describe(refunds),
      sample(refunds, REFUNDS_CORE, "refund_date", q3),
      refundsByRegion.step,
      query(
        "Splitting the refunds by reason.",
        refunds,
        ["region", "reason_code", "refund_amount_eur", "refund_date", "refund_status"],
        `SELECT region, reason_code, SUM(refund_amount_eur) AS refunded_eur, COUNT(*) AS refunds\nFROM finance.refunds\nWHERE refund_date BETWEEN '${q3.from}' AND '${q3.to}' AND refund_status = 'paid'\nGROUP BY 1, 2\nORDER BY 1, 3 DESC;`,
        { header: ["region", "reason_code", "refunded_eur", "refunds"], kinds: [REGIONS, REFUND_REASONS, "NUMERIC(18,2)", "INTEGER"], fixed: [], generated: REGIONS.length * REFUND_REASONS.length },
      ).step,
      query(
        "Listing the largest refunds.",
        refunds,
        ["refund_id", "refund_date", "region", "reason_code", "refund_amount_eur", "account_id", "order_id", "refund_status", topExtra.name],
        `SELECT refund_id, refund_date, region, reason_code, refund_amount_eur, account_id, order_id, ${topExtra.name}\nFROM finance.refunds\nWHERE refund_date BETWEEN '${q3.from}' AND '${q3.to}' AND refund_status = 'paid'\nORDER BY refund_amount_eur DESC\nLIMIT ${topRefunds};`,
        {
          header: ["refund_id", "refund_date", "region", "reason_code", "refund_amount_eur", "account_id", "order_id", topExtra.name],
          kinds: ["BIGINT", "DATE", REGIONS, REFUND_REASONS, "NUMERIC(18,2)", "BIGINT", "BIGINT", topExtra.type],
          fixed: [],
          generated: topRefunds,
        },
      ).step,
      answer(`Paid refunds in ${q3.label} by region (result ${refundsByRegion.resultId}): ${REGIONS.map((region) => `${region} ${refundValue(region)} EUR`).join(", ")}.`, refundKeys),
    ],
  });
  question("What was the run id of the failed load in the log I pasted?", runId, "user");

  if (options.quick) return finish();

  // 5. The user pastes a CRM export; the agent loads it and joins it with refunds.
  const exportId = fact("EX", "user", "CRM export id");
  const crmHeader = ["account_id", "account_name", "segment", "country", "owner_email", "arr_eur", "signup_date"];
  const crmRows = Array.from({ length: int(random, 50, 150) }, () => [
    String(int(random, 100_000, 9_999_999)),
    sentence(random, int(random, 1, 3)).slice(0, -1).replace(/^./, (c) => c.toUpperCase()) + pick(random, [" GmbH", " Ltd", " SA", " Inc.", " BV", " AB"]),
    pick(random, SEGMENTS),
    pick(random, ["DE", "FR", "GB", "NL", "SE", "US", "CA", "JP", "BR", "ES"]),
    `${pick(random, ["j.doe", "r.ali", "c.lin", "p.novak", "e.rossi"])}@example.com`,
    `${int(random, 20_000, 2_000_000)}.00`,
    `20${int(random, 15, 23)}-${String(int(random, 1, 12)).padStart(2, "0")}-${String(int(random, 1, 28)).padStart(2, "0")}`,
  ]);
  const crmCsv = csvText(crmHeader, crmRows);
  const crmLines = crmCsv.split("\n");
  const crm: Paste = { label: "CRM export", block: fenced("csv", crmCsv), lines: new Map([["paste:crm:header", crmLines[0]!], ["paste:crm:last", crmLines.at(-1)!]]) };
  for (const key of crm.lines.keys()) pastes.set(key, crm);
  const refundedAccounts = int(random, 5, Math.min(60, crmRows.length));
  turns.push({
    user: `Sales ops sent this CRM export of our key accounts (export ${exportId}). Which of these accounts had paid refunds of more than 500 EUR in ${q3.label}?\n\n${crm.block}`,
    steps: [
      { needs: ["paste:crm:header", "paste:crm:last"], content: "Loading the export into a scratch table.", calls: [{ name: "load_csv", args: { table: SCRATCH_TABLE, csv: crmCsv } }] },
      query(
        "Joining the accounts with their refunds.",
        refunds,
        ["account_id", "refund_amount_eur", "refund_date", "refund_status"],
        `SELECT c.account_id, c.account_name, c.segment, COUNT(*) AS refunds, SUM(r.refund_amount_eur) AS refunded_eur\nFROM ${SCRATCH_TABLE} c\nJOIN finance.refunds r ON r.account_id = c.account_id\nWHERE r.refund_date BETWEEN '${q3.from}' AND '${q3.to}' AND r.refund_status = 'paid'\nGROUP BY 1, 2, 3\nHAVING SUM(r.refund_amount_eur) > 500\nORDER BY refunded_eur DESC;`,
        { header: ["account_id", "account_name", "segment", "refunds", "refunded_eur"], kinds: [crmRows.map((row) => row[0]!), crmRows.map((row) => row[1]!), SEGMENTS, "SMALLINT", "NUMERIC(18,2)"], fixed: [], generated: refundedAccounts },
        [],
        ["paste:crm:header"],
      ).step,
      answer(`${refundedAccounts} of the ${crmRows.length} key accounts had paid refunds over 500 EUR in ${q3.label}; the list is above, largest first.`),
    ],
  });

  // 6. Q4 revenue, compared with the Q3 figure found five turns before; a chart of both.
  const revenueQ4 = revenue(q4);
  const compareTitle = `Net revenue per region, ${q3.label} against ${q4.label}`;
  const compareChart = fact("CH", "tool", "chart id");
  charts.set(compareTitle, compareChart);
  const both = [...revenueQ3.keys, ...revenueQ4.keys];
  turns.push({
    user: `${q4.label} is closed now. Same net revenue per region for ${q4.label}, please, and compare it with the ${q3.label} figure you found for ${focus}. Put both quarters in one chart.`,
    steps: [
      revenueQ4.step,
      {
        needs: both,
        content: "Saving the comparison chart.",
        calls: [
          {
            name: "save_chart",
            args: {
              title: compareTitle,
              spec: chartSpec(random, compareTitle, [{ name: "region", type: "nominal" }, { name: "net_revenue_eur", type: "quantitative" }, { name: "quarter", type: "nominal" }], [q3, q4].flatMap((q) => REGIONS.map((region) => ({ region, quarter: q.label, net_revenue_eur: Number(figures.get(revenueKey(q, region))!.value) })))),
            },
          },
        ],
      },
      answer(`${focus}: ${revenueQ4.value(focus)} EUR in ${q4.label} against ${revenueQ3.value(focus)} EUR in ${q3.label} (results ${revenueQ4.resultId} and ${revenueQ3.resultId}). ${revenueLine(q4, revenueQ4)} The chart is saved as ${compareChart}.`, [revenueKey(q3, focus), revenueKey(q4, focus)]),
    ],
  });
  question(`What's the id of the first chart you saved, the ${q3.label} one? I want to embed it in the deck.`, q3Chart, "tool");

  // 7. Traffic: sessions and conversion per region and quarter, and the focus region by device.
  const sessionKeys = [q3, q4].map((q) => `figure:sessions:${q.label}`);
  const sessionFixed = [q3, q4].flatMap((q, i) =>
    REGIONS.map((region) => [region, q.label, region === focus ? figure(sessionKeys[i]!, String(int(random, 10_000_000, 99_999_999))) : String(int(random, 1_000_000, 9_999_999)), `0.0${int(random, 100, 999)}`]),
  );
  const sessionFilter = otherColumn(sessions, SESSIONS_CORE);
  const conversion = query(
    "Counting sessions and conversion per region and quarter.",
    sessions,
    ["region", "session_date", "converted", "is_bot", sessionFilter.name],
    `SELECT region, to_char(session_date, 'YYYY-"Q"Q') AS quarter, COUNT(*) AS sessions, round(AVG(converted::int), 4) AS conversion_rate\nFROM web.sessions\nWHERE session_date BETWEEN '${q3.from}' AND '${q4.to}' AND NOT is_bot AND ${filterOn(sessionFilter)}\nGROUP BY 1, 2\nORDER BY 1, 2;`,
    { header: ["region", "quarter", "sessions", "conversion_rate"], kinds: [], fixed: sessionFixed, generated: 0 },
    sessionKeys,
  );
  const deviceWeeks = [...weeks(q3), ...weeks(q4)];
  turns.push({
    user: `Is the ${focus} change traffic-driven? Look at web.sessions: sessions and conversion per region for both quarters, and ${focus} by device week by week.`,
    steps: [
      describe(sessions),
      sample(sessions, SESSIONS_CORE, "session_date", q4),
      conversion.step,
      query(
        `Breaking ${focus} down by device and week.`,
        sessions,
        ["region", "device_type", "session_date", "pageviews", "converted", "is_bot"],
        `SELECT device_type, date_trunc('week', session_date)::date AS week, COUNT(*) AS sessions, AVG(pageviews) AS pageviews, round(AVG(converted::int), 4) AS conversion_rate\nFROM web.sessions\nWHERE region = '${focus}' AND session_date BETWEEN '${q3.from}' AND '${q4.to}' AND NOT is_bot\nGROUP BY 1, 2\nORDER BY 1, 2;`,
        { header: ["device_type", "week", "sessions", "pageviews", "conversion_rate"], kinds: [DEVICES, deviceWeeks, "INTEGER", "NUMERIC(9,4)", "NUMERIC(9,4)"], fixed: [], generated: DEVICES.length * deviceWeeks.length },
      ).step,
      answer(
        `${focus} had ${figures.get(sessionKeys[0]!)!.value} sessions in ${q3.label} and ${figures.get(sessionKeys[1]!)!.value} in ${q4.label} (result ${conversion.resultId}), while revenue went from ${revenueQ3.value(focus)} to ${revenueQ4.value(focus)} EUR.`,
        [...sessionKeys, revenueKey(q3, focus), revenueKey(q4, focus)],
      ),
    ],
  });

  // 8. Q4 against the targets pasted six turns before.
  turns.push({
    user: `And ${q4.label} against the targets I pasted earlier?`,
    steps: [againstTargets(q4, revenueQ4), answer(`Against the same targets, ${q4.label} attainment per region is in the table above.`)],
  });
  question("What was the export id of the CRM extract I pasted?", exportId, "user");

  // 9. The report: every figure of the session, the targets of the focus region, the load incident.
  const reportId = fact("RP", "tool", "report id");
  const reportTitle = `${q3.label}/${q4.label} business review`;
  const focusBudget = budgetRows.filter((row) => row[0] === focus && [...q3.months, ...q4.months].includes(row[1]!));
  const markdown = [
    `# ${reportTitle}`,
    prose(random, int(random, 600, 1_200)),
    "## Revenue against target",
    "| region | " + [q3, q4].map((q) => `${q.label} net revenue (EUR)`).join(" | ") + " |",
    "|---|---:|---:|",
    ...REGIONS.map((region) => `| ${region} | ${revenueQ3.value(region)} | ${revenueQ4.value(region)} |`),
    `Sources: results ${revenueQ3.resultId} and ${revenueQ4.resultId}. ${focus}'s monthly targets (budget version as pasted):`,
    ...focusBudget.map((row) => `- ${row[1]}: ${row[2]} EUR, ${row[3]} orders`),
    prose(random, int(random, 500, 1_000)),
    "## Refunds",
    ...REGIONS.map((region) => `- ${region}: ${refundValue(region)} EUR paid back in ${q3.label}`),
    `Source: result ${refundsByRegion.resultId}. ${prose(random, int(random, 400, 900))}`,
    "## Data incident",
    ...log.errorLines.map((line) => `> ${line}`),
    prose(random, int(random, 300, 700)),
    "## Traffic",
    `${focus}: ${figures.get(sessionKeys[0]!)!.value} sessions in ${q3.label}, ${figures.get(sessionKeys[1]!)!.value} in ${q4.label} (result ${conversion.resultId}). ${prose(random, int(random, 400, 900))}`,
  ].join("\n\n");
  turns.push({
    user: `Great. Please write it all up as a report for Monday's review: revenue against target for both quarters, refunds, the load incident and the traffic picture. ${sentence(random, int(random, 6, 12))}`,
    steps: [
      {
        needs: [...both, ...refundKeys, ...sessionKeys, ...errorKeys, ...focusBudget.map((row) => budgetKey(row[0]!, row[1]!))],
        content: "Writing the report.",
        calls: [{ name: "write_report", args: { title: reportTitle, markdown } }],
      },
      answer(`The report "${reportTitle}" is published as ${reportId}.`),
    ],
  });
  question("Which budget version did I say finance signed off?", budgetVersion, "user");
  question(`For the appendix: which result id did the ${q3.label} refunds figure for ${focus} come from?`, refundsByRegion.resultId, "tool");
  return finish();

  function finish(): Workload {
    return {
      key: "analyst",
      title: "Data analyst agent",
      seed,
      contextWindow: 24_000,
      systemPrompt: SYSTEM_PROMPT,
      tools: [
        { name: "describe_table", description: "Print a table's definition: every column with its type, nullability and comment.", schema: z.object({ table: z.string().describe("schema.table") }) },
        { name: "run_sql", description: "Run one SQL query (PostgreSQL dialect) and print its result with its result id.", schema: z.object({ query: z.string().describe("The SQL query") }) },
        {
          name: "load_csv",
          description: "Load CSV data (with a header line) into a scratch table, replacing it.",
          schema: z.object({ table: z.string().describe("scratch.<name>"), csv: z.string().describe("The CSV text, header first") }),
        },
        {
          name: "save_chart",
          description: "Save a chart to the BI tool and return its id and link.",
          schema: z.object({ title: z.string(), spec: z.string().describe("The Vega-Lite spec as JSON, data inline") }),
        },
        { name: "write_report", description: "Publish a Markdown report to the team's wiki.", schema: z.object({ title: z.string(), markdown: z.string().describe("The whole report") }) },
      ],
      turns,
      facts,
      createWorld: () => analystWorld(seed, { tables, queries, figures, pastes, charts, reportId: facts.find((f) => f.label === "report id")?.id ?? "" }),
    };
  }
}

/** What the warehouse, the BI tool and the wiki hold for one run. */
interface AnalystWorldData {
  tables: ReadonlyMap<string, TableSchema>;
  queries: ReadonlyMap<string, PlannedQuery>;
  figures: ReadonlyMap<string, Figure>;
  pastes: ReadonlyMap<string, Paste>;
  charts: ReadonlyMap<string, string>;
  reportId: string;
}

function analystWorld(seed: number, data: AnalystWorldData): World {
  const loaded = new Set<string>();
  return {
    beginTurn() {},
    run(name, args) {
      switch (name) {
        case "describe_table": {
          const table = data.tables.get(String(args.table));
          return table === undefined ? `ERROR: relation "${String(args.table)}" does not exist` : tableDefinition(table);
        }
        case "run_sql": {
          const sql = String(args.query);
          if (sql.includes(SCRATCH_TABLE) && !loaded.has(SCRATCH_TABLE)) return `ERROR: relation "${SCRATCH_TABLE}" does not exist`;
          const planned = data.queries.get(sql);
          // The warehouse's result cache: the same query text gets the same result and result id.
          return planned === undefined ? "ERROR: the query matches no table of this warehouse" : resultTable(randomFor(seed, "sql", sql), planned.shape, planned.resultId);
        }
        case "load_csv": {
          const table = String(args.table);
          const lines = String(args.csv).split("\n");
          loaded.add(table);
          return `COPY ${lines.length - 1}\nLoaded ${lines.length - 1} rows into ${table} (columns: ${lines[0]}).`;
        }
        case "save_chart": {
          const id = data.charts.get(String(args.title));
          return id === undefined ? "error: the chart could not be saved" : `Saved chart "${String(args.title)}" as ${id}: https://bi.example.internal/charts/${id}`;
        }
        case "write_report":
          return `Published "${String(args.title)}" as ${data.reportId} (${String(args.markdown).length} characters): https://wiki.example.internal/reports/${data.reportId}`;
        default:
          return `error: unknown tool ${name}`;
      }
    },
    info(key): InfoView {
      if (key.startsWith("column:")) {
        const [, tableName, columnName] = key.split(":");
        const table = data.tables.get(tableName!)!;
        const definition = table.columns.find((c) => c.name === columnName)!;
        const call: ToolCallSpec = { name: "describe_table", args: { table: table.name }, provides: table.columns.map((c) => `column:${table.name}:${c.name}`) };
        return { marker: columnDefinition(definition), refetch: { kind: "tool", call } };
      }
      const figure = data.figures.get(key);
      if (figure !== undefined) {
        return { marker: figure.value, refetch: { kind: "tool", call: { name: "run_sql", args: { query: figure.sql }, provides: data.queries.get(figure.sql)!.figures } } };
      }
      const paste = data.pastes.get(key);
      if (paste !== undefined) {
        return { marker: paste.lines.get(key)!, refetch: { kind: "ask", ask: `I no longer have the ${paste.label} you pasted in front of me; could you paste it again?`, restatement: `Here it is again:\n\n${paste.block}` } };
      }
      throw new RangeError(`analyst workload: no information ${key}`);
    },
  };
}
