/**
 * The research agent: for each topic the user gives, it runs rounds of 2-4
 * parallel `web_search` calls (results of 2-8 KB), fetches two pages, then
 * writes a report section by section (`write_section`). Each section cites
 * specific earlier results (their key-finding lines); before writing it the
 * model checks that each is in view and searches again (or reads the
 * offloaded copy back) for any that is not. The introduction carries a
 * project code the user gave once, at the start; when it is out of view the
 * model asks the user for it. From the second topic on, a comparison
 * section cites results of the topic before. After each topic the user asks
 * which source backed a finding.
 */
import { z } from "zod/v4";
import { factPlanter } from "../facts";
import { findingLine, int, logUniform, pick, prose, randomFor, searchResults, seededRandom, sentence, shuffled, webPage } from "../text";
import type { Finding, Random } from "../text";
import type { InfoView, PlanStep, UserTurn, Workload, WorkloadOptions, World } from "../workload";

const TOPICS = [
  "heat pump adoption in cold climates",
  "battery recycling economics",
  "urban freight consolidation",
  "open-source maintainer funding",
  "hospital readmission prediction",
  "coastal flood insurance pricing",
];
const ASPECTS = ["costs", "adoption", "regulation", "performance", "risks", "labour", "supply chains", "public opinion"];
const QUALIFIERS = ["2024 data", "meta-analysis", "case study", "survey", "forecast", "field trial", "statistics", "review"];

interface Source {
  key: string;
  finding: Finding;
  /** Size of the search result or page, in bytes. */
  bytes: number;
}

const SYSTEM_PROMPT = [
  "You are a research agent. Use web_search (several queries at once when useful) and fetch_page to gather evidence, then write the",
  "report the user asks for one section at a time with write_section. Every claim in a section must cite the key finding it rests on,",
  "with its source id in brackets. If a result you need is no longer in front of you, search for it again rather than guessing.",
  prose(seededRandom(11), 1_200),
].join("\n");

function claim(random: Random, aspect: string): string {
  return `${aspect} ${sentence(random, int(random, 4, 9)).slice(0, -1).toLowerCase()} by ${int(random, 2, 80)}.${int(random, 0, 9)}% between ${int(random, 2012, 2018)} and ${int(random, 2020, 2025)}`;
}

/** The research workload of `seed`: 4 topics (1 with `quick`), each followed by a question. */
export function researchWorkload(seed: number, options: WorkloadOptions = {}): Workload {
  const topics = options.quick ? 1 : 4;
  const random = seededRandom(seed * 6007 + 3);
  const { facts, fact } = factPlanter(random);
  const sources = new Map<string, Source>(); // by info key: `search:<query>` or `page:<url>`
  const project = fact("PJ", "user", "project code");
  const reviewer = fact("RV", "user", "reviewer");
  const topicNames = shuffled(random, TOPICS).slice(0, topics);
  const turns: UserTurn[] = [];
  const perTopic: Source[][] = [];

  topicNames.forEach((topic, t) => {
    const aspects = shuffled(random, ASPECTS).slice(0, 3);
    const found: Source[] = [];
    const steps: PlanStep[] = [];
    // Five rounds of 2 to 4 parallel searches.
    for (let round = 0; round < 5; round += 1) {
      const width = int(random, 2, 4);
      const calls = [];
      for (let q = 0; q < width; q += 1) {
        const aspect = aspects[(round + q) % aspects.length]!;
        const query = `${topic} ${aspect} ${pick(random, QUALIFIERS)} ${int(random, 2, 99)}`;
        const source: Source = { key: `search:${query}`, finding: { id: fact("SR", "tool", "source id"), claim: claim(random, aspect) }, bytes: logUniform(random, 2_000, 8_000) };
        sources.set(source.key, source);
        found.push(source);
        calls.push({ name: "web_search", args: { query }, provides: [source.key] });
      }
      steps.push({ needs: [], content: round === 0 ? `Searching for evidence on ${topic}.` : "Searching further.", calls });
    }
    // Two pages read in full.
    const pages: Source[] = [0, 1].map((n) => {
      const url = `https://${topic.split(" ")[0]}-${aspects[n]!.replace(" ", "-")}.example.org/report-${int(random, 100, 999)}`;
      const page: Source = { key: `page:${url}`, finding: { id: fact("PG", "tool", "page finding"), claim: claim(random, aspects[n]!) }, bytes: logUniform(random, 6_000, 15_000) };
      sources.set(page.key, page);
      return page;
    });
    found.push(...pages);
    steps.push({ needs: [], content: "Reading the two most detailed reports.", calls: pages.map((page) => ({ name: "fetch_page", args: { url: page.key.slice(5) }, provides: [page.key] })) });
    perTopic.push(found);

    // Sections, each citing specific results of this topic (the comparison, results of the topic before).
    const pickSources = (from: readonly Source[], count: number) => shuffled(random, from).slice(0, count);
    const sections: { title: string; cites: Source[]; project: boolean }[] = [
      { title: "Introduction", cites: pickSources(found, 2), project: true },
      ...aspects.map((aspect) => ({ title: aspect.charAt(0).toUpperCase() + aspect.slice(1), cites: pickSources(found.filter((s) => s.finding.claim.startsWith(aspect)), int(random, 2, 3)), project: false })),
      t === 0
        ? { title: "Conclusion", cites: pickSources(found, 3), project: false }
        : { title: `Comparison with ${topicNames[t - 1]}`, cites: [...pickSources(found, 1), ...pickSources(perTopic[t - 1]!, 2)], project: false },
    ];
    for (const section of sections) {
      const text = [
        `## ${section.title}`,
        ...(section.project ? [`Project ${project}.`] : []),
        prose(random, int(random, 600, 1_400)),
        ...section.cites.map((source) => `According to ${findingLine(source.finding).replace("Key finding ", "")}.`),
      ].join("\n");
      steps.push({
        needs: [...(section.project ? ["user:project"] : []), ...section.cites.map((source) => source.key)],
        content: `Writing the section "${section.title}".`,
        calls: [{ name: "write_section", args: { title: section.title, text } }],
      });
    }
    steps.push({ needs: [], content: `The report on ${topic} is written: ${sections.length} sections. ${prose(random, int(random, 200, 600))}`, calls: [] });
    const user = [
      `Please research ${topic} and write a short report with an introduction, a section on each of ${aspects.join(", ")}, and ${t === 0 ? "a conclusion" : `a comparison with ${topicNames[t - 1]}`}.`,
      ...(t === 0 ? [`Put our project code ${project} at the top of every introduction. The reviewer for these reports is ${reviewer}.`] : []),
    ].join("\n");
    turns.push({ user, steps });

    // A question after each topic: which source backed a finding (this topic's, then older ones).
    const pool = t % 2 === 0 ? found : perTopic[Math.max(0, t - 1)]!;
    const asked = pool[int(random, 0, pool.length - 1)]!;
    turns.push({
      user: `Quick check before we go on: what is the source id of the finding that ${asked.finding.claim}?`,
      question: { fact: asked.finding.id, source: "tool" },
      steps: [{ needs: [], content: "", calls: [] }],
    });
  });
  turns.push({ user: "Last thing: who did I say the reviewer for these reports is?", question: { fact: reviewer, source: "user" }, steps: [{ needs: [], content: "", calls: [] }] });

  return {
    key: "research",
    title: "Research agent",
    seed,
    contextWindow: 32_000,
    systemPrompt: SYSTEM_PROMPT,
    tools: [
      { name: "web_search", description: "Search the web; returns the top results with snippets.", schema: z.object({ query: z.string().describe("The search query") }) },
      { name: "fetch_page", description: "Fetch a web page and return its text.", schema: z.object({ url: z.string().describe("The page's URL") }) },
      { name: "write_section", description: "Append a section to the report being written.", schema: z.object({ title: z.string(), text: z.string().describe("The section in Markdown") }) },
    ],
    turns,
    facts,
    createWorld: () => researchWorld(seed, sources, project),
  };
}

function researchWorld(seed: number, sources: ReadonlyMap<string, Source>, project: string): World {
  const written: string[] = [];
  return {
    beginTurn() {},
    run(name, args) {
      switch (name) {
        case "web_search": {
          const query = String(args.query);
          const source = sources.get(`search:${query}`);
          const random = randomFor(seed, "search", query);
          const finding = source?.finding ?? { id: "", claim: "nothing specific was found" };
          return searchResults(random, query, source?.bytes ?? 1_500, finding);
        }
        case "fetch_page": {
          const url = String(args.url);
          const source = sources.get(`page:${url}`);
          const random = randomFor(seed, "page", url);
          return webPage(random, url, source?.bytes ?? 3_000, source?.finding ?? { id: "", claim: "the page holds no data" });
        }
        case "write_section":
          written.push(String(args.title));
          return `Section "${String(args.title)}" saved (${written.length} sections so far).`;
        default:
          return `error: unknown tool ${name}`;
      }
    },
    info(key): InfoView {
      if (key === "user:project") {
        return { marker: project, refetch: { kind: "ask", ask: "Which project code should go at the top of the introduction?", restatement: `It is ${project}, the same as before.` } };
      }
      const source = sources.get(key);
      if (source === undefined) throw new RangeError(`research workload: no information ${key}`);
      const call = key.startsWith("search:")
        ? { name: "web_search", args: { query: key.slice(7) }, provides: [key] }
        : { name: "fetch_page", args: { url: key.slice(5) }, provides: [key] };
      return { marker: source.finding.id, refetch: { kind: "tool", call } };
    },
  };
}
