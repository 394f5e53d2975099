import { intersects, tokenize } from "../text/tokenize.js";
import type { ExampleCandidate, RankExampleOptions } from "./deterministic-proposer.js";
import { DEFAULT_RANK_EXAMPLE_OPTIONS, rankExampleCandidates } from "./deterministic-proposer.js";
import type { MissedRequest } from "./detect.js";
import { definedOnly, oneLine } from "../internal.js";

/**
 * A missed request with what routing says about its wording as an example: `pick` is the order
 * in which routing would add it (see `WhatIf.chooseExamples`), null when it would not, and `gain`
 * the net routing value it adds on recorded requests. Filled by the manager from the index
 * ("what if"), never by a model.
 */
export interface CoveredMiss extends Pick<MissedRequest, "requestId" | "request"> {
  pick?: number | null;
  gain?: number;
}

/**
 * Propose the wordings routing chose, in its order. A pick cites itself and the missed requests it
 * shares a word with; one citing fewer than `minMisses`, repeating an `exclude` text or longer
 * than `maxLength` is not proposed.
 *
 * Falls back to {@link rankExampleCandidates} when the misses carry no routing answer (no index).
 * Pure: the routing answer comes in with the misses.
 */
export function rankByCoverage(
  misses: readonly CoveredMiss[],
  currentRoutingText: string,
  options: RankExampleOptions = {},
): ExampleCandidate[] {
  if (!misses.some((m) => m.pick !== undefined)) return rankExampleCandidates(misses, currentRoutingText, options);
  const o = { ...DEFAULT_RANK_EXAMPLE_OPTIONS, ...definedOnly(options) };
  const tokensOf = new Map(misses.map((m) => [m.requestId, new Set(tokenize(m.request))]));
  const routing = new Set(tokenize(currentRoutingText));
  const taken = new Set(o.exclude.map(normalized));
  const chosen = misses
    .filter((m): m is CoveredMiss & { pick: number } => typeof m.pick === "number")
    .sort((a, b) => a.pick - b.pick);
  const out: ExampleCandidate[] = [];
  for (const miss of chosen) {
    if (out.length >= o.limit) break;
    const own = tokensOf.get(miss.requestId)!;
    const key = normalized(miss.request);
    if (taken.has(key) || own.size === 0 || miss.request.length > o.maxLength) continue;
    // Evidence: the missed requests this wording shares a word with, its own first.
    const cites = [
      miss.requestId,
      ...misses
        .filter((m) => m.requestId !== miss.requestId && intersects(own, tokensOf.get(m.requestId)))
        .map((m) => m.requestId),
    ];
    if (new Set(cites).size < o.minMisses) continue;
    taken.add(key);
    out.push({
      text: oneLine(miss.request),
      cites: [...new Set(cites)].slice(0, Math.max(o.maxCites, o.minMisses)),
      score: miss.gain ?? 0,
      novelWords: [...own].filter((t) => !routing.has(t)),
    });
  }
  return out;
}

function normalized(text: string): string {
  return oneLine(text).toLowerCase();
}
