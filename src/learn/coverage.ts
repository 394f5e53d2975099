import { intersects, tokenize } from "../index/tokenize.js";
import type { ExampleCandidate, RankExampleOptions } from "./deterministic-proposer.js";
import { DEFAULT_RANK_EXAMPLE_OPTIONS, rankExampleCandidates } from "./deterministic-proposer.js";
import type { MissedRequest } from "./detect.js";
import { definedOnly, oneLine } from "../internal.js";

/**
 * A missed request with what routing says about its wording as an example: which missed requests
 * (ids) the tool would be offered for if this wording were added to its routing text, and which
 * requests it served it would then rank first for. Filled by the manager from the index
 * ("what if"), never by a model.
 */
export interface CoveredMiss extends Pick<MissedRequest, "requestId" | "request"> {
  covers?: readonly string[];
  coversFirst?: readonly string[];
}

/** Options of {@link rankByCoverage}, on top of {@link RankExampleOptions}. */
export interface CoverageOptions extends RankExampleOptions {
  /**
   * Weight of a request the tool served that a pick lifts to rank 1, against one missed request
   * brought into the offered set.
   * @default 0.5
   */
  firstWeight?: number;
}

const DEFAULT_COVERAGE = { firstWeight: 0.5 };

/**
 * Choose example requests by what they would fix, greedily: each pick is the missed wording that
 * brings the tool into the offered set for the most missed requests not fixed by an earlier pick,
 * plus `firstWeight` for each request the tool served that it would lift to rank 1. A pick cites
 * itself and the missed requests it shares a word with; one citing fewer than `minMisses` is not
 * proposed, nor one that fixes nothing.
 *
 * Falls back to {@link rankExampleCandidates} when the misses carry no coverage (no index).
 * Pure: the coverage sets come in with the misses.
 */
export function rankByCoverage(
  misses: readonly CoveredMiss[],
  currentRoutingText: string,
  options: CoverageOptions = {},
): ExampleCandidate[] {
  if (!misses.some((m) => m.covers !== undefined)) return rankExampleCandidates(misses, currentRoutingText, options);
  const o = { ...DEFAULT_RANK_EXAMPLE_OPTIONS, ...DEFAULT_COVERAGE, ...definedOnly(options) };
  const tokensOf = new Map(misses.map((m) => [m.requestId, new Set(tokenize(m.request))]));
  const routing = new Set(tokenize(currentRoutingText));
  const excluded = o.exclude.map(normalized);
  const covered = new Set<string>();
  const coveredFirst = new Set<string>();
  const picked: ExampleCandidate[] = [];
  const pickedTexts = new Set<string>(excluded);

  const candidates = misses.filter((m) => m.request.length <= o.maxLength && (tokensOf.get(m.requestId)?.size ?? 0) > 0);
  while (picked.length < o.limit) {
    let best: { miss: CoveredMiss; gain: number; cites: string[] } | undefined;
    for (const miss of candidates) {
      const key = normalized(miss.request);
      if (pickedTexts.has(key) || miss.covers === undefined) continue;
      const own = tokensOf.get(miss.requestId)!;
      const fixes = miss.covers.filter((id) => !covered.has(id)).length;
      const firsts = (miss.coversFirst ?? []).filter((id) => !coveredFirst.has(id)).length;
      const gain = fixes + o.firstWeight * firsts;
      if (gain <= 0 || (best && gain <= best.gain)) continue;
      // Evidence: the missed requests this wording shares a word with, its own first.
      const cites = [miss.requestId, ...misses.filter((m) => m.requestId !== miss.requestId && intersects(own, tokensOf.get(m.requestId))).map((m) => m.requestId)];
      if (new Set(cites).size < o.minMisses) continue;
      best = { miss, gain, cites };
    }
    if (!best) break;
    const { miss, cites } = best;
    for (const id of miss.covers ?? []) covered.add(id);
    for (const id of miss.coversFirst ?? []) coveredFirst.add(id);
    pickedTexts.add(normalized(miss.request));
    const own = tokensOf.get(miss.requestId)!;
    picked.push({
      text: oneLine(miss.request),
      cites: [...new Set(cites)].slice(0, Math.max(o.maxCites, o.minMisses)),
      score: best.gain,
      novelWords: [...own].filter((t) => !routing.has(t)),
    });
  }
  return picked;
}

function normalized(text: string): string {
  return oneLine(text).toLowerCase();
}
