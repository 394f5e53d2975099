/**
 * How the routing index (`tool-index.ts`) scores a request with its wordings: every card's score,
 * each tool's wording evidence, and the calibrated term the wordings add (`wording-calibration.ts`),
 * read against each tool's background, which is taken once per change of the wordings.
 */
import type { ToolCard } from "../ledger/schema.js";
import type { RoutingVector } from "./card-vectors.js";
import { routingTexts } from "./routing-text.js";
import { wordingPartition } from "./tool-index-ids.js";
import { WORDING_HITS } from "./tool-index-wordings.js";
import {
  type BackgroundSample,
  calibratedTerms,
  MIN_BACKGROUND_SAMPLES,
  wordingBackgrounds,
  type WordingBackgrounds,
  type WordingCalibrationOptions,
  wordingEvidence,
} from "./wording-calibration.js";
import { guardSample } from "./wordings-guard.js";

/** What the index lends these functions: its partition, embedding and search, and the ledger's cards. */
export interface ScoringHost {
  partition: string;
  embed(texts: string[]): Promise<RoutingVector[]>;
  /** Hits for a vector under a filter: tool, cosine similarity, the record's text. */
  search(vector: RoutingVector, k: number, filter: Record<string, string>): Promise<[string, number, string][]>;
  listCards(): Promise<ToolCard[]>;
}

/** The part of a partition's index state scoring reads (and where it keeps the backgrounds). */
export interface ScoringState {
  parts: ReadonlyMap<string, number>;
  wordings: ReadonlyMap<string, ReadonlyMap<string, string>>;
  wordingCount: number;
  backgrounds?: WordingBackgrounds;
}

/** Each tool's best card score for a request vector, from the first `k` card vectors (default: all of them). */
export async function cardScores(
  host: ScoringHost,
  state: ScoringState,
  vector: RoutingVector,
  k = [...state.parts.values()].reduce((a, b) => a + b, 0),
): Promise<Map<string, number>> {
  const best = new Map<string, number>();
  for (const [tool, score] of await host.search(vector, k, { partition: host.partition }))
    if (!(best.get(tool)! >= score)) best.set(tool, score);
  return best;
}

/** Each tool's wording evidence for a request vector (`wordingEvidence` over the first {@link WORDING_HITS} hits). */
export async function evidenceOf(
  host: ScoringHost,
  state: ScoringState,
  vector: RoutingVector,
  best: number,
): Promise<Map<string, number>> {
  const hits = await host.search(vector, Math.min(state.wordingCount, WORDING_HITS), {
    partition: wordingPartition(host.partition),
  });
  const counts = new Map([...state.wordings].map(([tool, kept]) => [tool, kept.size]));
  return wordingEvidence({ hits, truncated: state.wordingCount > hits.length }, counts, best);
}

/** What each tool's wordings add to its card's score (`cards`) for a request vector. */
export async function calibratedWordingTerms(
  host: ScoringHost,
  state: ScoringState,
  vector: RoutingVector,
  cards: ReadonlyMap<string, number>,
  options: WordingCalibrationOptions & { sample: number },
): Promise<Map<string, number>> {
  const backgrounds = await backgroundsOf(host, state, options);
  const evidence = await evidenceOf(host, state, vector, options.best);
  const counts = new Map([...state.wordings].map(([tool, kept]) => [tool, kept.size]));
  return calibratedTerms(cards, evidence, counts, backgrounds, options);
}

/**
 * Each tool's background (`wordingBackgrounds`), kept in the state until its wordings change: a
 * spread of `sample` stored wordings routed as requests; where a tool has fewer than
 * {@link MIN_BACKGROUND_SAMPLES} of other tools' (one tool has them all), the other tools' own
 * texts (name, description, argument names) are routed too.
 */
export async function backgroundsOf(
  host: ScoringHost,
  state: ScoringState,
  options: { best: number; sample: number },
): Promise<WordingBackgrounds> {
  if (state.backgrounds) return state.backgrounds;
  const wordings = state.wordings;
  const routed = async (sample: readonly { tool: string; text: string }[]) => {
    const vectors = await host.embed(sample.map((s) => s.text));
    const out: BackgroundSample[] = [];
    for (let i = 0; i < sample.length; i++) {
      out.push({
        owner: sample[i].tool,
        cards: await cardScores(host, state, vectors[i]),
        evidence: await evidenceOf(host, state, vectors[i], options.best),
      });
    }
    return out;
  };
  const samples = await routed(guardSample(wordings, options.sample));
  let backgrounds = wordingBackgrounds(samples);
  if ([...wordings.keys()].some((tool) => !((backgrounds.get(tool)?.samples ?? 0) >= MIN_BACKGROUND_SAMPLES))) {
    const cards = (await host.listCards()).slice(0, options.sample);
    const texts = cards.map((card) => ({ tool: card.name, text: routingTexts(card).tool }));
    backgrounds = wordingBackgrounds([...samples, ...(await routed(texts))]);
  }
  // Until the wordings change (the index forgets it then).
  state.backgrounds = backgrounds;
  return backgrounds;
}
