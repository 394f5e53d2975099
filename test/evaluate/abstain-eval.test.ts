import { describe, expect, it } from "vitest";
import { crossFittedMargins } from "../../src/evaluate/abstain-eval.js";
import type { CaseResult } from "../../src/evaluate/confusion.js";
import { auroc } from "../../src/evaluate/metrics.js";
import { seededRandom } from "../../src/internal.js";

/** Cases whose best score barely separates the kinds while their wording does (chatter is short). */
function cases(n: number, folds?: number): { cases: CaseResult[]; scores: number[]; second: number[] } {
  const next = seededRandom(7);
  const out: CaseResult[] = [];
  const scores: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < n; i++) {
    const served = next() < 0.75;
    const turn = served ? `please track parcel number ${i} for my order today` : "hi there";
    out.push({
      id: `c${i}`,
      turn,
      expect: served ? ["track"] : [],
      outcomes: [{ tool: "track" }],
      ranked: ["track", "refund"],
      ...(folds ? { fold: i % folds } : {}),
    });
    const top = 0.3 + 0.1 * next();
    scores.push(top);
    second.push(top - (served ? 0.1 : 0.01) * next());
  }
  return { cases: out, scores, second };
}

describe("crossFittedMargins", () => {
  it("scores every case by a model fitted without it, and separates what the score alone cannot", () => {
    const run = cases(400);
    const margins = crossFittedMargins(run.cases, run.scores, run.second)!;
    expect(margins).toHaveLength(400);
    const served = (xs: number[]) => xs.filter((_, i) => run.cases[i].expect.length > 0);
    const none = (xs: number[]) => xs.filter((_, i) => run.cases[i].expect.length === 0);
    expect(auroc(served(run.scores), none(run.scores))).toBeLessThan(0.7);
    expect(auroc(served(margins), none(margins))).toBeGreaterThan(0.95);
    // Below 0 the model abstains: mostly on the cases that need no tool.
    const abstained = margins.map((m, i) => (m < 0 ? i : -1)).filter((i) => i >= 0);
    expect(abstained.length).toBeGreaterThan(0);
    expect(abstained.filter((i) => run.cases[i].expect.length === 0).length).toBeGreaterThan(abstained.length / 2);
  });

  it("splits by the cases' folds when they hold two or more, and gives nothing without scores or enough of a kind", () => {
    const run = cases(400, 3);
    expect(crossFittedMargins(run.cases, run.scores, run.second)).toHaveLength(400);
    expect(crossFittedMargins(run.cases, undefined, undefined)).toBeUndefined();
    const few = cases(30);
    expect(crossFittedMargins(few.cases, few.scores, few.second)).toBeUndefined();
  });
});
