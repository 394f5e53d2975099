import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { Postings } from "../../src/routing/postings.js";
import type { SparseRowsView } from "../../src/routing/sparse-search.js";
import { impactDepths, wideTerms } from "../../src/routing/walk-plan.js";
import type { QueryPlan } from "../../src/routing/sparse-vector.js";

/** A view holding only posting lists (what `impactDepths` reads). */
function listsView(lists: number[][]): SparseRowsView {
  const postings = lists.map((values) => {
    const list = new Postings();
    values.forEach((v, row) => list.push(row, v));
    return list;
  });
  return { rowIds: [], rowDocs: [], rows: undefined as never, postings, live: 0, dimension: lists.length };
}

describe("impactDepths", () => {
  const random = rng(11);
  // Lists of very different lengths and value spreads, in no order, some values negative.
  const lists = Array.from({ length: 40 }, (_, d) =>
    Array.from({ length: 200 + Math.floor(random() * 5000) }, () => (random() - 0.2) * random() ** (1 + (d % 5))),
  );
  const view = listsView(lists);
  const plan: QueryPlan = {
    dims: Int32Array.from(lists.keys()),
    weights: Float64Array.from(lists, () => random() * 2 - 1),
  };

  it("walks the postings that add most, about the budget of them, whichever list they are on", () => {
    const budget = 20_000;
    const depths = impactDepths(view, plan, 100, budget);
    const walked = depths.reduce((a, b) => a + b, 0);
    expect(walked).toBeGreaterThan(0.9 * budget);
    expect(walked).toBeLessThan(1.1 * budget);
    // One threshold for every list: the weakest contribution walked is above the strongest left out.
    let weakestWalked = Infinity;
    let strongestLeft = 0;
    lists.forEach((values, p) => {
      const contributions = values.map((v) => Math.abs(plan.weights[p] * v)).sort((a, b) => b - a);
      if (depths[p] > 0) weakestWalked = Math.min(weakestWalked, contributions[depths[p] - 1]);
      if (depths[p] < contributions.length) strongestLeft = Math.max(strongestLeft, contributions[depths[p]]);
    });
    expect(weakestWalked).toBeGreaterThanOrEqual(strongestLeft * (1 - 1e-6));
  });

  it("walks every list whole when they hold no more than the budget, and never walks a selective one", () => {
    const total = lists.reduce((a, l) => a + l.length, 0);
    expect([...impactDepths(view, plan, 100, total)]).toEqual(lists.map((l) => l.length));
    const cap = 3000;
    const depths = impactDepths(view, plan, cap, 5_000);
    lists.forEach((l, p) => {
      if (l.length <= cap) expect(depths[p]).toBe(0);
    });
  });
});

describe("wideTerms", () => {
  // 100 live rows; dimensions 0-79 on every row (a dense part), 80-89 on half, 90-99 on 49.
  const postings = Array.from({ length: 100 }, (_, d) => {
    const list = new Postings();
    const rows = d < 80 ? 100 : d < 90 ? 50 : 49;
    for (let row = 0; row < rows; row++) list.push(row, 0.1);
    return list;
  });
  const view = { postings, live: 100 };
  const plan = (dims: number[]): QueryPlan => ({
    dims: Int32Array.from(dims),
    weights: new Float64Array(dims.length).fill(1),
  });
  const all = [...Array(100).keys()];

  it("marks the terms on at least wideShare of the live rows, when the request has wideTerms of them", () => {
    const wide = wideTerms(view, plan(all), { wideShare: 0.5, wideTerms: 64 });
    expect(wide).toBeDefined();
    expect([...wide!].map((w, p) => (w === 1 ? p : -1)).filter((p) => p >= 0)).toEqual([...Array(90).keys()]);
  });

  it("marks none when the request has fewer (a lexical request), or with wideTerms 0", () => {
    expect(wideTerms(view, plan(all.slice(30)), { wideShare: 0.5, wideTerms: 64 })).toBeUndefined();
    expect(wideTerms(view, plan(all), { wideShare: 0.5, wideTerms: 91 })).toBeUndefined();
    expect(wideTerms(view, plan(all), { wideShare: 0.5, wideTerms: 0 })).toBeUndefined();
  });

  it("leaves the wide terms out of the depths: the budget goes to the other common terms", () => {
    const p = plan(all);
    const wide = wideTerms(view, p, { wideShare: 0.5, wideTerms: 64 });
    const depths = impactDepths(view, p, 10, 1_000_000, wide);
    expect([...depths.subarray(0, 90)].every((d) => d === 0)).toBe(true);
    expect([...depths.subarray(90)].every((d) => d === 49)).toBe(true);
  });
});
