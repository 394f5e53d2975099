/**
 * Statistics of a tool's memory window, computed by code: total and recent calls, success rate
 * and average score overall and recent, average time and average tokens.
 */
import type { EvaluatedCall, ToolStats } from "../ledger/schema.js";

/** Rates and scores are kept to 4 decimals, times and tokens to 1, so stored figures are stable. */
const round = (value: number, decimals: number): number => {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
};

function mean(values: readonly number[], decimals: number): number | null {
  if (values.length === 0) return null;
  return round(values.reduce((a, b) => a + b, 0) / values.length, decimals);
}

/**
 * The statistics of a window (oldest first): "recent" is its newest `recent` calls. Averages of
 * time and tokens count only the calls that have them; with nothing to average a figure is `null`.
 */
export function toolStats(window: readonly EvaluatedCall[], recent: number): ToolStats {
  const last = window.slice(Math.max(0, window.length - recent));
  const successRate = (rows: readonly EvaluatedCall[]) =>
    mean(
      rows.map((r) => (r.success ? 1 : 0)),
      4,
    );
  const avgScore = (rows: readonly EvaluatedCall[]) =>
    mean(
      rows.map((r) => r.score),
      4,
    );
  return {
    totalCalls: window.length,
    recentCalls: last.length,
    successRate: successRate(window),
    recentSuccessRate: successRate(last),
    avgScore: avgScore(window),
    recentAvgScore: avgScore(last),
    avgLatencyMs: mean(
      window.flatMap((r) => (r.latencyMs === undefined ? [] : [r.latencyMs])),
      1,
    ),
    avgTokens: mean(
      window.flatMap((r) => (r.tokens === undefined ? [] : [r.tokens])),
      1,
    ),
  };
}
