import { describe, expect, it } from "vitest";
import { spread, spreadOrder } from "../src/internal.js";

describe("spread", () => {
  it("keeps everything when there are no more than n", () => {
    expect(spread([1, 2, 3], 3)).toEqual([1, 2, 3]);
    expect(spread([1, 2], 5)).toEqual([1, 2]);
  });

  it("samples evenly over the whole span, the first and the newest kept, in order", () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const out = spread(items, 5);
    expect(out).toEqual([0, 25, 50, 74, 99]);
    expect(spread(items, 1)).toEqual([99]);
    expect(spread(items, 0)).toEqual([]);
  });
});

describe("spreadOrder", () => {
  it("visits every index once, the newest first", () => {
    for (const n of [0, 1, 2, 3, 10, 97, 1000]) {
      const order = [...spreadOrder(n)];
      expect(order).toHaveLength(n);
      expect(new Set(order).size).toBe(n);
      if (n > 0) expect(order[0]).toBe(n - 1);
    }
  });

  it("spreads each prefix over the whole range, not its newest end", () => {
    const n = 10_000;
    const first = [...spreadOrder(n)].slice(0, 200);
    // A newest-first scan would stay within the last 2 %; each tenth of the range gets its share.
    const perTenth = new Array<number>(10).fill(0);
    for (const i of first) perTenth[Math.floor((i * 10) / n)] += 1;
    for (const count of perTenth) expect(count).toBeGreaterThanOrEqual(15);
  });
});
