/**
 * A discriminative reading of the wordings: an averaged perceptron over the routing vectors of
 * the past requests (the lexical embeddings' sparse vectors: hashed words and character n-grams,
 * weighted and unit length), one class per tool with wordings. Where the calibrated term
 * (`wording-calibration.ts`) asks "how close is this request to the tool's own past requests",
 * the classifier asks "which words tell this tool's requests apart from the other tools'": on
 * even traffic it separates sibling tools the nearest wordings confuse.
 *
 * It knows nothing of the tools without wordings, so it only ever pulls down
 * ({@link classifierTerms}): a tool it ranks below its own first choice for the request loses
 * by how far below, times a weight that grows with the tool's wordings. The classes' scores are
 * standardised per request and no class has a bias, so traffic alone never raises or lowers a
 * tool, and a tool without wordings (which it cannot speak for) is never moved. Pure and
 * deterministic: fitted from the wordings' vectors (tools sorted, a seeded shuffle per pass).
 */
import { seededRandom } from "../internal.js";
import type { SparseVector } from "./sparse-vector.js";

/** Options of the classifier term (the index option `wordings`, see `wordings.ts`). */
export interface WordingClassifierOptions {
  /** The term's most weight, in spreads of the request's scores per classifier spread; 0 turns it off. */
  classifier: number;
  /** A tool's share of `classifier` is `(n / (n + classifierHalf))²`, `n` its wordings. */
  classifierHalf: number;
}

/** Passes of the perceptron over the wordings. */
export const CLASSIFIER_PASSES = 5;

/** Most a tool is pulled down, in classifier spreads below the request's first class. */
export const CLASSIFIER_CLIP = 3;

/** Least spread a request's classifier scores are divided by. */
const MIN_SPREAD = 1e-9;

/**
 * Most classes the classifier holds: the tools with the most wordings (ties by name). Its weights
 * are a dense table of the vectors' dimension by the classes (4 bytes each: 8 MB at 8,192 × 256);
 * a tool past them has few wordings, and the share it would get is small (see {@link classifierTerms}).
 */
export const CLASSIFIER_MAX_CLASSES = 256;

/** A fitted classifier: averaged weights, `dimension × tools.length`, row-major by vector entry. */
export interface WordingClassifier {
  tools: readonly string[];
  dimension: number;
  weights: Float32Array;
}

/** One training example: a stored wording's routing vector and the tool it served. */
export interface ClassifierSample {
  tool: string;
  vector: SparseVector;
}

function classScores(weights: ArrayLike<number>, classes: number, x: SparseVector, into: Float64Array): Float64Array {
  into.fill(0);
  for (let j = 0; j < x.index.length; j++) {
    const base = x.index[j] * classes;
    const v = x.value[j];
    for (let c = 0; c < classes; c++) into[c] += weights[base + c] * v;
  }
  return into;
}

/**
 * Fit the averaged perceptron (no bias) on the samples of the {@link CLASSIFIER_MAX_CLASSES}
 * tools with the most, a seeded shuffle per pass. Undefined when fewer than two tools have
 * samples (nothing to tell apart).
 */
export function fitWordingClassifier(
  samples: readonly ClassifierSample[],
  passes = CLASSIFIER_PASSES,
  seed = 1,
): WordingClassifier | undefined {
  const counts = new Map<string, number>();
  for (const s of samples) counts.set(s.tool, (counts.get(s.tool) ?? 0) + 1);
  const tools = [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, CLASSIFIER_MAX_CLASSES)
    .map(([tool]) => tool)
    .sort();
  if (tools.length < 2) return undefined;
  const classOf = new Map(tools.map((tool, c) => [tool, c]));
  const kept = samples.filter((s) => classOf.has(s.tool));
  const dimension = Math.max(...kept.map((s) => s.vector.dimension));
  const classes = tools.length;
  // The usual lazy average: w (current) and u (sum of step × update); averaged = w - u / step.
  const w = new Float64Array(dimension * classes);
  const u = new Float64Array(dimension * classes);
  const scores = new Float64Array(classes);
  const random = seededRandom(seed);
  const order = kept.map((_, i) => i);
  let step = 1;
  for (let pass = 0; pass < passes; pass++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const i of order) {
      const x = kept[i].vector;
      const truth = classOf.get(kept[i].tool)!;
      classScores(w, classes, x, scores);
      let guess = truth === 0 ? 1 : 0;
      for (let c = 0; c < classes; c++) if (c !== truth && scores[c] > scores[guess]) guess = c;
      if (scores[truth] <= scores[guess]) {
        for (let j = 0; j < x.index.length; j++) {
          const base = x.index[j] * classes;
          const v = x.value[j];
          w[base + truth] += v;
          w[base + guess] -= v;
          u[base + truth] += step * v;
          u[base + guess] -= step * v;
        }
      }
      step += 1;
    }
  }
  const weights = new Float32Array(dimension * classes);
  for (let i = 0; i < weights.length; i++) weights[i] = w[i] - u[i] / step;
  return { tools, dimension, weights };
}

/** Each class's score for a request vector, standardised over the classes (mean 0, spread 1). */
export function classifierZ(model: WordingClassifier, vector: SparseVector): Map<string, number> {
  const classes = model.tools.length;
  const scores = classScores(model.weights, classes, vector, new Float64Array(classes));
  const mean = scores.reduce((s, x) => s + x, 0) / scores.length;
  const sd = Math.sqrt(scores.reduce((s, x) => s + (x - mean) ** 2, 0) / scores.length);
  return new Map(model.tools.map((tool, c) => [tool, (scores[c] - mean) / Math.max(sd, MIN_SPREAD)]));
}

/**
 * What the classifier takes from each tool with wordings for one request, on the scale of the
 * request's scores (`spread`: the spread of every tool's score so far): each tool's standardised
 * classifier score less the best one's (at most {@link CLASSIFIER_CLIP} below), times
 * `classifier × (n / (n + classifierHalf))²` for its `n` wordings. Never positive; the first
 * class and every tool without wordings lose nothing.
 */
export function classifierTerms(
  z: ReadonlyMap<string, number>,
  counts: ReadonlyMap<string, number>,
  spread: number,
  options: WordingClassifierOptions,
): Map<string, number> {
  const out = new Map<string, number>();
  if (options.classifier <= 0 || z.size === 0) return out;
  const first = Math.max(...z.values());
  for (const [tool, zt] of z) {
    const n = counts.get(tool) ?? 0;
    if (n <= 0 || zt >= first) continue;
    const share = (n / (n + options.classifierHalf)) ** 2;
    out.set(tool, options.classifier * spread * share * Math.max(zt - first, -CLASSIFIER_CLIP));
  }
  return out;
}
