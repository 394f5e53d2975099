/**
 * The fitted "no tool" model (`fitAbstainModel`) measured on a selection run's own cases, which
 * carry no traffic to fit on: cross-fitted, each part of the cases scored by a model fitted on the
 * other parts (by the cases' folds when they hold two or more, else five parts by position), so
 * no case is scored by a model that saw it. Pure.
 */
import { type AbstainExample, abstainProbability, fitAbstainModel } from "./abstain-model.js";
import type { CaseResult } from "./confusion.js";

/** Parts cases are split into when they do not hold two folds. */
const PARTS = 5;

/**
 * Each case's margin over its part's threshold (`p - threshold`: below 0 the model abstains; with
 * no threshold fitted, `p`, never below 0), or undefined when the run has no scores or some part's
 * training cases held too few of either kind to fit.
 */
export function crossFittedMargins(
  cases: readonly CaseResult[],
  scores: readonly number[] | undefined,
  second: readonly number[] | undefined,
): number[] | undefined {
  if (!scores || scores.length !== cases.length) return undefined;
  const examples: AbstainExample[] = cases.map((c, i) => ({
    scores: second && Number.isFinite(second[i]) ? [scores[i], second[i]] : [scores[i]],
    ...(c.ranked?.[0] !== undefined ? { tool: c.ranked[0] } : {}),
    request: c.turn,
    served: c.expect.length > 0,
  }));
  const folds = [...new Set(cases.map((c) => c.fold).filter((f): f is number => f !== undefined))];
  const partOf = (i: number): number =>
    folds.length >= 2 && cases[i].fold !== undefined ? folds.indexOf(cases[i].fold!) : (i % PARTS) + folds.length;
  const parts = [...new Set(cases.map((_, i) => partOf(i)))];
  const margins = new Array<number>(cases.length);
  for (const part of parts) {
    const model = fitAbstainModel(examples.filter((_, i) => partOf(i) !== part));
    if (!model) return undefined;
    examples.forEach((e, i) => {
      if (partOf(i) === part) margins[i] = abstainProbability(model, e) - (model.threshold ?? 0);
    });
  }
  return margins;
}
