/**
 * The "no tool" figures of `simulate` beyond the best score: the fitted abstention model
 * (`fitAbstainModel`: score gap, the score against the partition's own calibration, plain request
 * features) scored on the eval requests, and both decisions per kind where the requests say one.
 */
import { abstainProbability, type AbstainExample, type AbstainModel } from "./abstain-model.js";
import { abstainThreshold, type AbstainOptions } from "./calibrate-abstain.js";
import { fitAbstainModel } from "./abstain-model.js";
import type { Offer } from "../ledger/schema.js";
import { type NoToolFigures, noToolFigures } from "./metrics.js";

/** One eval request as routed: its offers, best first. */
export interface RoutedEval {
  query: string;
  expect: readonly string[];
  kind?: string;
  offers: readonly Offer[];
}

/** Both "no tool" decisions of one state of the index (before or after learning). */
export interface AbstainDecisions {
  /** The best score against the threshold calibrated on the traffic (`calibrateAbstain`). */
  threshold?: number;
  /** The fitted model, when the traffic held enough of both kinds. */
  model?: AbstainModel;
}

/** The fitted threshold and model from the traffic's routed requests (one routing pass for both). */
export function fitDecisions(examples: readonly AbstainExample[], options: AbstainOptions): AbstainDecisions {
  const threshold = abstainThreshold(
    examples.map((e) => ({ score: e.scores[0], served: e.served })),
    options,
  );
  const model = fitAbstainModel(examples, options);
  return { ...(threshold !== undefined ? { threshold } : {}), ...(model ? { model } : {}) };
}

/** "No tool" figures of the model's probabilities (AUROC; precision and recall at its threshold). */
export function modelFigures(
  routes: readonly RoutedEval[],
  model: AbstainModel | undefined,
): NoToolFigures | undefined {
  if (!model) return undefined;
  const served: number[] = [];
  const none: number[] = [];
  for (const r of routes) {
    const p = abstainProbability(model, {
      scores: r.offers.map((o) => o.score),
      ...(r.offers[0] ? { tool: r.offers[0].tool } : {}),
      request: r.query,
    });
    (r.expect.length === 0 ? none : served).push(p);
  }
  return noToolFigures(served, none, model.threshold);
}

/** The figures of one kind of request: its no-tool requests against every request that needs a tool (or its own, when it has some). */
export interface KindFigures {
  kind: string;
  n: number;
  score?: NoToolFigures;
  model?: NoToolFigures;
}

/**
 * Per value of `kind` (requests without one are left out): the score's and the model's "no tool"
 * figures, the kind's requests standing in for their side (a kind of only no-tool requests is
 * judged against every request that needs a tool). Empty when no request says its kind.
 */
export function figuresByKind(routes: readonly RoutedEval[], decisions: AbstainDecisions): KindFigures[] {
  const kinds = [...new Set(routes.map((r) => r.kind).filter((k): k is string => k !== undefined))].sort();
  return kinds.map((kind) => {
    const own = routes.filter((r) => r.kind === kind);
    const needs = own.filter((r) => r.expect.length > 0);
    const none = own.filter((r) => r.expect.length === 0);
    const group = [...(needs.length > 0 ? needs : routes.filter((r) => r.expect.length > 0)), ...none];
    const best = (rs: readonly RoutedEval[]) => rs.map((r) => r.offers[0]?.score ?? Number.NEGATIVE_INFINITY);
    const withBoth = none.length > 0 && group.length > none.length;
    return {
      kind,
      n: own.length,
      ...(withBoth
        ? {
            score: noToolFigures(best(group.filter((r) => r.expect.length > 0)), best(none), decisions.threshold),
          }
        : {}),
      ...(withBoth && decisions.model ? { model: modelFigures(group, decisions.model) } : {}),
    };
  });
}
