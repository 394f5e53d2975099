/**
 * The learned part of routing, calibrated: what a tool's wordings (past requests it served) add to
 * its card's score for one request. Wording similarities (request against past requests) sit on a
 * higher scale than card similarities (request against a description), so added as they are they
 * lift every tool with traffic over every tool without it, whatever the request says. Here a
 * tool's score is a count-weighted average of its card and its wording evidence on one scale:
 * - per request, the cards are put on the wordings' scale (the cards' best scores matched to the
 *   best wording evidence, mean and spread);
 * - each tool's wording evidence is first moved by its background (how well its wordings match
 *   requests other tools served, against the tools' median): a tool whose wordings match any
 *   request a little gains nothing from that;
 * - the weight of the wordings grows with their count, fast where they match better than the card
 *   (a few that match well lift a tool: well, against what they give the tool for any request),
 *   slowly where worse (many are needed to pull it down), and stays below `weight`: the card
 *   always counts;
 * - a tool with no wordings scores its card.
 * The result is given back on the card scale, as what the wordings add to the card's score, so
 * a tool without wordings keeps its card score exactly. Pure: the index gives the scores
 * (`tool-index-scoring.ts`), this decides.
 */

/** Options of the calibrated wording term (the index option `wordings`, see `wordings.ts`). */
export interface WordingCalibrationOptions {
  /** How many of a tool's best-matching wordings its evidence averages. */
  best: number;
  /** Most weight the wordings get against the card (many wordings), in [0, 1]. */
  weight: number;
  /**
   * Wordings that match better than the card weigh `n / (n + lift)` of `weight`; of that,
   * `lift / (n + lift)` counts only as far as they stand out (see `standOut`).
   */
  lift: number;
  /** Wordings that match worse than the card weigh `n / (n + lower)` of `weight`. */
  lower: number;
  /** Added to the score of the tools the cards alone rank first (the first {@link FIRST_CARDS}). */
  sticky: number;
  /**
   * Background spreads a tool's wording evidence must stand above its background's mean before
   * the part of its lift few wordings hold back counts (see {@link liftShare}); -Infinity: none
   * held back.
   */
  standOut: number;
}

/** How many of the best card scores and wording evidences set the card's place on the wordings' scale. */
export const MAP_TOP = 10;

/** How many of the cards' best tools get the sticky bonus. */
export const FIRST_CARDS = 5;

/** Background spreads over which a lift grows from held back to whole (from `standOut` up). */
export const STAND_OUT_RAMP = 2;

/**
 * Fewest sampled requests of other tools a background is taken from; below it (a partition where
 * one tool has all the wordings) the other tools' own texts are sampled too.
 */
export const MIN_BACKGROUND_SAMPLES = 5;

/** Least spread a background is given (a tool whose wordings match every request alike). */
const MIN_SPREAD = 1e-3;

/** A tool's background: its wording evidence and its card score over other tools' requests. */
export interface ToolBackground {
  /** Sampled requests of other tools it was taken from. */
  samples: number;
  mean: number;
  sd: number;
  cardMean: number;
  cardSd: number;
}

/** A partition's backgrounds, per tool with wordings (cards only for the others). */
export type WordingBackgrounds = ReadonlyMap<string, ToolBackground>;

/** One request's wording hits over the partition, best first, and whether they stop short of all wordings. */
export interface WordingHits {
  hits: readonly (readonly [string, number, ...unknown[]])[];
  /** True when the partition holds more wordings than `hits`: a tool's missing best are at most the last hit. */
  truncated: boolean;
}

/**
 * Each tool's wording evidence for a request: the mean of its `best` best hits (fewer when it has
 * fewer wordings); where the hits stop short of every wording, a tool's missing ones count as the
 * last hit's similarity (they are at most that), and a tool with wordings but no hit gets it too.
 */
export function wordingEvidence(
  { hits, truncated }: WordingHits,
  counts: ReadonlyMap<string, number>,
  best: number,
): Map<string, number> {
  const top = new Map<string, number[]>();
  for (const [tool, score] of hits) {
    let list = top.get(tool);
    if (!list) top.set(tool, (list = []));
    if (list.length < best) list.push(score);
  }
  // Hits may come in any order: each tool's best first.
  for (const list of top.values()) list.sort((a, b) => b - a);
  const floor = truncated && hits.length > 0 ? Math.min(...hits.map((h) => h[1])) : 0;
  const out = new Map<string, number>();
  for (const [tool, n] of counts) {
    if (n <= 0) continue;
    const list = top.get(tool) ?? [];
    const want = Math.min(best, n);
    let sum = list.slice(0, want).reduce((s, x) => s + x, 0);
    let have = Math.min(list.length, want);
    if (truncated) {
      sum += (want - have) * floor;
      have = want;
    }
    out.set(tool, have > 0 ? sum / have : floor);
  }
  return out;
}

/** One sampled wording, routed as a request: the tool that served it, every card's score, its evidence per tool. */
export interface BackgroundSample {
  owner: string;
  cards: ReadonlyMap<string, number>;
  evidence: ReadonlyMap<string, number>;
}

/**
 * Each tool's background from sampled requests (other tools' wordings): the mean and spread of its
 * wording evidence and of its card score over the samples another tool served. A tool with
 * wordings that no sample of another tool reaches gets none (it is not lifted).
 */
export function wordingBackgrounds(samples: readonly BackgroundSample[]): Map<string, ToolBackground> {
  const sums = new Map<string, { n: number; s: number; ss: number; cn: number; cs: number; css: number }>();
  const at = (tool: string) => {
    let v = sums.get(tool);
    if (!v) sums.set(tool, (v = { n: 0, s: 0, ss: 0, cn: 0, cs: 0, css: 0 }));
    return v;
  };
  for (const sample of samples) {
    for (const [tool, e] of sample.evidence) {
      if (tool === sample.owner) continue;
      const v = at(tool);
      v.n += 1;
      v.s += e;
      v.ss += e * e;
    }
    for (const [tool, c] of sample.cards) {
      if (tool === sample.owner) continue;
      const v = at(tool);
      v.cn += 1;
      v.cs += c;
      v.css += c * c;
    }
  }
  const out = new Map<string, ToolBackground>();
  for (const [tool, v] of sums) {
    if (v.n === 0 || v.cn === 0) continue;
    const mean = v.s / v.n;
    const cardMean = v.cs / v.cn;
    out.set(tool, {
      samples: v.n,
      mean,
      sd: Math.sqrt(Math.max(0, v.ss / v.n - mean * mean)) + MIN_SPREAD,
      cardMean,
      cardSd: Math.sqrt(Math.max(0, v.css / v.cn - cardMean * cardMean)) + MIN_SPREAD,
    });
  }
  return out;
}

/** Best first by score, ties by name (as routing ranks). */
const byScore = (a: readonly [string, number], b: readonly [string, number]): number =>
  b[1] - a[1] || a[0].localeCompare(b[0]);

/** Mean and (population) spread of the first `n` of `values` sorted best first. */
function topStats(values: Iterable<number>, n: number): { mean: number; sd: number } {
  const top = [...values].sort((a, b) => b - a).slice(0, n);
  const mean = top.reduce((s, x) => s + x, 0) / Math.max(1, top.length);
  const sd = Math.sqrt(top.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, top.length));
  return { mean, sd };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The median of the backgrounds' means (0 when there are none). */
export function backgroundMedian(backgrounds: WordingBackgrounds): number {
  return median([...backgrounds.values()].map((b) => b.mean));
}

/**
 * The card's place on the wordings' scale for this request (`a·card + b`): the cards' best
 * {@link MAP_TOP} scores matched to the best wording evidence, mean and spread.
 */
function requestScale(cards: ReadonlyMap<string, number>, moved: ReadonlyMap<string, number>) {
  const c = topStats(cards.values(), MAP_TOP);
  const w = topStats(moved.values(), MAP_TOP);
  const a = c.sd > 0 && w.sd > 0 ? w.sd / c.sd : 1;
  return { a, b: w.mean - a * c.mean };
}

/**
 * With fewer than {@link MAP_TOP} tools with wordings, no request sets the wordings' scale: the
 * backgrounds do (the cards' and the wordings' usual level and spread on other tools' requests).
 */
function backgroundScale(backgrounds: WordingBackgrounds) {
  const all = [...backgrounds.values()];
  if (all.length === 0) return { a: 1, b: 0 };
  const a = median(all.map((x) => x.sd)) / median(all.map((x) => x.cardSd));
  return { a, b: median(all.map((x) => x.mean)) - a * median(all.map((x) => x.cardMean)) };
}

/**
 * How much of a tool's lift counts for one request. A few wordings are a small sample: one that
 * happens to match a request a little better than the card (a general search tool's "find me…",
 * a tool whose traffic is long first-person requests) is no reason to pass the tools of the
 * cards' first five, least of all those without traffic, which know nothing of the request
 * either way. So `held` (the share of the lift few wordings hold back, `lift / (n + lift)` for
 * `n` wordings: most of it for one, little for dozens) counts only as far as the tool's evidence
 * stands out from its background: none below `standOut` spreads above the background's mean,
 * all from {@link STAND_OUT_RAMP} more. A few wordings that match well still lift a tool fast; a
 * tool without background (no sampled request of another tool reached its wordings) stands out
 * by definition.
 */
export function liftShare(
  evidence: number,
  background: ToolBackground | undefined,
  held: number,
  standOut: number,
): number {
  if (held <= 0 || background === undefined) return 1;
  const z = (evidence - background.mean) / background.sd;
  const standing = Math.min(1, Math.max(0, (z - standOut) / STAND_OUT_RAMP));
  return 1 - held * (1 - standing);
}

/**
 * What each tool adds to its card's score for one request (`cards`: every tool's card score;
 * `evidence`: each tool with wordings, see {@link wordingEvidence}; `counts`: its wordings), on
 * the card scale: negative where its wordings pull it down, a lift held back by {@link liftShare}.
 * Plus the sticky bonus for the first {@link FIRST_CARDS} tools of the cards. A tool without
 * wordings adds nothing.
 */
export function calibratedTerms(
  cards: ReadonlyMap<string, number>,
  evidence: ReadonlyMap<string, number>,
  counts: ReadonlyMap<string, number>,
  backgrounds: WordingBackgrounds,
  options: Pick<WordingCalibrationOptions, "weight" | "lift" | "lower" | "sticky" | "standOut">,
): Map<string, number> {
  const out = new Map<string, number>();
  const median = backgroundMedian(backgrounds);
  const moved = new Map<string, number>();
  for (const [tool, e] of evidence) {
    const bg = backgrounds.get(tool);
    moved.set(tool, e - (bg ? bg.mean - median : 0));
  }
  if (moved.size > 0 && cards.size > 0) {
    const { a, b } = moved.size >= MAP_TOP ? requestScale(cards, moved) : backgroundScale(backgrounds);
    for (const [tool, m] of moved) {
      const card = cards.get(tool);
      if (card === undefined) continue;
      const mapped = a * card + b;
      const n = counts.get(tool) ?? 0;
      const share =
        m > mapped
          ? options.weight *
            (n / (n + options.lift)) *
            liftShare(evidence.get(tool)!, backgrounds.get(tool), options.lift / (n + options.lift), options.standOut)
          : options.weight * (n / (n + options.lower));
      const term = (share * (m - mapped)) / a;
      if (term !== 0) out.set(tool, term);
    }
  }
  if (options.sticky !== 0)
    for (const [tool] of [...cards].sort(byScore).slice(0, FIRST_CARDS))
      out.set(tool, (out.get(tool) ?? 0) + options.sticky);
  return out;
}

/**
 * The raise every score of a request gets alike: `confidence` times the best wording evidence
 * of any tool (0 when none is positive), each tool's evidence read from at least `best` wordings
 * (one with fewer counts for its share, `n / best`: one past request matching well is one
 * sample, not how well the request matches what the partition serves). Ranks stay as they are;
 * the best score then says how well the request matches anything the partition served, which
 * tells "no tool" apart better than the best score alone (a request no tool ever served matches
 * no wording well).
 */
export function confidenceRaise(
  evidence: ReadonlyMap<string, number>,
  counts: ReadonlyMap<string, number>,
  best: number,
  confidence: number,
): number {
  let top = 0;
  for (const [tool, e] of evidence) {
    const read = (e * Math.min(counts.get(tool) ?? 0, best)) / best;
    if (read > top) top = read;
  }
  return confidence * top;
}

/** Spread (population) of each tool's card score plus its term so far, for one request. */
export function scoreSpread(cards: ReadonlyMap<string, number>, terms: ReadonlyMap<string, number>): number {
  if (cards.size === 0) return 0;
  let sum = 0;
  for (const [tool, card] of cards) sum += card + (terms.get(tool) ?? 0);
  const mean = sum / cards.size;
  let squares = 0;
  for (const [tool, card] of cards) squares += (card + (terms.get(tool) ?? 0) - mean) ** 2;
  return Math.sqrt(squares / cards.size);
}
