/**
 * The "no tool" path: a score below which routing offers nothing, calibrated from one partition's
 * own traffic (requests that ended with no tool call against requests a tool served). Off by
 * default: nothing in the package abstains unless a caller passes the threshold on, e.g. as the
 * router's `minScore`.
 */
import type { TurnRecord } from "../ledger/schema.js";
import { definedOnly } from "../internal.js";
import type { ToolIndex } from "../routing/tool-index.js";

/** One recorded request as the calibration reads it: routing's best score and whether a tool served it. */
export interface AbstainSample {
  /** Routing's best score for the request (the first offer's). */
  score: number;
  /** True when a tool served it, false when the run called no tool. */
  served: boolean;
}

/** Options of {@link abstainThreshold} and {@link calibrateAbstain}. */
export interface AbstainOptions {
  /**
   * Largest share of served requests the threshold may turn away: abstaining on a request a tool
   * would have served costs more than answering one that needs no tool.
   * @default 0.05
   */
  maxServedLoss?: number;
  /**
   * Fewest no-tool requests to calibrate from; with fewer there is no threshold (no abstention).
   * @default 10
   */
  minNoTool?: number;
  /**
   * Fewest served requests to calibrate from; with fewer there is no threshold.
   * @default 50
   */
  minServed?: number;
  /**
   * Newest turns {@link calibrateAbstain} reads (each is routed once).
   * @default 5000
   */
  maxSamples?: number;
}

/** The defaults of {@link AbstainOptions}. */
export const DEFAULT_ABSTAIN_OPTIONS: Readonly<Required<AbstainOptions>> = Object.freeze({
  maxServedLoss: 0.05,
  minNoTool: 10,
  minServed: 50,
  maxSamples: 5000,
});

/**
 * The score below which routing should offer no tool, or `undefined` when the samples cannot
 * tell (too few of either kind, or no threshold that turns away a no-tool request within the
 * served-loss budget). Among the thresholds that turn away at most `maxServedLoss` of the served
 * requests, the one with the best F1 for "no tool" (ties: the lower, which turns away less).
 * Pure; O(n log n).
 */
export function abstainThreshold(samples: readonly AbstainSample[], options: AbstainOptions = {}): number | undefined {
  const o = { ...DEFAULT_ABSTAIN_OPTIONS, ...definedOnly(options) };
  const sorted = samples.filter((s) => Number.isFinite(s.score)).sort((a, b) => a.score - b.score);
  const noTool = sorted.filter((s) => !s.served).length;
  const served = sorted.length - noTool;
  if (noTool < o.minNoTool || served < o.minServed) return undefined;
  let best: { f1: number; threshold: number } | undefined;
  let below = { noTool: 0, served: 0 };
  for (let i = 1; i <= sorted.length; i++) {
    const s = sorted[i - 1];
    below = s.served ? { ...below, served: below.served + 1 } : { ...below, noTool: below.noTool + 1 };
    // Thresholds sit between distinct scores: everything at or below sorted[i - 1] is turned away.
    if (i < sorted.length && sorted[i].score === s.score) continue;
    if (below.served > o.maxServedLoss * served) break;
    const f1 = (2 * below.noTool) / (2 * below.noTool + below.served + (noTool - below.noTool));
    const threshold = i < sorted.length ? (s.score + sorted[i].score) / 2 : s.score + 1e-9;
    if (f1 > 0 && (!best || f1 > best.f1)) best = { f1, threshold };
  }
  return best?.threshold;
}

/** Whether a turn counts for calibration, and how: served, no tool called, or neither (a failed run). */
export function abstainLabel(turn: Pick<TurnRecord, "servedBy" | "calls">): boolean | undefined {
  if (turn.servedBy !== undefined) return true;
  return turn.calls.length === 0 ? false : undefined;
}

/**
 * {@link abstainThreshold} over a partition's newest turns, each request routed by `index` as it
 * is now (so the threshold follows what routing has learned since). Turns whose run called tools
 * that all failed count for neither side.
 */
export async function calibrateAbstain(
  index: ToolIndex,
  partition: string,
  turns: readonly Pick<TurnRecord, "request" | "servedBy" | "calls">[],
  options: AbstainOptions = {},
): Promise<number | undefined> {
  const o = { ...DEFAULT_ABSTAIN_OPTIONS, ...definedOnly(options) };
  const samples: AbstainSample[] = [];
  for (const turn of turns.slice(-o.maxSamples)) {
    const served = abstainLabel(turn);
    if (served === undefined) continue;
    const [first] = await index.route(partition, turn.request, { k: 1 });
    samples.push({ score: first?.score ?? Number.NEGATIVE_INFINITY, served });
  }
  return abstainThreshold(samples, o);
}
