/**
 * How the routing index (`tool-index.ts`) scores a request with its wordings: every card's score,
 * each tool's wording evidence, the calibrated term the wordings add (`wording-calibration.ts`),
 * read against each tool's background, what the classifier over the wordings takes from the tools
 * it ranks low (`wording-classifier.ts`), and the raise every score gets alike from the best
 * wording evidence. The backgrounds and the classifier are fitted once per change of the wordings.
 */
import type { ToolCard } from "../ledger/schema.js";
import type { RoutingVector } from "./card-vectors.js";
import { routingTexts } from "./routing-text.js";
import { wordingPartition } from "./tool-index-ids.js";
import { WORDING_HITS } from "./tool-index-wordings.js";
import { isSparse, sparseOf, type SparseVector } from "./sparse-vector.js";
import {
  type ClassifierSample,
  classifierTerms,
  classifierZ,
  fitWordingClassifier,
  type WordingClassifier,
  type WordingClassifierOptions,
} from "./wording-classifier.js";
import {
  type BackgroundSample,
  calibratedTerms,
  confidenceRaise,
  scoreSpread,
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

/** What is fitted from a partition's wordings, once per change: the backgrounds and the classifier. */
export interface WordingModel {
  backgrounds: WordingBackgrounds;
  /** Absent with fewer than two tools with wordings or with the classifier off. */
  classifier?: WordingClassifier;
}

/** The part of a partition's index state scoring reads (and where it keeps the wordings' model). */
export interface ScoringState {
  parts: ReadonlyMap<string, number>;
  wordings: ReadonlyMap<string, ReadonlyMap<string, string>>;
  wordingCount: number;
  /** The wordings' model (named for its first part), until the wordings change. */
  backgrounds?: WordingModel;
  /**
   * Each request vector's wording evidence ({@link evidenceOf}), until the wordings change: a
   * card applied changes card scores, not what the wordings match, and a review's applies ask
   * about the same requests (the index keeps one vector per request text).
   */
  evidence?: WeakMap<RoutingVector, { best: number; evidence: Map<string, number> }>;
}

/** Forgets what was fitted on or read from the wordings: they changed. */
export function forgetWordings(state: ScoringState): void {
  state.backgrounds = undefined;
  state.evidence = undefined;
}

/** The options scoring with wordings reads. */
export type WordingScoringOptions = WordingCalibrationOptions &
  WordingClassifierOptions & { sample: number; confidence: number };

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

/** How many wordings each tool with wordings holds. */
function wordingCounts(state: ScoringState): Map<string, number> {
  return new Map([...state.wordings].map(([tool, kept]) => [tool, kept.size]));
}

/** Each tool's wording evidence for a request vector (`wordingEvidence` over the first {@link WORDING_HITS} hits). */
export async function evidenceOf(
  host: ScoringHost,
  state: ScoringState,
  vector: RoutingVector,
  best: number,
  counts?: ReadonlyMap<string, number>,
): Promise<Map<string, number>> {
  const kept = state.evidence?.get(vector);
  if (kept?.best === best) return kept.evidence;
  const hits = await host.search(vector, Math.min(state.wordingCount, WORDING_HITS), {
    partition: wordingPartition(host.partition),
  });
  const truncated = state.wordingCount > hits.length;
  const evidence = wordingEvidence({ hits, truncated }, counts ?? wordingCounts(state), best);
  (state.evidence ??= new WeakMap()).set(vector, { best, evidence });
  return evidence;
}

/**
 * What each tool's wordings add to its card's score (`cards`) for a request vector: the
 * calibrated term, less what the classifier takes (sparse vectors only), plus the raise every
 * tool of `cards` gets alike (see `confidenceRaise`).
 */
export async function calibratedWordingTerms(
  host: ScoringHost,
  state: ScoringState,
  vector: RoutingVector,
  cards: ReadonlyMap<string, number>,
  options: WordingScoringOptions,
): Promise<Map<string, number>> {
  const model = await wordingModelOf(host, state, options);
  const counts = wordingCounts(state);
  const evidence = await evidenceOf(host, state, vector, options.best, counts);
  const terms = calibratedTerms(cards, evidence, counts, model.backgrounds, options);
  if (model.classifier) {
    const spread = scoreSpread(cards, terms);
    const taken = classifierTerms(classifierZ(model.classifier, sparse(vector)), counts, spread, options);
    for (const [tool, t] of taken) terms.set(tool, (terms.get(tool) ?? 0) + t);
  }
  const raise = confidenceRaise(evidence, counts, options.best, options.confidence);
  if (raise !== 0) for (const tool of cards.keys()) terms.set(tool, (terms.get(tool) ?? 0) + raise);
  return terms;
}

/**
 * The wordings' model, kept in the state until the wordings change: each tool's background
 * (`wordingBackgrounds`) from a spread of `sample` stored wordings routed as requests (where a
 * tool has fewer than {@link MIN_BACKGROUND_SAMPLES} of other tools', as when one tool has them
 * all, the other tools' own texts are routed too), and the classifier fitted on every stored
 * wording's vector (when the vectors are sparse and `classifier` is above 0).
 */
export async function wordingModelOf(
  host: ScoringHost,
  state: ScoringState,
  options: { best: number; sample: number; classifier: number },
): Promise<WordingModel> {
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
  const classifier = options.classifier > 0 ? await classifierOf(host, wordings) : undefined;
  const model: WordingModel = { backgrounds, ...(classifier ? { classifier } : {}) };
  // Until the wordings change (the index forgets it then).
  state.backgrounds = model;
  return model;
}

/**
 * A routing vector as the classifier reads it: its nonzero entries (a dense vector, such as the
 * sentence-encoder blend's, is mostly the lexical part's zeros and its encoder's few hundred).
 */
function sparse(vector: RoutingVector): SparseVector {
  return isSparse(vector) ? vector : sparseOf(vector);
}

/** The classifier over every stored wording (tools and texts sorted), on sparse and dense vectors alike. */
async function classifierOf(
  host: ScoringHost,
  wordings: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Promise<WordingClassifier | undefined> {
  const texts: { tool: string; text: string }[] = [];
  for (const tool of [...wordings.keys()].sort()) {
    for (const text of [...wordings.get(tool)!.values()].sort()) texts.push({ tool, text });
  }
  if (new Set(texts.map((t) => t.tool)).size < 2) return undefined;
  const vectors = await host.embed(texts.map((t) => t.text));
  const samples: ClassifierSample[] = [];
  for (let i = 0; i < texts.length; i++) {
    const vector = vectors[i];
    samples.push({ tool: texts[i].tool, vector: sparse(vector) });
  }
  return fitWordingClassifier(samples);
}
