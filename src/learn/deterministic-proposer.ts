/**
 * The deterministic proposer: lessons written by code alone, so the whole learning loop runs
 * offline and in CI. Usage notes come from the error class and the masked shapes of refused and
 * accepted calls; example requests are the missed wordings themselves, ranked; "Not for" lines
 * name the words the confused requests share.
 *
 * It proposes what the vet would keep, but the vet still decides.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { intersects, isContentWord, splitWords, stem, tokenize } from "../text/tokenize.js";
import type { ArgShapeSummary, ConfusedRequest, FailureGroup, MissedRequest } from "./detect.js";
import { isSharedFormat } from "./example-call.js";
import type { Proposal, ProposedExample, ProposedNote, ProposedNotFor, Proposer, ToolEvidence } from "./proposer.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import { definedOnly, oneLine } from "../internal.js";

// ------------------------------------------------------------------ example requests

/** A missed wording proposed as an example request, with what it rests on. */
export interface ExampleCandidate {
  /** The missed request's text (already masked), whitespace collapsed. */
  text: string;
  /** Request ids it rests on: its own first, then the missed requests that share a word with it. */
  cites: string[];
  /** Higher is better. */
  score: number;
  /** Its tokens (stems) the current routing text lacks. */
  novelWords: string[];
}

/** Options of {@link rankExampleCandidates}. */
export interface RankExampleOptions {
  /**
   * Missed requests a candidate must rest on (itself included); fewer and it is dropped.
   * @default DEFAULT_SETTINGS.minMisses (2)
   */
  minMisses?: number;
  /**
   * Most candidates returned.
   * @default DEFAULT_SETTINGS.maxNewQueries (4)
   */
  limit?: number;
  /**
   * Weight of novelty (share of a candidate's tokens the routing text lacks) against
   * representativeness (mean token-set similarity to the other missed requests).
   * @default 0.5
   */
  noveltyWeight?: number;
  /**
   * Two candidates whose token sets have at least this Jaccard similarity are near-duplicates;
   * only the better one is kept. Also applied against `exclude`.
   * @default 0.8
   */
  duplicateThreshold?: number;
  /**
   * Longest candidate, in characters.
   * @default DEFAULT_SETTINGS.maxLineLength (220)
   */
  maxLength?: number;
  /**
   * Most request ids one candidate cites.
   * @default 8
   */
  maxCites?: number;
  /**
   * Most missed requests considered (the newest); bounds the quadratic similarity pass.
   * @default 100
   */
  maxCandidates?: number;
  /**
   * Texts the candidates must not repeat (e.g. the card's learned examples).
   * @default []
   */
  exclude?: readonly string[];
}

/** The defaults of {@link RankExampleOptions}. */
export const DEFAULT_RANK_EXAMPLE_OPTIONS: Required<RankExampleOptions> = Object.freeze({
  minMisses: DEFAULT_SETTINGS.minMisses,
  limit: DEFAULT_SETTINGS.maxNewQueries,
  noveltyWeight: 0.5,
  duplicateThreshold: 0.8,
  maxLength: DEFAULT_SETTINGS.maxLineLength,
  maxCites: 8,
  maxCandidates: 100,
  exclude: [],
});

/**
 * Rank a tool's missed requests as candidate example requests, best first.
 *
 * Each distinct wording (identical texts merged) is scored by
 * `meanSimilarity + noveltyWeight × novelty`: its mean token-set (Jaccard) similarity to the
 * tool's other missed requests, repeats of the same wording included (how representative it is), plus the share of its tokens that the
 * tool's current routing text lacks (what it would add). A candidate cites its own requests and
 * the other missed requests it shares a word with, most similar first; one resting on fewer than
 * `minMisses` requests is dropped. Near-duplicates of a better candidate or of an `exclude` text
 * are skipped.
 *
 * Pure and small on purpose: swap it to tune example choice.
 */
export function rankExampleCandidates(
  misses: readonly Pick<MissedRequest, "requestId" | "request">[],
  currentRoutingText: string,
  options: RankExampleOptions = {},
): ExampleCandidate[] {
  const o = { ...DEFAULT_RANK_EXAMPLE_OPTIONS, ...definedOnly(options) };
  const routing = new Set(tokenize(currentRoutingText));
  const considered = misses.slice(Math.max(0, misses.length - o.maxCandidates));

  // Distinct wordings, identical texts merged.
  const byText = new Map<string, { text: string; ids: string[]; tokens: Set<string> }>();
  const requests: { id: string; tokens: Set<string> }[] = [];
  for (const miss of considered) {
    const text = oneLine(miss.request);
    const tokens = new Set(tokenize(text));
    requests.push({ id: miss.requestId, tokens });
    if (tokens.size === 0 || text.length > o.maxLength) continue;
    const key = text.toLowerCase();
    const entry = byText.get(key);
    if (entry) entry.ids.push(miss.requestId);
    else byText.set(key, { text, ids: [miss.requestId], tokens });
  }

  const scored: (ExampleCandidate & { tokens: Set<string>; support: number })[] = [];
  for (const c of byText.values()) {
    // Similarity to every other missed request; a repeat of the same wording counts (as 1).
    const others = requests.filter((r) => r.id !== c.ids[0]);
    const sims = others.map((r) => ({
      id: r.id,
      sim: jaccard(c.tokens, r.tokens),
      shares: intersects(c.tokens, r.tokens),
    }));
    const mean = others.length === 0 ? 0 : sims.reduce((sum, s) => sum + s.sim, 0) / others.length;
    const own = new Set(c.ids);
    const supporters = sims
      .filter((s) => s.shares && !own.has(s.id))
      .sort((a, b) => b.sim - a.sim)
      .map((s) => s.id);
    const cites = [...c.ids, ...supporters].slice(0, Math.max(o.maxCites, o.minMisses));
    if (new Set(cites).size < o.minMisses) continue;
    const novelWords = [...c.tokens].filter((t) => !routing.has(t));
    const novelty = novelWords.length / c.tokens.size;
    scored.push({
      text: c.text,
      cites,
      score: mean + o.noveltyWeight * novelty,
      novelWords,
      tokens: c.tokens,
      support: c.ids.length + supporters.length,
    });
  }
  scored.sort((a, b) => b.score - a.score || b.support - a.support);

  const excluded = o.exclude.map((t) => new Set(tokenize(t)));
  const picked: typeof scored = [];
  for (const c of scored) {
    if (picked.length >= o.limit) break;
    const dup = (tokens: Set<string>): boolean => jaccard(c.tokens, tokens) >= o.duplicateThreshold;
    if (excluded.some(dup) || picked.some((p) => dup(p.tokens))) continue;
    picked.push(c);
  }
  return picked.map(({ text, cites, score, novelWords }) => ({ text, cites, score, novelWords }));
}

// ------------------------------------------------------------------ "Not for" phrase

/** Options of {@link sharedPhrase}. */
export interface SharedPhraseOptions {
  /**
   * Most words in the phrase.
   * @default 4
   */
  maxWords?: number;
  /**
   * Words that say nothing about the kind of request ("help", "want"); never used in a phrase.
   * @default GENERIC_REQUEST_WORDS
   */
  genericWords?: ReadonlySet<string>;
  /**
   * Stems never used in a phrase: the proposer passes the tokens of the tool's own routing text,
   * so a line never says "Not for" what the tool itself is described as doing.
   * @default empty
   */
  avoidStems?: ReadonlySet<string>;
}

/** Words common in any request that say nothing of its kind. Matched on the lowercased surface word. */
export const GENERIC_REQUEST_WORDS: ReadonlySet<string> = new Set([
  "want",
  "wanted",
  "need",
  "needs",
  "needed",
  "like",
  "help",
  "get",
  "got",
  "find",
  "know",
  "tell",
  "show",
  "give",
  "make",
  "look",
  "see",
  "use",
  "thanks",
  "thank",
  "hi",
  "hello",
  "hey",
  "ok",
  "okay",
  "yes",
  "yeah",
  "sure",
  "again",
  "try",
  "trying",
  "one",
  "thing",
  "things",
  "something",
  "anything",
  "today",
  "now",
  "right",
  "go",
  "going",
  "able",
  "way",
  "also",
]);

/**
 * The words a group of requests share, as a short phrase, and which requests it covers (shares
 * a word with). Words in every request come first; otherwise words are added greedily, each
 * covering the most requests not yet covered. Surface forms are the most frequent form of each
 * stem, in the order they first appear. Generic words, words with digits and `avoidStems` are
 * skipped.
 */
export function sharedPhrase(
  requests: readonly { id: string; request: string }[],
  options: SharedPhraseOptions = {},
): { phrase: string; covered: string[] } | null {
  const maxWords = options.maxWords ?? 4;
  const generic = options.genericWords ?? GENERIC_REQUEST_WORDS;
  const avoid = options.avoidStems;
  const stems = new Map<string, string>();
  const order = new Map<string, number>();
  const surface = new Map<string, Map<string, number>>();
  const docs = requests.map((r) => {
    const own = new Set<string>();
    for (const word of splitWords(r.request)) {
      if (!isContentWord(word) || generic.has(word) || /\d/.test(word)) continue;
      let s = stems.get(word);
      if (s === undefined) {
        s = stem(word);
        stems.set(word, s);
      }
      if (avoid?.has(s)) continue;
      own.add(s);
      if (!order.has(s)) order.set(s, order.size);
      const forms = surface.get(s) ?? new Map<string, number>();
      forms.set(word, (forms.get(word) ?? 0) + 1);
      surface.set(s, forms);
    }
    return { id: r.id, stems: own };
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const s of d.stems) df.set(s, (df.get(s) ?? 0) + 1);
  const byDf = [...df.keys()].sort(
    (a, b) => (df.get(b) ?? 0) - (df.get(a) ?? 0) || (order.get(a) ?? 0) - (order.get(b) ?? 0),
  );

  const chosen: string[] = byDf.filter((s) => df.get(s) === docs.length).slice(0, maxWords);
  const uncovered = new Set(docs.filter((d) => !chosen.some((s) => d.stems.has(s))).map((d) => d.id));
  while (uncovered.size > 0 && chosen.length < maxWords) {
    let best: string | undefined;
    let bestGain = 0;
    for (const s of byDf) {
      if (chosen.includes(s)) continue;
      let gain = 0;
      for (const d of docs) if (uncovered.has(d.id) && d.stems.has(s)) gain += 1;
      if (gain > bestGain) {
        best = s;
        bestGain = gain;
      }
    }
    if (best === undefined) break;
    chosen.push(best);
    for (const d of docs) if (d.stems.has(best)) uncovered.delete(d.id);
  }
  if (chosen.length === 0) return null;
  const words = chosen
    .sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
    .map((s) => [...(surface.get(s) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1])[0]?.[0] ?? s);
  const covered = docs.filter((d) => chosen.some((s) => d.stems.has(s))).map((d) => d.id);
  return { phrase: words.join(" "), covered };
}

// ------------------------------------------------------------------ usage notes

/**
 * One usage note for a group of failed calls, or `null` when nothing useful can be said.
 *
 * When an argument of the refused calls had a masked shape that differs from the one format all
 * successful calls shared, the note says which format works and which was refused:
 * `claim_ref must look like CW-######; calls with ###### were refused (validation).`
 * Otherwise it reports the error class and masked message with advice for that class.
 */
export function usageNote(
  group: FailureGroup,
  successShapes: readonly ArgShapeSummary[],
  maxLength: number = DEFAULT_SETTINGS.maxLineLength,
): string | null {
  const accepted = new Map(successShapes.map((s) => [s.name, s]));
  for (const refused of group.shapes) {
    const ok = accepted.get(refused.name);
    if (!ok || ok.shapes.length !== 1) continue;
    const format = ok.shapes[0].shape;
    const bad = refused.shapes[0]?.shape;
    if (bad === undefined || bad === format || !showable(format)) continue;
    const note = `${refused.name} must look like ${format}; calls with ${showable(bad) || isPlaceholderShape(bad) ? bad : "another format"} were refused (${group.errorClass}).`;
    if (note.length <= maxLength) return note;
  }

  const args = group.argNames.length > 0 ? group.argNames.join(", ") : "no arguments";
  const advice: Record<FailureGroup["errorClass"], string> = {
    validation: `Check ${args} against the schema before calling`,
    not_found: `Look up ${args} first; do not guess them`,
    permission: "Not allowed for this caller; do not retry",
    rate_limit: "Do not call it again in quick succession",
    timeout: "Ask for less in one call",
    upstream: "The service behind it failed; retry later rather than at once",
    unknown: `Check ${args} before calling`,
  };
  const head = `${advice[group.errorClass]}: ${group.callIds.length} calls failed (${group.errorClass})`;
  if (group.errorMessage.trim() === "") return fit(`${head}.`, maxLength);
  const budget = maxLength - head.length - ' with "".'.length;
  if (budget < 12) return fit(`${head}.`, maxLength);
  const message = oneLine(group.errorMessage).replace(/"/g, "'");
  const shown = message.length <= budget ? message : `${message.slice(0, budget - 1).trimEnd()}…`;
  return `${head} with "${shown}".`;
}

function showable(shape: string): boolean {
  return isPlaceholderShape(shape) || isSharedFormat(shape);
}

function isPlaceholderShape(shape: string): boolean {
  return /^<[a-z][a-z_]{0,19}>$/.test(shape);
}

// ------------------------------------------------------------------ the proposer

/** Options of {@link DeterministicProposer}. */
export interface DeterministicProposerOptions {
  /**
   * How missed requests are ranked as example requests. Thresholds and limits not given here
   * come from the evidence's limits.
   * @default rankExampleCandidates
   */
  rankExamples?: typeof rankExampleCandidates;
  /** Options passed to the ranking (`minMisses`, `limit`, `maxLength` default to the evidence's limits). */
  rankOptions?: RankExampleOptions;
  /** Options of the "Not for" phrase. */
  phraseOptions?: SharedPhraseOptions;
  /**
   * Most confused requests (the newest) read for one "Not for" line.
   * @default 100
   */
  maxRequestsPerLine?: number;
}

/**
 * Proposes lessons without a model:
 * - one usage note per failure group of at least `minFailures` calls (largest groups first, up to
 *   the room left under `maxNotes`), citing the group's calls;
 * - up to `maxNewQueries` example requests, the missed wordings ranked by
 *   {@link rankExampleCandidates} (learned examples on the card excluded);
 * - one "Not for <shared words> requests; use <tool>." line per serving tool with at least
 *   `minConfusions` confused requests (up to the room left under `maxAvoid`, tools already named by
 *   a line skipped), citing the requests its words cover. Words of the tool's own routing text
 *   are never used: the line must not disown what the tool is for.
 */
export class DeterministicProposer implements Proposer {
  readonly name = "deterministic";
  readonly callsModel = false;
  private readonly options: DeterministicProposerOptions;

  constructor(options: DeterministicProposerOptions = {}) {
    this.options = options;
  }

  async propose(evidence: ToolEvidence, _config?: RunnableConfig): Promise<Proposal> {
    return {
      notes: this.notes(evidence),
      examples: this.examples(evidence),
      notFor: this.notFor(evidence),
    };
  }

  private notes(evidence: ToolEvidence): ProposedNote[] {
    const { minFailures, maxNotes, maxLineLength } = evidence.limits;
    const room = maxNotes - evidence.current.notes.length;
    const existing = new Set(evidence.current.notes);
    const out: ProposedNote[] = [];
    for (const group of evidence.failures) {
      if (out.length >= room) break;
      if (group.callIds.length < minFailures) continue;
      const text = usageNote(group, evidence.successShapes, maxLineLength);
      if (text === null || existing.has(text) || out.some((n) => n.text === text)) continue;
      out.push({ text, cites: [...group.callIds] });
    }
    return out;
  }

  private examples(evidence: ToolEvidence): ProposedExample[] {
    const rank = this.options.rankExamples ?? rankExampleCandidates;
    const { minMisses, maxNewQueries, maxLineLength } = evidence.limits;
    const learned = evidence.current.examples.filter((e) => e.source !== "synthetic").map((e) => e.text);
    const ranked = rank(evidence.misses, evidence.routingText, {
      minMisses,
      limit: maxNewQueries,
      maxLength: maxLineLength,
      ...definedOnly(this.options.rankOptions ?? {}),
      exclude: [...learned, ...(this.options.rankOptions?.exclude ?? [])],
    });
    return ranked.map((c) => ({ text: c.text, cites: c.cites }));
  }

  private notFor(evidence: ToolEvidence): ProposedNotFor[] {
    const { minConfusions, maxAvoid, maxLineLength } = evidence.limits;
    const room = maxAvoid - evidence.current.notFor.length;
    const named = new Set(evidence.current.notFor.map((n) => n.tool));
    const byTool = new Map<string, ConfusedRequest[]>();
    for (const c of evidence.confusions) {
      if (c.servedBy === evidence.tool || named.has(c.servedBy)) continue;
      const list = byTool.get(c.servedBy) ?? [];
      list.push(c);
      byTool.set(c.servedBy, list);
    }
    const groups = [...byTool].sort((a, b) => b[1].length - a[1].length);
    const ownWords = new Set(tokenize(evidence.routingText));
    const out: ProposedNotFor[] = [];
    for (const [tool, confusions] of groups) {
      if (out.length >= room) break;
      if (confusions.length < minConfusions) continue;
      const found = sharedPhrase(
        confusions
          .slice(-(this.options.maxRequestsPerLine ?? 100))
          .map((c) => ({ id: c.requestId, request: c.request })),
        { avoidStems: ownWords, ...this.options.phraseOptions },
      );
      if (!found || found.covered.length < minConfusions) continue;
      const text = `Not for ${found.phrase} requests; use ${tool}.`;
      if (text.length > maxLineLength) continue;
      out.push({ text, tool, cites: found.covered });
    }
    return out;
  }
}

// ------------------------------------------------------------------ helpers

function fit(text: string, max: number): string | null {
  return text.length <= max ? text : null;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared += 1;
  return shared / (a.size + b.size - shared);
}
