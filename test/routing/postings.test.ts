import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { Postings } from "../../src/routing/postings.js";

describe("Postings", () => {
  it("orders by decreasing magnitude, ties by the order pushed, whether sorted whole or merged after more pushes", () => {
    const random = rng(3);
    const list = new Postings();
    const pushed: Array<[row: number, value: number]> = [];
    const push = (count: number) => {
      for (let i = 0; i < count; i++) {
        // Few distinct magnitudes of both signs: many ties.
        const value = Math.fround((Math.floor(random() * 9) - 4) / 8);
        pushed.push([pushed.length, value]);
        list.push(pushed.length - 1, value);
      }
    };
    const expected = () =>
      pushed
        .map(([row, value], position) => ({ row, value, position }))
        .sort((a, b) => Math.abs(b.value) - Math.abs(a.value) || a.position - b.position);
    for (const count of [500, 3, 1, 700, 0, 2]) {
      push(count);
      list.settle();
      const { rows, values } = list.impact(pushed.length);
      const want = expected();
      expect([...rows]).toEqual(want.map((e) => e.row));
      expect([...values]).toEqual(want.map((e) => e.value));
      expect(list.depthAbove(0.25)).toBe(want.filter((e) => Math.abs(e.value) >= 0.25).length);
    }
  });
});
