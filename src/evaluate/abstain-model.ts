/**
 * A "no tool" decision that reads more than the top score: the gap to the second tool, the top
 * score against what the partition's served requests scored on that same tool (its own
 * calibration), and plain features of the request (its length, a question mark, its share of
 * content words, digits, "you"). A logistic regression fitted on one partition's traffic
 * (requests a tool served against those that ended with no tool call), pure and deterministic;
 * it reads no request text it keeps: the model holds weights and per-tool score statistics only.
 */
import { definedOnly } from "../internal.js";
import { isContentWord, splitWords } from "../text/tokenize.js";
import { abstainLabel, abstainThreshold, type AbstainOptions, DEFAULT_ABSTAIN_OPTIONS } from "./calibrate-abstain.js";
import type { TurnRecord } from "../ledger/schema.js";
import type { ToolIndex } from "../routing/tool-index.js";

/** One routed request as the model reads it. */
export interface AbstainObservation {
  /** Routing's scores, best first (the first two are read). */
  scores: readonly number[];
  /** The best-scoring tool, when routing offered one. */
  tool?: string;
  /** The request as routed (read for its features, never kept). */
  request: string;
}

/** A routed request and whether a tool served it. */
export interface AbstainExample extends AbstainObservation {
  served: boolean;
}

/** The features, in the order of {@link AbstainModel.weights}. */
export const ABSTAIN_FEATURES = Object.freeze([
  "score",
  "gap",
  "toolZ",
  "words",
  "question",
  "contentShare",
  "digits",
  "secondPerson",
] as const);

/** Mean and spread of the best score of served requests, overall and per best tool. */
export interface ScoreCalibration {
  mean: number;
  sd: number;
  /** Per best tool: mean and spread, shrunk toward the overall ones (few samples move little). */
  tools: Record<string, { mean: number; sd: number }>;
}

/** A fitted "no tool" model (plain JSON). */
export interface AbstainModel {
  kind: "tool-lessons/abstain-model";
  version: 1;
  features: string[];
  weights: number[];
  bias: number;
  /** Feature standardisation: `(x - means[i]) / scales[i]`. */
  means: number[];
  scales: number[];
  calibration: ScoreCalibration;
  /**
   * Probability of needing a tool below which routing should offer nothing, fitted like
   * `abstainThreshold` (best F1 for "no tool" within the served-loss budget); absent when none fits.
   */
  threshold?: number;
}

/** Options of {@link fitAbstainModel}: those of the score threshold, plus the fit's own. */
export interface AbstainModelOptions extends AbstainOptions {
  /**
   * L2 penalty on the standardised weights (per sample).
   * @default 0.001
   */
  l2?: number;
  /**
   * Served samples a tool's own calibration counts as worth against the overall one.
   * @default 5
   */
  shrink?: number;
}

/** The defaults of {@link AbstainModelOptions} beyond {@link DEFAULT_ABSTAIN_OPTIONS}. */
export const DEFAULT_ABSTAIN_MODEL_OPTIONS: Readonly<{ l2: number; shrink: number }> = Object.freeze({
  l2: 0.001,
  shrink: 5,
});

const SECOND_PERSON: ReadonlySet<string> = new Set(["you", "your", "yours", "yourself"]);
const NEWTON_STEPS = 25;

function meanSd(values: readonly number[]): { mean: number; sd: number } {
  const mean = values.reduce((s, x) => s + x, 0) / Math.max(1, values.length);
  const variance = values.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, values.length);
  return { mean, sd: Math.sqrt(variance) };
}

/** The per-tool calibration of the served requests' best scores. Pure. */
export function scoreCalibration(examples: readonly AbstainExample[], shrink: number): ScoreCalibration {
  const served = examples.filter((e) => e.served && Number.isFinite(e.scores[0]));
  const overall = meanSd(served.map((e) => e.scores[0]));
  const byTool = new Map<string, number[]>();
  for (const e of served) if (e.tool !== undefined) byTool.set(e.tool, [...(byTool.get(e.tool) ?? []), e.scores[0]]);
  const tools: ScoreCalibration["tools"] = {};
  for (const [tool, scores] of [...byTool].sort(([a], [b]) => a.localeCompare(b))) {
    const own = meanSd(scores);
    const n = scores.length;
    tools[tool] = {
      mean: (n * own.mean + shrink * overall.mean) / (n + shrink),
      sd: Math.sqrt((n * own.sd ** 2 + shrink * overall.sd ** 2) / (n + shrink)),
    };
  }
  return { ...overall, tools };
}

/** The raw features of one routed request, in {@link ABSTAIN_FEATURES} order. Pure. */
export function abstainFeatures(observation: AbstainObservation, calibration: ScoreCalibration): number[] {
  const first = Number.isFinite(observation.scores[0]) ? observation.scores[0] : -1;
  const second = Number.isFinite(observation.scores[1]) ? observation.scores[1] : first;
  const own = (observation.tool !== undefined ? calibration.tools[observation.tool] : undefined) ?? calibration;
  const words = splitWords(observation.request);
  const content = words.filter((w) => isContentWord(w)).length;
  return [
    first,
    first - second,
    (first - own.mean) / (own.sd || 1),
    Math.log1p(words.length),
    observation.request.includes("?") ? 1 : 0,
    words.length === 0 ? 0 : content / words.length,
    /\d/.test(observation.request) ? 1 : 0,
    words.some((w) => SECOND_PERSON.has(w.toLowerCase())) ? 1 : 0,
  ];
}

/** Probability that the request needs a tool, by the model. Pure. */
export function abstainProbability(model: AbstainModel, observation: AbstainObservation): number {
  const x = abstainFeatures(observation, model.calibration);
  let z = model.bias;
  for (let i = 0; i < x.length; i++) z += model.weights[i] * ((x[i] - model.means[i]) / model.scales[i]);
  return 1 / (1 + Math.exp(-z));
}

/** Solves `a x = b` (small, symmetric positive definite) by Gaussian elimination with pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const d = m[c][c] || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / d;
      if (f !== 0) for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => row[n] / (row[i] || 1e-12));
}

/**
 * Fits the "no tool" model on a partition's routed requests (Newton's method on the L2-penalised
 * logistic loss, the bias unpenalised), and its threshold. Undefined with fewer than `minNoTool`
 * no-tool or `minServed` served examples. Pure and deterministic.
 */
export function fitAbstainModel(
  examples: readonly AbstainExample[],
  options: AbstainModelOptions = {},
): AbstainModel | undefined {
  const o = { ...DEFAULT_ABSTAIN_OPTIONS, ...DEFAULT_ABSTAIN_MODEL_OPTIONS, ...definedOnly(options) };
  const noTool = examples.filter((e) => !e.served).length;
  if (noTool < o.minNoTool || examples.length - noTool < o.minServed) return undefined;
  const calibration = scoreCalibration(examples, o.shrink);
  const raw = examples.map((e) => abstainFeatures(e, calibration));
  const d = ABSTAIN_FEATURES.length;
  const means: number[] = [];
  const scales: number[] = [];
  for (let j = 0; j < d; j++) {
    const { mean, sd } = meanSd(raw.map((x) => x[j]));
    means.push(mean);
    scales.push(sd || 1);
  }
  const xs = raw.map((x) => [1, ...x.map((v, j) => (v - means[j]) / scales[j])]);
  const ys = examples.map((e) => (e.served ? 1 : 0));
  const n = xs.length;
  let w = new Array<number>(d + 1).fill(0);
  for (let step = 0; step < NEWTON_STEPS; step++) {
    const grad = new Array<number>(d + 1).fill(0);
    const hess = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i++) {
      const x = xs[i];
      let z = 0;
      for (let j = 0; j <= d; j++) z += w[j] * x[j];
      const p = 1 / (1 + Math.exp(-z));
      const r = p - ys[i];
      const s = Math.max(p * (1 - p), 1e-9);
      for (let j = 0; j <= d; j++) {
        grad[j] += r * x[j];
        for (let k = j; k <= d; k++) hess[j][k] += s * x[j] * x[k];
      }
    }
    for (let j = 0; j <= d; j++) {
      for (let k = 0; k < j; k++) hess[j][k] = hess[k][j];
      if (j > 0) {
        grad[j] += o.l2 * n * w[j];
        hess[j][j] += o.l2 * n;
      }
    }
    const delta = solve(hess, grad);
    w = w.map((v, j) => v - delta[j]);
    if (Math.max(...delta.map(Math.abs)) < 1e-8) break;
  }
  const model: AbstainModel = {
    kind: "tool-lessons/abstain-model",
    version: 1,
    features: [...ABSTAIN_FEATURES],
    bias: w[0],
    weights: w.slice(1),
    means,
    scales,
    calibration,
  };
  const threshold = abstainThreshold(
    examples.map((e) => ({ score: abstainProbability(model, e), served: e.served })),
    o,
  );
  return threshold === undefined ? model : { ...model, threshold };
}

/**
 * A partition's newest turns routed by `index` as it is now (the best two scores), labelled as
 * `calibrateAbstain` labels them; what {@link fitAbstainModel} and `abstainThreshold` read.
 */
export async function abstainExamples(
  index: ToolIndex,
  partition: string,
  turns: readonly Pick<TurnRecord, "request" | "servedBy" | "calls">[],
  options: Pick<AbstainOptions, "maxSamples"> = {},
): Promise<AbstainExample[]> {
  const maxSamples = options.maxSamples ?? DEFAULT_ABSTAIN_OPTIONS.maxSamples;
  const out: AbstainExample[] = [];
  for (const turn of turns.slice(-maxSamples)) {
    const served = abstainLabel(turn);
    if (served === undefined) continue;
    const offers = await index.route(partition, turn.request, { k: 2 });
    out.push({
      scores: offers.length > 0 ? offers.map((o) => o.score) : [Number.NEGATIVE_INFINITY],
      ...(offers[0] ? { tool: offers[0].tool } : {}),
      request: turn.request,
      served,
    });
  }
  return out;
}
