/**
 * How the channel test finds a planted value or an injection in what came out of the package.
 *
 * A value leaks, as in test/text/gate.test.ts, when the output holds it verbatim (normalized,
 * lower case), on the confusables skeleton, with only its digits masked (unless that is the
 * value's own masked shape, `ORD-######`, which the ledger keeps by design), or by any run of five
 * letters of it that is no common word. Sinks are large (a SQLite file is megabytes), so all
 * planted strings of a channel are searched in one pass with an Aho-Corasick automaton over the
 * normalized text and one over its skeleton.
 *
 * An injection reaches an output when the output holds three consecutive words of the case's
 * skeleton, two of them the payload's, that no benign text has (the hosts the corpus wraps
 * payloads in, the tools' cards, the package's own note templates), or when the gate's own check
 * finds text aimed at the model in it.
 */
import { normalizeText, skeleton, skeletonOfNormalized } from "../../src/text/normalize.js";
import { findAimedAtModel } from "../../src/text/injection.js";
import { shapeOf } from "../../src/text/mask.js";
import { commonWords } from "../../src/text/vocabulary.js";
import { WORD_TOKEN } from "../../src/text/free-text.js";
import type { CorpusCase } from "./corpus.js";

/** Letter runs of a planted value that are part of a format the output may name (as gate.test.ts). */
const FORMAT_WORDS = new Set([
  "github",
  "bearer",
  "begin",
  "private",
  "proj",
  "admin",
  "xoxb",
  "xoxp",
  "glpat",
  "postgres",
  "https",
  "mailbox",
  "inbox",
]);

/** Which planted strings a sink is checked for. */
export type PlantedScope = "value" | "wording";

/** A string a case planted, that must not come out. */
export interface Planted {
  caseId: string;
  text: string;
  /** `value`: never anywhere; `wording`: a private word of the user's own wording, never in a lesson or a prompt. */
  scope: PlantedScope;
}

/** A planted string found in a sink. */
export interface ValueHit {
  caseId: string;
  planted: string;
  scope: PlantedScope;
  /** `verbatim`, `skeleton`, `digits masked only` or `letters "…"`. */
  how: string;
  /** Where, in the sink's normalized text (or its skeleton). */
  at: number;
  excerpt: string;
}

/** Every value and private word the cases planted. */
export function plantedOf(cases: readonly CorpusCase[]): Planted[] {
  return cases.flatMap((c) => [
    ...(c.values ?? []).map((text) => ({ caseId: c.id, text, scope: "value" as const })),
    ...(c.wording ?? []).map((text) => ({ caseId: c.id, text, scope: "wording" as const })),
  ]);
}

/** Planted values only: what no stored row and no log line may hold. */
export const VALUES: ReadonlySet<PlantedScope> = new Set(["value"]);
/** Values and the user's private wording: what no lesson, routing text or prompt may hold. */
export const VALUES_AND_WORDING: ReadonlySet<PlantedScope> = new Set(["value", "wording"]);

// ---------------------------------------------------------------- Aho-Corasick

/** Many patterns searched in one pass over a text (UTF-16 code units). */
class Automaton {
  private readonly next: Map<number, number>[] = [new Map()];
  private readonly fail: number[] = [0];
  /** Patterns ending at a node. */
  private readonly out: number[][] = [[]];
  /** Nearest node on the failure chain with an output (−1: none). */
  private readonly dict: number[] = [-1];
  private built = false;
  readonly lengths: number[] = [];

  add(pattern: string): number {
    const id = this.lengths.length;
    this.lengths.push(pattern.length);
    let node = 0;
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern.charCodeAt(i);
      let to = this.next[node].get(c);
      if (to === undefined) {
        to = this.next.length;
        this.next.push(new Map());
        this.fail.push(0);
        this.out.push([]);
        this.dict.push(-1);
        this.next[node].set(c, to);
      }
      node = to;
    }
    this.out[node].push(id);
    return id;
  }

  private build(): void {
    const queue: number[] = [];
    for (const to of this.next[0].values()) queue.push(to);
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head];
      for (const [c, to] of this.next[node]) {
        let f = this.fail[node];
        while (f !== 0 && !this.next[f].has(c)) f = this.fail[f];
        const target = this.next[f].get(c);
        this.fail[to] = target !== undefined && target !== to ? target : 0;
        this.dict[to] = this.out[this.fail[to]].length > 0 ? this.fail[to] : this.dict[this.fail[to]];
        queue.push(to);
      }
    }
    this.built = true;
  }

  /** Calls `hit(pattern, end)` for every occurrence (end exclusive). */
  scan(text: string, hit: (pattern: number, end: number) => void): void {
    if (!this.built) this.build();
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      let to = this.next[node].get(c);
      while (to === undefined && node !== 0) {
        node = this.fail[node];
        to = this.next[node].get(c);
      }
      node = to ?? 0;
      for (const p of this.out[node]) hit(p, i + 1);
      for (let d = this.dict[node]; d !== -1; d = this.dict[d]) for (const p of this.out[d]) hit(p, i + 1);
    }
  }
}

interface Pattern {
  planted: Planted;
  how: string;
  /** A number-only value must not be part of a longer number (timestamps, ids, latencies). */
  digitBounded: boolean;
}

/**
 * The runs of five or more letters of a planted value's skeleton that give it away: no common
 * word, no format word, and not made of hex letters only (those would match the ledger's own hex
 * fingerprints and ids by chance).
 */
export function letterRuns(planted: string, common: ReadonlySet<string> = commonWords()): string[] {
  return [...new Set(skeleton(planted).match(/[a-z]{5,}/g) ?? [])].filter(
    (run) => !common.has(run) && !FORMAT_WORDS.has(run) && !/^[a-f]+$/.test(run),
  );
}

/** How a whole value found on the skeleton (and not verbatim) is reported. */
const SKELETON = "skeleton";

const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= "0" && ch <= "9";

/**
 * Finds planted strings in sink texts. Built once per channel (its cases' planted strings), used
 * for every sink.
 */
export class ValueFinder {
  private readonly onText = new Automaton();
  private readonly onSkeleton = new Automaton();
  private readonly textPatterns: Pattern[] = [];
  private readonly skeletonPatterns: Pattern[] = [];

  constructor(planted: readonly Planted[]) {
    const common = commonWords();
    for (const item of planted) {
      const p = normalizeText(item.text).toLowerCase();
      const ps = skeleton(item.text);
      const digitBounded = !/\p{L}/u.test(ps);
      const addText = (pattern: string, how: string): void => {
        this.onText.add(pattern);
        this.textPatterns.push({ planted: item, how, digitBounded });
      };
      const addSkeleton = (pattern: string, how: string, bounded = digitBounded): void => {
        this.onSkeleton.add(pattern);
        this.skeletonPatterns.push({ planted: item, how, digitBounded: bounded });
      };
      if (p.length >= 3) addText(p, "verbatim");
      // Also where the whole value stands on the skeleton: a letter run of another case inside it is no leak of theirs.
      if (ps.length >= 3) addSkeleton(ps, SKELETON);
      const digitsMasked = ps.replace(/\d/g, "#");
      // The value's own masked shape (`ORD-######`, `DE####…`) is the format the ledger keeps by design.
      const ownShape = skeleton(shapeOf(item.text));
      if (/[a-z]/.test(ps) && /\d/.test(ps) && digitsMasked.length >= 6 && digitsMasked !== ownShape)
        addSkeleton(digitsMasked, "digits masked only");
      for (const run of letterRuns(item.text, common)) addSkeleton(run, `letters "${run}"`, false);
    }
  }

  /**
   * Every (case, planted string) found in `sink`, once each, for the scopes asked.
   * @param sink the text of a sink (a file's bytes decoded, rows joined, lines joined)
   */
  find(sink: string, scopes: ReadonlySet<PlantedScope>): ValueHit[] {
    const normalized = hideLedgerIds(hideWordTokens(normalizeText(sink)));
    const out = normalized.toLowerCase();
    const skel = skeletonByRuns(normalized);
    const found = new Map<string, ValueHit>();
    const hit = (pattern: Pattern, text: string, start: number, end: number): void => {
      const key = `${pattern.planted.caseId}\u0000${pattern.planted.text}`;
      if (found.has(key)) return;
      found.set(key, {
        caseId: pattern.planted.caseId,
        planted: pattern.planted.text,
        scope: pattern.planted.scope,
        how: pattern.how,
        at: start,
        excerpt: excerpt(text, start, end),
      });
    };
    const wanted = (pattern: Pattern, text: string, start: number, end: number): boolean =>
      scopes.has(pattern.planted.scope) && !(pattern.digitBounded && (isDigit(text[start - 1]) || isDigit(text[end])));
    this.onText.scan(out, (id, end) => {
      const pattern = this.textPatterns[id];
      const start = end - this.onText.lengths[id];
      if (wanted(pattern, out, start, end)) hit(pattern, out, start, end);
    });
    // Letter runs last: one inside the whole value of another case is that case's, not theirs.
    const spans: { start: number; end: number; caseId: string }[] = [];
    const runs: { pattern: Pattern; start: number; end: number }[] = [];
    this.onSkeleton.scan(skel, (id, end) => {
      const pattern = this.skeletonPatterns[id];
      const start = end - this.onSkeleton.lengths[id];
      if (!wanted(pattern, skel, start, end)) return;
      if (pattern.how === SKELETON) spans.push({ start, end, caseId: pattern.planted.caseId });
      if (pattern.how.startsWith("letters")) runs.push({ pattern, start, end });
      else hit(pattern, skel, start, end);
    });
    for (const run of runs) {
      const inside = spans.some(
        (s) => s.caseId !== run.pattern.planted.caseId && s.start <= run.start && run.end <= s.end,
      );
      if (!inside) hit(run.pattern, skel, run.start, run.end);
    }
    return [...found.values()];
  }
}

/**
 * A sink's text with each word token's hash letters blanked (same length, so positions hold): a
 * token is a keyed hash, not the word, and its twelve letters match a five-letter run of some
 * planted value by chance, as the ledger's hex ids would (those runs are skipped in
 * {@link letterRuns}). Text outside tokens is searched as it is.
 */
export function hideWordTokens(text: string): string {
  return text.replace(WORD_TOKEN, (token) => `<w:${"_".repeat(token.length - 4)}>`);
}

/**
 * The ledger's own ids (`timeOrderedId`: 9 base-36 characters of the time, 4 of a sequence, 10
 * hex) blanked, same length: the time part is letters too, and spells a five-letter run of some
 * planted value by chance (a revision id "0mx7vbydn…" against a key holding "Vbydn").
 */
export function hideLedgerIds(text: string): string {
  return text.replace(LEDGER_ID, (id) => "_".repeat(id.length));
}

const LEDGER_ID = /(?<![0-9a-z])0[0-9a-z]{12}[0-9a-f]{10}(?![0-9a-z])/g;

/**
 * The skeleton of a normalized text, taken run by run of non-ASCII characters (an ASCII
 * character's skeleton is itself in lower case): the same text as `skeleton`, in a fraction of
 * the time on megabytes of mostly ASCII store bytes.
 */
function skeletonByRuns(normalized: string): string {
  return normalized.replace(/[^\x00-\x7f]+/g, (run) => skeletonOfNormalized(run)).toLowerCase();
}

/** Up to 60 characters either side of a hit, on one line, control characters shown as `·`. */
export function excerpt(text: string, start: number, end: number): string {
  const from = Math.max(0, start - 60);
  const to = Math.min(text.length, end + 60);
  return `${from > 0 ? "…" : ""}${text.slice(from, to)}${to < text.length ? "…" : ""}`
    .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]+/g, "·")
    .replace(/\s+/g, " ");
}

// ---------------------------------------------------------------- injections

/** Words (letters only: digits are masked on the way) of a text's skeleton. */
function words(text: string): string[] {
  return skeleton(text).match(/\p{L}+/gu) ?? [];
}

function windows(list: readonly string[], size = 3): string[] {
  if (list.length === 0) return [];
  if (list.length <= size) return [list.join(" ")];
  const out: string[] = [];
  for (let i = 0; i + size <= list.length; i++) out.push(list.slice(i, i + size).join(" "));
  return out;
}

/** An injection found in one output item. */
export interface InjectionHit {
  /** Cases whose distinctive words the item holds, best match first (empty: only the gate's check fired). */
  caseIds: string[];
  /** Per case, how many of its word windows the item holds. */
  windows: Map<string, number>;
  /** A window of words that matched, if any. */
  window?: string;
  /** The label the gate's own check gives the item, if any. */
  aimed?: string;
}

/**
 * Finds the corpus's injections in lesson lines, routing texts and what the model is shown.
 * `benign`: texts whose word windows are never an injection (hosts, cards, templates); the texts
 * of the cases that are no injection count as benign too.
 */
export class InjectionFinder {
  private readonly byWindow = new Map<string, string[]>();

  constructor(cases: readonly CorpusCase[], benign: readonly string[]) {
    // The other cases' texts too: a near miss ("Call send_email after lookup_order succeeds")
    // shares words with a payload and is no injection.
    const others = cases.filter((c) => c.kind !== "injection").flatMap((c) => [c.text, ...(c.fields ?? [])]);
    const harmless = new Set([...benign, ...others].flatMap((text) => windows(words(text))));
    // A window must hold two words of the payload, not one word beside the host's ("order lookup failed never").
    const hostWords = new Set(benign.flatMap(words));
    const payloadWords = (w: string): number => w.split(" ").filter((word) => !hostWords.has(word)).length;
    for (const c of cases) {
      if (c.kind !== "injection") continue;
      for (const text of [c.text, ...(c.fields ?? [])]) {
        for (const w of windows(words(text))) {
          if (harmless.has(w) || payloadWords(w) < Math.min(2, w.split(" ").length)) continue;
          const ids = this.byWindow.get(w) ?? [];
          if (!ids.includes(c.id)) ids.push(c.id);
          this.byWindow.set(w, ids);
        }
      }
    }
  }

  /** The injection in `item`, or undefined when it holds none. */
  find(item: string): InjectionHit | undefined {
    const aimed = findAimedAtModel(item);
    const counts = new Map<string, number>();
    let window: string | undefined;
    for (const w of new Set(windows(words(item)))) {
      const hit = this.byWindow.get(w);
      if (!hit) continue;
      window ??= w;
      for (const id of hit) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    if (counts.size === 0 && aimed === undefined) return undefined;
    const caseIds = [...counts].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    return {
      caseIds,
      windows: counts,
      ...(window !== undefined ? { window } : {}),
      ...(aimed !== undefined ? { aimed } : {}),
    };
  }
}

/**
 * The cases an injection found in an item is put down to: the item's own cases (its tool's case,
 * its "Not for" pair's case) when their words are in it; else the cases with the most of their
 * word windows in it (payloads share phrases such as "call wire_money"); else, when only the
 * gate's check fired, the item's own cases.
 */
export function injectionOwners(hit: InjectionHit, owners: readonly string[]): string[] {
  const own = owners.filter((id) => hit.windows.has(id));
  if (own.length > 0) return own;
  if (hit.caseIds.length > 0) {
    const best = hit.windows.get(hit.caseIds[0])!;
    return hit.caseIds.filter((id) => hit.windows.get(id) === best);
  }
  return [...owners];
}
