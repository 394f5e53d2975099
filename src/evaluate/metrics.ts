/**
 * Ranking and separation metrics for tool selection, as pure functions over plain arrays.
 *
 * A ranked list is the tools routing offered, best first; `relevant` is the tools that should have
 * been offered (a MetaTool `expect` list). Every per-request function returns a number in [0, 1];
 * the `mean*` helpers average them over many requests.
 */

/** One routed request: what routing ranked, best first, and what should have been found. */
export interface RankedCase {
  /** Tool names in routing order, best first. */
  ranked: readonly string[];
  /** The tools that serve the request. Empty for a request that needs no tool. */
  relevant: readonly string[];
}

/**
 * 1 when the top `k` of `ranked` hold at least one relevant tool, else 0. With `k = 1` this is
 * top-1 accuracy (the first tool offered is a right one). 0 when nothing is relevant.
 */
export function hitAtK(ranked: readonly string[], relevant: readonly string[], k: number): number {
  if (relevant.length === 0) return 0;
  const want = new Set(relevant);
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) if (want.has(ranked[i])) return 1;
  return 0;
}

/** Share of the relevant tools found in the top `k` of `ranked`. 0 when nothing is relevant. */
export function recallAtK(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const want = new Set(relevant);
  if (want.size === 0) return 0;
  const seen = new Set<string>();
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) if (want.has(ranked[i])) seen.add(ranked[i]);
  return seen.size / want.size;
}

/**
 * Normalised discounted cumulative gain at `k` with binary relevance: each relevant tool at rank
 * `r` (1-based) gains `1 / log2(r + 1)`, divided by the gain of the ideal order. 0 when nothing is
 * relevant. A repeated name counts once.
 */
export function ndcgAtK(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const want = new Set(relevant);
  if (want.size === 0) return 0;
  const seen = new Set<string>();
  let dcg = 0;
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) {
    const tool = ranked[i];
    if (want.has(tool) && !seen.has(tool)) {
      seen.add(tool);
      dcg += 1 / Math.log2(i + 2);
    }
  }
  let ideal = 0;
  for (let i = 0; i < Math.min(k, want.size); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** Arithmetic mean; 0 for an empty list. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/** Mean of {@link hitAtK} over the cases (top-k accuracy; `k = 1` is top-1 accuracy). */
export function topKAccuracy(cases: readonly RankedCase[], k: number): number {
  return mean(cases.map((c) => hitAtK(c.ranked, c.relevant, k)));
}

/** Mean of {@link recallAtK} over the cases. */
export function meanRecallAtK(cases: readonly RankedCase[], k: number): number {
  return mean(cases.map((c) => recallAtK(c.ranked, c.relevant, k)));
}

/** Mean of {@link ndcgAtK} over the cases. */
export function meanNdcgAtK(cases: readonly RankedCase[], k: number): number {
  return mean(cases.map((c) => ndcgAtK(c.ranked, c.relevant, k)));
}

/**
 * Area under the ROC curve: the probability that a random positive scores above a random
 * negative, ties counting half (the Mann-Whitney U statistic, computed by sorting, O(n log n)).
 * 0.5 is chance, 1 is perfect separation. Returns NaN when either list is empty.
 *
 * @param positives scores of the cases that should score high (e.g. requests a tool serves)
 * @param negatives scores of the cases that should score low (e.g. requests that need no tool)
 */
export function auroc(positives: readonly number[], negatives: readonly number[]): number {
  if (positives.length === 0 || negatives.length === 0) return Number.NaN;
  const all: Array<[score: number, positive: boolean]> = [];
  for (const s of positives) all.push([s, true]);
  for (const s of negatives) all.push([s, false]);
  all.sort((a, b) => a[0] - b[0]);
  // Sum of the (average, 1-based) ranks of the positives.
  let rankSum = 0;
  let i = 0;
  while (i < all.length) {
    let j = i;
    while (j + 1 < all.length && all[j + 1][0] === all[i][0]) j++;
    const averageRank = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) if (all[t][1]) rankSum += averageRank;
    i = j + 1;
  }
  const p = positives.length;
  const u = rankSum - (p * (p + 1)) / 2;
  return u / (p * negatives.length);
}

/** How well routing's best score tells requests that need no tool from the rest. */
export interface NoToolFigures {
  /** {@link auroc} of the best score, served requests as positives, no-tool requests as negatives (NaN without both). */
  auroc: number;
  /** Of the requests scored below the threshold (routing would offer nothing), the share that need no tool; 0 when none is. */
  precision: number;
  /** Of the requests that need no tool, the share scored below the threshold; 0 without a threshold. */
  recall: number;
  /** The threshold the precision and recall are read at; absent when there is none (no abstention). */
  threshold?: number;
}

/**
 * "No tool" figures from routing's best score of each request: `served` are requests a tool
 * serves, `noTool` those that need none; a request abstains when its score is below `threshold`.
 */
export function noToolFigures(
  served: readonly number[],
  noTool: readonly number[],
  threshold: number | undefined,
): NoToolFigures {
  const out: NoToolFigures = { auroc: auroc(served, noTool), precision: 0, recall: 0 };
  if (threshold === undefined) return out;
  const hits = noTool.filter((s) => s < threshold).length;
  const wrong = served.filter((s) => s < threshold).length;
  return {
    ...out,
    precision: hits + wrong === 0 ? 0 : hits / (hits + wrong),
    recall: noTool.length === 0 ? 0 : hits / noTool.length,
    threshold,
  };
}
