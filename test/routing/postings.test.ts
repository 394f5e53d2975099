import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { ImpactRoom, Postings, PROBES, type SettleScope } from "../../src/routing/postings.js";

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
      const { rows, values, start, end } = list.impact(pushed.length);
      const want = expected();
      expect([...rows.subarray(start, end)]).toEqual(want.map((e) => e.row));
      expect([...values.subarray(start, end)]).toEqual(want.map((e) => e.value));
      expect(list.depthAbove(0.25)).toBe(want.filter((e) => Math.abs(e.value) >= 0.25).length);
    }
  });

  it("reads a list written to after it was put in order as the list in order: entries, depths and probes", () => {
    const random = rng(8);
    const list = new Postings();
    const pushed: Array<[row: number, value: number]> = [];
    const push = (count: number) => {
      for (let i = 0; i < count; i++) {
        // Few distinct magnitudes: ties between the ordered run and the tail, and within the tail.
        const value = Math.fround((Math.floor(random() * 17) - 8) / 16);
        list.push(pushed.length, value);
        pushed.push([pushed.length, value]);
      }
    };
    push(2_000);
    list.settle("whole");
    const room = new ImpactRoom();
    // A few rows at a time (a one-card refresh), settled as the index settles after a write, or
    // after a bulk write; past a sixty-fourth of the list the tail is merged in.
    const scopes: SettleScope[] = ["write", "bulk", "write"];
    for (let round = 0; round < 60; round++) {
      push(1 + Math.floor(random() * 5));
      list.settle(scopes[round % scopes.length]);
      const want = pushed
        .map(([row, value], position) => ({ row, value, position }))
        .sort((a, b) => Math.abs(b.value) - Math.abs(a.value) || a.position - b.position);
      room.reset();
      for (const size of [0, 1, 2, 7, 100, 1_000, 1_999, pushed.length - 1, pushed.length]) {
        const { rows, values, start, end, restMax } = list.impact(size, room);
        expect([...rows.subarray(start, end)]).toEqual(want.slice(0, size).map((e) => e.row));
        expect([...values.subarray(start, end)]).toEqual(want.slice(0, size).map((e) => e.value));
        expect(restMax).toBe(size < want.length ? Math.abs(want[size].value) : 0);
      }
      const probed = PROBES.filter((d) => d < want.length).map((d) => Math.abs(want[d].value));
      expect([...list.probes()]).toEqual(probed);
      for (const magnitude of [0.5, 0.25, 1 / 16, 0]) {
        expect(list.depthAbove(magnitude)).toBe(want.filter((e) => Math.abs(e.value) >= magnitude).length);
      }
    }
  });
});
