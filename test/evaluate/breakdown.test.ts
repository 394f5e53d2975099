import { describe, expect, it } from "vitest";
import { breakdownBy, NO_VALUE, noToolOfCases, rankingOf } from "../../src/evaluate/breakdown.js";
import type { CaseResult } from "../../src/evaluate/confusion.js";
import { auroc } from "../../src/evaluate/metrics.js";

/** A case with one outcome, a ranking and fields. */
function c(
  expect: string[],
  pick: string | null,
  ranked: string[] | undefined,
  fields?: Record<string, string>,
): CaseResult {
  return {
    id: `c${Math.random()}`,
    turn: "t",
    expect,
    outcomes: [{ tool: pick }],
    ...(ranked ? { ranked } : {}),
    ...(fields ? { fields } : {}),
  };
}

const CASES: CaseResult[] = [
  c(["a"], "a", ["a", "b", "c"], { category: "x" }),
  c(["b"], "a", ["a", "c", "b"], { category: "x" }),
  c(["c", "b"], "a", ["a", "d", "e"], { category: "y" }),
  c([], null, ["d", "a", "b"], { category: "chat" }),
  c([], "a", ["a", "b", "c"], { category: "chat" }),
  c(["d"], "d", ["d"]),
];
// Best scores, case by case; the threshold is 0.3.
const SCORES = [0.9, 0.5, 0.2, 0.1, 0.4, 0.8];

describe("recall@k of the ranking", () => {
  it("counts a case needing a tool when any expected tool is among the first k; no-tool cases are left out", () => {
    const r = rankingOf(CASES, [5, 1, 3])!;
    expect(r.cases).toBe(4);
    // k=1: a, d; k=3: + b at rank 3; k=5: the case expecting c or b never sees them.
    expect(r.recallAtK).toEqual([
      { k: 1, recall: 2 / 4 },
      { k: 3, recall: 3 / 4 },
      { k: 5, recall: 3 / 4 },
    ]);
    expect(
      rankingOf(
        CASES.map(({ ranked: _, ...rest }) => rest),
        [1],
      ),
    ).toBeUndefined();
  });
});

describe("the no-tool figures", () => {
  it("over the run: AUROC of the best score, precision and recall of abstaining below the threshold", () => {
    const n = noToolOfCases(CASES, SCORES, 0.3)!;
    expect(n.auroc).toBeCloseTo(auroc([0.9, 0.5, 0.2, 0.8], [0.1, 0.4]));
    // Below 0.3: the 0.1 no-tool case (right) and the 0.2 tool case (wrong).
    expect(n).toMatchObject({ precision: 0.5, recall: 0.5, threshold: 0.3 });
    expect(noToolOfCases(CASES, undefined, 0.3)).toBeUndefined();
    expect(noToolOfCases(CASES.slice(0, 3), SCORES.slice(0, 3), 0.3)).toBeUndefined();
  });

  it("for a group, its cases stand in for their kind; a one-kind group is judged against the other kind of the whole run", () => {
    // Group "chat" has only no-tool cases: against every case needing a tool.
    const chat = noToolOfCases(CASES, SCORES, 0.3, new Set([3, 4]))!;
    expect(chat.auroc).toBeCloseTo(auroc([0.9, 0.5, 0.2, 0.8], [0.1, 0.4]));
    // Group "y" has one tool case (0.2, below the threshold): against every no-tool case.
    const y = noToolOfCases(CASES, SCORES, 0.3, new Set([2]))!;
    expect(y.auroc).toBeCloseTo(auroc([0.2], [0.1, 0.4]));
    expect(y).toMatchObject({ precision: 0.5, recall: 0.5 });
  });
});

describe("the breakdown by a field", () => {
  it("gives accuracy, recall@k and the no-tool figures per value, the largest group first", () => {
    const b = breakdownBy(CASES, "category", { ks: [1, 3], scores: SCORES, threshold: 0.3 });
    expect(b.field).toBe("category");
    expect(b.values.map((v) => [v.value, v.cases, v.noToolCases])).toEqual([
      ["chat", 2, 2],
      ["x", 2, 0],
      [NO_VALUE, 1, 0],
      ["y", 1, 0],
    ]);
    const x = b.values.find((v) => v.value === "x")!;
    expect(x).toMatchObject({ accuracy: 0.5, correct: 1, counted: 2 });
    expect(x.ranking).toEqual({
      cases: 2,
      recallAtK: [
        { k: 1, recall: 0.5 },
        { k: 3, recall: 1 },
      ],
    });
    expect(x.noTool!.auroc).toBeCloseTo(auroc([0.9, 0.5], [0.1, 0.4]));
    const chat = b.values.find((v) => v.value === "chat")!;
    expect(chat.accuracy).toBe(0.5);
    expect(chat.ranking).toBeUndefined();
    expect(chat.noTool).toMatchObject({ recall: 0.5, threshold: 0.3 });
    // Without scores (a chat model): accuracy and the ranking only.
    expect(breakdownBy(CASES, "category", { ks: [1] }).values.every((v) => v.noTool === undefined)).toBe(true);
  });
});
