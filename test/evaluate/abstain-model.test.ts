import { describe, expect, it } from "vitest";
import {
  ABSTAIN_FEATURES,
  abstainFeatures,
  abstainProbability,
  type AbstainExample,
  fitAbstainModel,
  scoreCalibration,
} from "../../src/evaluate/abstain-model.js";
import { auroc } from "../../src/evaluate/metrics.js";
import { seededRandom } from "../../src/internal.js";

/**
 * Synthetic traffic where the best score alone separates badly (both kinds score alike) but the
 * request's length and the gap to the second tool do: short chit-chat needs no tool.
 */
function traffic(n: number, seed: number): AbstainExample[] {
  const next = seededRandom(seed);
  const out: AbstainExample[] = [];
  for (let i = 0; i < n; i++) {
    const served = next() < 0.7;
    const top = 0.3 + 0.2 * next();
    const gap = served ? 0.05 + 0.1 * next() : 0.02 * next();
    const words = served ? 8 + Math.floor(6 * next()) : 2 + Math.floor(3 * next());
    const request = Array.from({ length: words }, (_, w) => (served ? `order${w} parcel` : "hi")).join(" ");
    out.push({ scores: [top, top - gap], tool: served ? `t${i % 4}` : "t0", request, served });
  }
  return out;
}

describe("fitAbstainModel", () => {
  it("separates 'no tool' on held-out requests better than the best score alone", () => {
    const model = fitAbstainModel(traffic(400, 1))!;
    expect(model).toBeDefined();
    expect(model.features).toEqual([...ABSTAIN_FEATURES]);
    const test = traffic(300, 2);
    const p = test.map((e) => abstainProbability(model, e));
    const byModel = auroc(
      p.filter((_, i) => test[i].served),
      p.filter((_, i) => !test[i].served),
    );
    const byScore = auroc(
      test.filter((e) => e.served).map((e) => e.scores[0]),
      test.filter((e) => !e.served).map((e) => e.scores[0]),
    );
    expect(byScore).toBeLessThan(0.65);
    expect(byModel).toBeGreaterThan(0.95);
    // Its threshold turns away no-tool requests and few served ones.
    expect(model.threshold).toBeDefined();
    const below = test.filter((e, i) => p[i] < model.threshold!);
    expect(below.filter((e) => !e.served).length).toBeGreaterThan(below.filter((e) => e.served).length);
  });

  it("is deterministic and plain JSON", () => {
    const a = fitAbstainModel(traffic(200, 3));
    const b = fitAbstainModel(traffic(200, 3));
    expect(JSON.parse(JSON.stringify(a))).toEqual(b);
  });

  it("fits nothing from too few of either kind", () => {
    const served = traffic(400, 4).filter((e) => e.served);
    expect(fitAbstainModel(served)).toBeUndefined();
    expect(fitAbstainModel(traffic(20, 5))).toBeUndefined();
  });
});

describe("abstainFeatures and the partition's own calibration", () => {
  it("reads a top score against what that tool's served requests scored, shrunk toward the overall", () => {
    const examples: AbstainExample[] = [
      ...Array.from({ length: 20 }, () => ({ scores: [0.8], tool: "high", request: "x", served: true })),
      ...Array.from({ length: 20 }, () => ({ scores: [0.2], tool: "low", request: "x", served: true })),
    ];
    const calibration = scoreCalibration(examples, 5);
    expect(calibration.mean).toBeCloseTo(0.5, 6);
    expect(calibration.tools.high.mean).toBeCloseTo((20 * 0.8 + 5 * 0.5) / 25, 6);
    // The same score of 0.5 is low for "high" and high for "low".
    const z = (tool: string) => abstainFeatures({ scores: [0.5, 0.4], tool, request: "x" }, calibration)[2];
    expect(z("high")).toBeLessThan(0);
    expect(z("low")).toBeGreaterThan(0);
  });

  it("reads the gap, the length, a question mark, digits and 'you' from the request", () => {
    const calibration = { mean: 0, sd: 1, tools: {} };
    const f = abstainFeatures({ scores: [0.6, 0.4], request: "Can you ship 3 parcels?" }, calibration);
    const named = Object.fromEntries(ABSTAIN_FEATURES.map((name, i) => [name, f[i]]));
    expect(named.score).toBeCloseTo(0.6, 9);
    expect(named.gap).toBeCloseTo(0.2, 9);
    expect(named.words).toBeCloseTo(Math.log1p(5), 9);
    expect(named.question).toBe(1);
    expect(named.digits).toBe(1);
    expect(named.secondPerson).toBe(1);
    expect(abstainFeatures({ scores: [], request: "" }, calibration)[0]).toBe(-1);
  });
});
