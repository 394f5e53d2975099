import { describe, expect, it } from "vitest";
import {
  accuracyOf,
  agreementOf,
  type CaseResult,
  cell,
  confusionMatrix,
  rowOf,
  toolScores,
} from "../../src/evaluate/confusion.js";

const c = (id: string, expect: string[], ...picks: (string | null | Error)[]): CaseResult => ({
  id,
  turn: `turn ${id}`,
  expect,
  outcomes: picks.map((p) => (p instanceof Error ? { error: p.message } : { tool: p })),
});

/** Three runs each: flights right, hotel confused with flights once, a chat turn called a tool, a weather turn got none. */
const CASES: CaseResult[] = [
  c("1", ["flights"], "flights", "flights", "flights"),
  c("2", ["hotel"], "hotel", "flights", "hotel"),
  c("3", [], null, "weather", null),
  c("4", ["weather"], null, null, new Error("rate limited after 4 retries")),
  c("5", ["flights", "hotel"], "hotel", "hotel", "weather"),
];

describe("confusion matrix", () => {
  it("rows the expected tool, columns the pick, the no-tool row and column last; errors left out", () => {
    const m = confusionMatrix(CASES);
    expect(m.labels).toEqual(["flights", "hotel", "weather", null]);
    expect(m.counts).toEqual([
      // case 5's third run picked weather: wrong, so it counts on its first expected tool's row.
      [3, 0, 1, 0],
      // case 2 (hotel) twice right, once flights; case 5 picked hotel twice: its row is hotel.
      [1, 4, 0, 0],
      [0, 0, 0, 2],
      [0, 0, 1, 2],
    ]);
    expect(cell(m, "flights", "weather")).toBe(1);
    expect(cell(m, "nope", "flights")).toBe(0);
    // 15 outcomes, one an error.
    expect(m.counts.flat().reduce((a, b) => a + b, 0)).toBe(14);
  });

  it("a case with two right answers lands on the diagonal of the one picked", () => {
    expect(rowOf(["a", "b"], "b")).toBe("b");
    expect(rowOf(["a", "b"], "c")).toBe("a");
    expect(rowOf(["a", "b"], null)).toBe("a");
    expect(rowOf([], "a")).toBe(null);
  });

  it("accuracy counts outcomes, not errors; per run too", () => {
    const a = accuracyOf(CASES);
    expect(a).toMatchObject({ correct: 3 + 2 + 2 + 0 + 2, counted: 14, errored: 1 });
    expect(a.accuracy).toBeCloseTo(9 / 14);
    expect(a.perRun).toEqual([4 / 5, 2 / 5, 3 / 4]);
    expect(accuracyOf([]).accuracy).toBeNull();
  });

  it("precision and recall per label, with each run's recall", () => {
    const scores = toolScores(CASES);
    const by = new Map(scores.map((s) => [s.tool, s]));
    expect(by.get("flights")).toMatchObject({
      cases: 2,
      expected: 4,
      picked: 4,
      correct: 3,
      precision: 3 / 4,
      recall: 3 / 4,
    });
    expect(by.get("hotel")).toMatchObject({ cases: 2, expected: 5, picked: 4, correct: 4, recall: 4 / 5 });
    expect(by.get("hotel")!.recallPerRun).toEqual([1, 1 / 2, 1]);
    expect(by.get("weather")).toMatchObject({ cases: 1, expected: 2, picked: 2, correct: 0, precision: 0, recall: 0 });
    expect(by.get(null)).toMatchObject({
      cases: 1,
      expected: 3,
      picked: 4,
      correct: 2,
      precision: 2 / 4,
      recall: 2 / 3,
    });
  });

  it("agreement: cases whose counted runs all picked the same, and those that did not", () => {
    const ag = agreementOf(CASES);
    expect(ag.cases).toBe(5);
    expect(ag.unanimous).toBe(2);
    expect(ag.share).toBeCloseTo(2 / 5);
    expect(ag.disagreements.map((d) => d.id)).toEqual(["2", "3", "5"]);
    expect(ag.disagreements[1].picks).toEqual([null, "weather", null]);
    expect(ag.meanModalShare).toBeCloseTo((1 + 2 / 3 + 2 / 3 + 1 + 2 / 3) / 5);
    expect(agreementOf([c("x", ["a"], "a")]).share).toBeNull();
  });
});
