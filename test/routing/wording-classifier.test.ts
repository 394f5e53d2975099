import { describe, expect, it } from "vitest";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import type { SparseVector } from "../../src/routing/sparse-vector.js";
import {
  CLASSIFIER_CLIP,
  classifierTerms,
  classifierZ,
  fitWordingClassifier,
} from "../../src/routing/wording-classifier.js";

const TEXTS: Record<string, string[]> = {
  weather: ["what is the weather in paris", "will it rain tomorrow", "forecast for the weekend", "is it sunny today"],
  flights: ["book a flight to paris", "cheapest flight tomorrow", "flight tickets for the weekend", "plane to rome"],
  recipes: ["a recipe for pasta", "how do I cook rice", "dinner ideas with chicken", "bake a chocolate cake"],
};

function embedder(): LexicalEmbeddings {
  const lexical = new LexicalEmbeddings({ dimension: 1024 });
  lexical.partialFit(Object.values(TEXTS).flat());
  return lexical;
}

function samples(lexical: LexicalEmbeddings): { tool: string; vector: SparseVector }[] {
  return Object.entries(TEXTS).flatMap(([tool, texts]) => texts.map((t) => ({ tool, vector: lexical.embedSparse(t) })));
}

describe("fitWordingClassifier", () => {
  it("needs two tools to tell apart", () => {
    const lexical = embedder();
    expect(fitWordingClassifier(samples(lexical).filter((s) => s.tool === "weather"))).toBeUndefined();
    expect(fitWordingClassifier([])).toBeUndefined();
  });

  it("tells the tools' requests apart, deterministically", () => {
    const lexical = embedder();
    const model = fitWordingClassifier(samples(lexical))!;
    expect(model.tools).toEqual(["flights", "recipes", "weather"]);
    const best = (text: string) => {
      const z = classifierZ(model, lexical.embedSparse(text));
      return [...z].sort((a, b) => b[1] - a[1])[0][0];
    };
    expect(best("rain forecast in rome")).toBe("weather");
    expect(best("a flight to rome tomorrow")).toBe("flights");
    expect(best("cook chicken for dinner")).toBe("recipes");
    const again = fitWordingClassifier(samples(lexical))!;
    expect([...again.weights]).toEqual([...model.weights]);
  });

  it("standardises the classes' scores per request", () => {
    const lexical = embedder();
    const model = fitWordingClassifier(samples(lexical))!;
    const z = [...classifierZ(model, lexical.embedSparse("will it rain in paris")).values()];
    const mean = z.reduce((s, x) => s + x, 0) / z.length;
    expect(mean).toBeCloseTo(0);
    expect(Math.sqrt(z.reduce((s, x) => s + (x - mean) ** 2, 0) / z.length)).toBeCloseTo(1);
  });
});

describe("classifierTerms", () => {
  const z = new Map([
    ["a", 2],
    ["b", 0],
    ["c", -5],
  ]);
  const options = { classifier: 1, classifierHalf: 10 };

  it("never lifts: the first class and tools without wordings lose nothing, the others lose", () => {
    const terms = classifierTerms(
      z,
      new Map([
        ["a", 60],
        ["b", 60],
        ["c", 60],
      ]),
      0.1,
      options,
    );
    expect(terms.has("a")).toBe(false);
    expect(terms.get("b")!).toBeLessThan(0);
    expect(terms.get("c")!).toBeLessThan(terms.get("b")!);
    // c is at most CLASSIFIER_CLIP below the first, times its share.
    expect(terms.get("c")!).toBeCloseTo(-0.1 * CLASSIFIER_CLIP * (60 / 70) ** 2);
    const none = classifierTerms(z, new Map([["a", 60]]), 0.1, options);
    expect(none.size).toBe(0);
  });

  it("takes less from a tool with few wordings, nothing when off", () => {
    const few = classifierTerms(
      z,
      new Map([
        ["a", 60],
        ["b", 1],
        ["c", 60],
      ]),
      0.1,
      options,
    );
    const many = classifierTerms(
      z,
      new Map([
        ["a", 60],
        ["b", 60],
        ["c", 60],
      ]),
      0.1,
      options,
    );
    expect(Math.abs(few.get("b")!)).toBeLessThan(Math.abs(many.get("b")!) / 20);
    expect(classifierTerms(z, new Map([["b", 60]]), 0.1, { ...options, classifier: 0 }).size).toBe(0);
  });
});
