import { describe, expect, it } from "vitest";
import {
  auroc,
  hitAtK,
  mean,
  meanNdcgAtK,
  meanRecallAtK,
  ndcgAtK,
  noToolFigures,
  recallAtK,
  topKAccuracy,
} from "../../src/evaluate/metrics.js";

describe("ranking metrics", () => {
  const ranked = ["a", "b", "c", "d", "e", "f"];

  it("hitAtK is 1 when a relevant tool is in the top k", () => {
    expect(hitAtK(ranked, ["a"], 1)).toBe(1);
    expect(hitAtK(ranked, ["c"], 1)).toBe(0);
    expect(hitAtK(ranked, ["c"], 3)).toBe(1);
    expect(hitAtK(ranked, ["z"], 6)).toBe(0);
    expect(hitAtK(ranked, [], 6)).toBe(0);
  });

  it("recallAtK is the share of relevant tools found", () => {
    expect(recallAtK(ranked, ["a", "e"], 5)).toBe(1);
    expect(recallAtK(ranked, ["a", "f"], 5)).toBe(0.5);
    expect(recallAtK(["a", "a"], ["a", "b"], 2)).toBe(0.5);
    expect(recallAtK(ranked, [], 5)).toBe(0);
  });

  it("ndcgAtK rewards finding relevant tools early", () => {
    expect(ndcgAtK(ranked, ["a"], 5)).toBe(1);
    expect(ndcgAtK(ranked, ["b"], 5)).toBeCloseTo(1 / Math.log2(3), 10);
    expect(ndcgAtK(ranked, ["a", "b"], 5)).toBe(1);
    // Relevant at ranks 2 and 3: (1/log2 3 + 1/log2 4) / (1 + 1/log2 3)
    expect(ndcgAtK(ranked, ["b", "c"], 5)).toBeCloseTo((1 / Math.log2(3) + 0.5) / (1 + 1 / Math.log2(3)), 10);
    expect(ndcgAtK(ranked, ["f"], 5)).toBe(0);
    expect(ndcgAtK(ranked, [], 5)).toBe(0);
  });

  it("the means average over cases", () => {
    const cases = [
      { ranked: ["a", "b"], relevant: ["a"] },
      { ranked: ["a", "b"], relevant: ["b"] },
    ];
    expect(topKAccuracy(cases, 1)).toBe(0.5);
    expect(topKAccuracy(cases, 2)).toBe(1);
    expect(meanRecallAtK(cases, 1)).toBe(0.5);
    expect(meanNdcgAtK(cases, 2)).toBeCloseTo((1 + 1 / Math.log2(3)) / 2, 10);
    expect(mean([])).toBe(0);
  });
});

describe("auroc", () => {
  it("is 1 for perfect separation, 0 for reversed, 0.5 for ties", () => {
    expect(auroc([0.9, 0.8], [0.1, 0.2])).toBe(1);
    expect(auroc([0.1], [0.9])).toBe(0);
    expect(auroc([0.5, 0.5], [0.5])).toBe(0.5);
  });

  it("counts pairs, ties as half", () => {
    // pairs: (0.8>0.3) (0.8>0.5) (0.5=0.5 half) (0.5>0.3) (0.2<0.3) (0.2<0.5) → 3.5 / 6
    expect(auroc([0.8, 0.5, 0.2], [0.3, 0.5])).toBeCloseTo(3.5 / 6, 12);
  });

  it("agrees with a brute-force pair count", () => {
    const pos = [0.3, 0.7, 0.7, 0.1, 0.9, 0.5];
    const neg = [0.2, 0.7, 0.4, 0.4, 0.05];
    let wins = 0;
    for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
    expect(auroc(pos, neg)).toBeCloseTo(wins / (pos.length * neg.length), 12);
  });

  it("is NaN with an empty side", () => {
    expect(auroc([], [1])).toBeNaN();
  });
});

describe("noToolFigures", () => {
  it("reads AUROC without a threshold and precision and recall of abstaining below one", () => {
    const served = [0.9, 0.8, 0.7, 0.3];
    const none = [0.1, 0.2, 0.75];
    const off = noToolFigures(served, none, undefined);
    expect(off).toEqual({ auroc: auroc(served, none), precision: 0, recall: 0 });
    const on = noToolFigures(served, none, 0.35);
    expect(on.recall).toBeCloseTo(2 / 3);
    expect(on.precision).toBeCloseTo(2 / 3);
    expect(on.threshold).toBe(0.35);
    expect(noToolFigures(served, none, 0.05)).toMatchObject({ precision: 0, recall: 0 });
  });
});
