/**
 * `simulate`'s figures by popularity: real traffic is skewed, and a learning change that lifts the
 * tools with traffic can sink the ones nobody used yet while the overall figures hold. Each eval
 * request belongs to the bucket of the tool it expects, by that tool's share of the replayed
 * traffic: the head (the most-served tools that together took half the traffic), the torso (the
 * other tools with traffic) and the tools with no traffic. Pure functions of labels and rankings.
 */
import { hitAtK, mean, ndcgAtK } from "./metrics.js";

/** The popularity buckets, most traffic first. */
export const POPULARITY_BUCKETS = Object.freeze(["head", "torso", "no traffic"] as const);
export type PopularityBucket = (typeof POPULARITY_BUCKETS)[number];

/**
 * Share of the replayed requests (that a tool served) the head's tools take together: the
 * most-served tools are added until they reach it.
 */
export const HEAD_TRAFFIC_SHARE = 0.5;

/** One bucket's routing figures before and after learning. */
export interface BucketFigures {
  bucket: PopularityBucket;
  /** Tools in the bucket (every tool of the catalogue belongs to one). */
  tools: number;
  /** Replayed requests their tools served. */
  traffic: number;
  /** Eval requests expecting one of its tools (by their first known tool). */
  n: number;
  before: { top1: number; "recall@5": number; "ndcg@5": number };
  after: { top1: number; "recall@5": number; "ndcg@5": number };
  /** Largest net loss of one of its tools (eval requests that left the first `k`, net of those that entered). */
  maxNetLoss: number;
}

/**
 * Each tool's bucket from how many replayed requests it served (`served`, by tool; every tool of
 * `tools` is placed, one absent from `served` in "no traffic"). Ties in the head are broken by
 * name, so the split is the same on every run.
 */
export function popularityBuckets(
  tools: readonly string[],
  served: ReadonlyMap<string, number>,
): Map<string, PopularityBucket> {
  const out = new Map<string, PopularityBucket>();
  const used = tools
    .map((tool): [string, number] => [tool, served.get(tool) ?? 0])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = used.reduce((s, [, n]) => s + n, 0);
  let taken = 0;
  for (const [tool, n] of used) {
    out.set(tool, taken < HEAD_TRAFFIC_SHARE * total ? "head" : "torso");
    taken += n;
  }
  for (const tool of tools) if (!out.has(tool)) out.set(tool, "no traffic");
  return out;
}

/**
 * The figures of each bucket: eval requests (those expecting a tool) scored on their rankings
 * before and after, `netLoss` per tool (as `simulate`'s `requests`). A request expecting several
 * tools counts in the bucket of the first one `buckets` places.
 */
export function bucketFigures(
  cases: readonly { expect: readonly string[] }[],
  before: readonly (readonly string[])[],
  after: readonly (readonly string[])[],
  buckets: ReadonlyMap<string, PopularityBucket>,
  served: ReadonlyMap<string, number>,
  netLoss: ReadonlyMap<string, number>,
): BucketFigures[] {
  return POPULARITY_BUCKETS.map((bucket) => {
    const tools = [...buckets].filter(([, b]) => b === bucket).map(([tool]) => tool);
    const mine = new Set(tools);
    const rows: { b: number[]; a: number[] }[] = [[], [], []].map(() => ({ b: [], a: [] }));
    cases.forEach((c, i) => {
      const owner = c.expect.find((t) => buckets.has(t));
      if (owner === undefined || !mine.has(owner)) return;
      rows[0].b.push(hitAtK(before[i], c.expect, 1));
      rows[0].a.push(hitAtK(after[i], c.expect, 1));
      rows[1].b.push(hitAtK(before[i], c.expect, 5));
      rows[1].a.push(hitAtK(after[i], c.expect, 5));
      rows[2].b.push(ndcgAtK(before[i], c.expect, 5));
      rows[2].a.push(ndcgAtK(after[i], c.expect, 5));
    });
    const side = (pick: "a" | "b") => ({
      top1: mean(rows[0][pick]),
      "recall@5": mean(rows[1][pick]),
      "ndcg@5": mean(rows[2][pick]),
    });
    return {
      bucket,
      tools: tools.length,
      traffic: tools.reduce((s, t) => s + (served.get(t) ?? 0), 0),
      n: rows[0].b.length,
      before: side("b"),
      after: side("a"),
      maxNetLoss: Math.max(0, ...tools.map((t) => netLoss.get(t) ?? 0)),
    };
  });
}
