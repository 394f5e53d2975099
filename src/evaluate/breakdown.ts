/**
 * Figures of a selection run beyond the first pick, as pure functions of its cases: recall@k of
 * the router's ranking, the "no tool" decision's separation (AUROC) and its precision and recall
 * at the threshold, and all of them again per value of a case field (`category`, `kind`,
 * MetaTool's `source`).
 */
import { accuracyOf, type CaseResult } from "./confusion.js";
import { hitAtK, mean, type NoToolFigures, noToolFigures } from "./metrics.js";

/** Recall@k of a ranking: the share of cases needing a tool with a right one among the first k. */
export interface RankingFigures {
  /** Cases that need a tool and were ranked. */
  cases: number;
  /** One entry per k, ascending. A case counts when any tool of its `expect` is among the first k. */
  recallAtK: { k: number; recall: number }[];
}

/** The figures of the cases that hold one value of a field. */
export interface GroupFigures {
  /** The field's value (`(none)` for cases without the field). */
  value: string;
  cases: number;
  /** Of them, cases that need no tool. */
  noToolCases: number;
  /** Accuracy of the first pick over the group's counted outcomes (null when none was counted). */
  accuracy: number | null;
  correct: number;
  counted: number;
  /** Recall@k of its cases that need a tool, when they were ranked. */
  ranking?: RankingFigures;
  /** "No tool" figures with the group's cases standing in for their kind (see {@link noToolOfCases}). */
  noTool?: NoToolFigures;
  /** The fitted model's "no tool" figures for the group, the same way (cross-fitted margins). */
  abstainModel?: NoToolFigures;
}

/** A run's figures by the values of one field. */
export interface Breakdown {
  field: string;
  /** One entry per value, the most cases first. */
  values: GroupFigures[];
}

/** The value of cases that lack the field. */
export const NO_VALUE = "(none)";

/** Recall@k over the ranked cases that need a tool; undefined when none was ranked. */
export function rankingOf(cases: readonly CaseResult[], ks: readonly number[]): RankingFigures | undefined {
  const ranked = cases.filter((c) => c.expect.length > 0 && c.ranked !== undefined);
  if (ranked.length === 0) return undefined;
  return {
    cases: ranked.length,
    recallAtK: [...ks]
      .sort((a, b) => a - b)
      .map((k) => ({ k, recall: mean(ranked.map((c) => hitAtK(c.ranked!, c.expect, k))) })),
  };
}

/**
 * "No tool" figures of the selector's best scores (`scores[i]` is case `i`'s), read at
 * `threshold` (below it, nothing is offered). With `members`, the group's cases stand in for
 * their kind: its cases that need a tool (or every such case of the run, when it has none)
 * against its cases that need none (or every such case, when it has none). So a value that holds
 * only no-tool cases (MetaTool's `negative`) is judged against every case that needs a tool.
 * Undefined without scores or without cases of both kinds.
 */
export function noToolOfCases(
  cases: readonly CaseResult[],
  scores: readonly number[] | undefined,
  threshold: number | undefined,
  members?: ReadonlySet<number>,
): NoToolFigures | undefined {
  if (!scores || scores.length !== cases.length) return undefined;
  const served: number[] = [];
  const none: number[] = [];
  const groupServed: number[] = [];
  const groupNone: number[] = [];
  cases.forEach((c, i) => {
    const needsNone = c.expect.length === 0;
    (needsNone ? none : served).push(scores[i]);
    if (members?.has(i)) (needsNone ? groupNone : groupServed).push(scores[i]);
  });
  const positives = members && groupServed.length > 0 ? groupServed : served;
  const negatives = members && groupNone.length > 0 ? groupNone : none;
  if (positives.length === 0 || negatives.length === 0) return undefined;
  return noToolFigures(positives, negatives, threshold);
}

/** The figures of the run's cases by each value of `field` (cases without it under {@link NO_VALUE}). */
export function breakdownBy(
  cases: readonly CaseResult[],
  field: string,
  options: { ks: readonly number[]; scores?: readonly number[]; threshold?: number; margins?: readonly number[] },
): Breakdown {
  const groups = new Map<string, number[]>();
  cases.forEach((c, i) => {
    const value = c.fields?.[field] ?? NO_VALUE;
    groups.set(value, [...(groups.get(value) ?? []), i]);
  });
  const values = [...groups].map(([value, indices]): GroupFigures => {
    const members = indices.map((i) => cases[i]);
    const accuracy = accuracyOf(members);
    const ranking = rankingOf(members, options.ks);
    const noTool = noToolOfCases(cases, options.scores, options.threshold, new Set(indices));
    const abstainModel = noToolOfCases(cases, options.margins, 0, new Set(indices));
    return {
      value,
      cases: members.length,
      noToolCases: members.filter((c) => c.expect.length === 0).length,
      accuracy: accuracy.accuracy,
      correct: accuracy.correct,
      counted: accuracy.counted,
      ...(ranking ? { ranking } : {}),
      ...(noTool ? { noTool } : {}),
      ...(abstainModel ? { abstainModel } : {}),
    };
  });
  values.sort((a, b) => b.cases - a.cases || a.value.localeCompare(b.value));
  return { field, values };
}
