/**
 * The hostile corpus as the channel test reads it: every case of
 * test/fixtures/hostile-corpus.jsonl, its arguments revived (`{"$bigint": "…"}` → a BigInt), and
 * what must never come out of the package for it.
 */
import { readFileSync } from "node:fs";
import { normalizeText, skeleton } from "../../src/text/normalize.js";
import { letterRuns } from "./leaks.js";
import { type CorpusCase } from "../fixtures/make-hostile-corpus.js";

export type { CorpusCase } from "../fixtures/make-hostile-corpus.js";
export { CORPUS_CARD_WORDS, CORPUS_TOOL_NAMES } from "../fixtures/make-hostile-corpus.js";

/** JSON as the corpus writes it, BigInts revived. */
export function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.$bigint === "string" && Object.keys(record).length === 1) return BigInt(record.$bigint);
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, revive(v)]));
  }
  return value;
}

/** Every case of the fixture, in file order. */
export function loadCorpus(): CorpusCase[] {
  return readFileSync(new URL("../fixtures/hostile-corpus.jsonl", import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CorpusCase);
}

/** The case's own tool-call arguments (the run's values), revived; `{}` when it has none. */
export function caseArgs(c: CorpusCase): Record<string, unknown> {
  return c.args === undefined ? {} : (revive(c.args) as Record<string, unknown>);
}

/**
 * What a channel that moves values around places as argument values: the planted values. A case
 * without any (private wording, an injection, a near miss) places none: its text still reaches
 * the package through the tool's error, and a sentence placed as a value would make each of its
 * words a value of the whole partition (the vet then refuses every lesson holding one).
 */
export function valuesToPlace(c: CorpusCase): string[] {
  return c.values ?? [];
}

/** Lower-case words of 3+ letters or digits in a text: what two cases must not share in one run. */
function tokensOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [];
}

/**
 * Split cases into runs of at most `size` such that no two cases of one run share a token of
 * their argument values or planted strings: one run's values mask every text of the run, so a
 * case must not be masked by a neighbour's values (a name planted as wording in one case and as
 * an argument in another would hide a leak).
 */
export function batchCases<T>(items: readonly T[], size: number, words: (item: T) => string[]): T[][] {
  const batches: { items: T[]; words: Set<string> }[] = [];
  for (const item of items) {
    const own = new Set(words(item).flatMap(tokensOf));
    let batch = batches.find((b) => b.items.length < size && ![...own].some((w) => b.words.has(w)));
    if (!batch) {
      batch = { items: [], words: new Set() };
      batches.push(batch);
    }
    batch.items.push(item);
    for (const w of own) batch.words.add(w);
  }
  return batches.map((b) => b.items);
}

/** Every string of a value, keys included, at any depth (for batching). */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "bigint" || typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

/** What a case plants, for batching: values, wording, and the strings of its arguments. */
export function plantedWords(c: CorpusCase): string[] {
  return [...(c.values ?? []), ...(c.wording ?? []), ...stringsOf(c.args ?? {}).filter((s) => !/^item \d+$/.test(s))];
}

/**
 * Split cases into groups, each to run in a store of its own, such that no planted value or
 * private word of a case occurs in another case of its group (in its text, fields, arguments,
 * wording or values).
 * The corpus plants some values twice on purpose (a key and its echo, a name spelled with
 * homoglyphs and with invisible characters), and a name can be both one case's argument and
 * another's wording: in one store a value found in the bytes could not be told apart.
 */
export function storeGroups(cases: readonly CorpusCase[]): CorpusCase[][] {
  const forms = (s: string): string[] => [normalizeText(s).toLowerCase(), skeleton(s)];
  const haystack = new Map(
    cases.map((c) => [
      c,
      forms(
        [c.text, ...(c.fields ?? []), ...(c.wording ?? []), ...(c.values ?? []), ...stringsOf(caseArgs(c))].join("\n"),
      ).join("\n"),
    ]),
  );
  const needles = new Map(
    cases.map((c) => [c, [...(c.values ?? []), ...(c.wording ?? [])].flatMap(forms).filter((v) => v.length >= 3)]),
  );
  // A run of letters of a value (a surname) may also be another case's private wording, which
  // the store may keep.
  const runs = new Map(cases.map((c) => [c, (c.values ?? []).flatMap((v) => letterRuns(v))]));
  const wording = new Map(cases.map((c) => [c, (c.wording ?? []).map((w) => skeleton(w)).join("\n")]));
  const oneWay = (a: CorpusCase, b: CorpusCase): boolean =>
    needles.get(a)!.some((v) => haystack.get(b)!.includes(v)) || runs.get(a)!.some((r) => wording.get(b)!.includes(r));
  const clash = (a: CorpusCase, b: CorpusCase): boolean => oneWay(a, b) || oneWay(b, a);
  const groups: CorpusCase[][] = [];
  for (const c of cases) {
    const group = groups.find((g) => !g.some((other) => clash(c, other)));
    if (group) group.push(c);
    else groups.push([c]);
  }
  return groups;
}
