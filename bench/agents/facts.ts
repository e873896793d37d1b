/**
 * Planted facts: unique identifiers an agent run needs later (an error
 * code, a source id, an order number). They share one format, which the
 * scripted summarizer recognises as worth keeping (as a real summarizer keeps
 * ids), and nothing else in the workloads matches it.
 */
import { int, randomString } from "../conversations";
import type { Random } from "../conversations";
import type { Fact } from "./workload";

/** Two capital letters, four digits, four capitals or digits: `EC-4821-QF7Z`. */
export const FACT_PATTERN = /\b[A-Z]{2}-\d{4}-[A-Z0-9]{4}\b/g;

const ID_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** Hands out identifiers that are unique within one workload. */
export class FactIds {
  private readonly used = new Set<string>();

  constructor(private readonly random: Random) {}

  /** A new identifier with the two-letter `prefix` (e.g. `"EC"` for an error code). */
  next(prefix: string): string {
    if (!/^[A-Z]{2}$/.test(prefix)) throw new RangeError(`a fact prefix is two capital letters, got ${JSON.stringify(prefix)}`);
    let id: string;
    do id = `${prefix}-${String(int(this.random, 0, 9999)).padStart(4, "0")}-${randomString(this.random, ID_ALPHABET, 4)}`;
    while (this.used.has(id));
    this.used.add(id);
    return id;
  }
}

/**
 * A workload's planted facts as it plants them: `fact(prefix, source, label)`
 * hands out a new identifier and records it in `facts`.
 */
export function factPlanter(random: Random): { facts: Fact[]; fact: (prefix: string, source: Fact["source"], label: string) => string } {
  const ids = new FactIds(random);
  const facts: Fact[] = [];
  const fact = (prefix: string, source: Fact["source"], label: string): string => {
    const id = ids.next(prefix);
    facts.push({ id, source, label });
    return id;
  };
  return { facts, fact };
}

/** The identifiers in `text`, in order of first appearance, each once. */
export function idsIn(text: string): string[] {
  return [...new Set(text.match(FACT_PATTERN) ?? [])];
}
