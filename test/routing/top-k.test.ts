import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { nthLargest } from "../../src/routing/top-k.js";

describe("nthLargest", () => {
  it("gives the value a full sort puts at each rank, ties and signs included", () => {
    const random = rng(7);
    for (const count of [1, 2, 3, 17, 500, 2049]) {
      // Few distinct values, so most ranks fall in a run of ties.
      const values = Float32Array.from({ length: count }, () => Math.round(random() * 20 - 8) / 4);
      const sorted = [...values].sort((a, b) => b - a);
      for (const n of new Set([0, count >> 1, count - 1, Math.floor(random() * count)])) {
        expect(nthLargest(Float32Array.from(values), count, n)).toBe(sorted[n]);
      }
    }
  });
});
