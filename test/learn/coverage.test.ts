import { describe, expect, it } from "vitest";
import { rankByCoverage } from "../../src/learn/coverage.js";

const MISSES = [
  { requestId: "r1", request: "money back for the blender", pick: 2, gain: 1.5 },
  { requestId: "r2", request: "I want my money back", pick: 1, gain: 3 },
  { requestId: "r3", request: "refund the kettle money", pick: null },
  { requestId: "r4", request: "weather in Paris", pick: 3, gain: 1 },
];

describe("rankByCoverage", () => {
  it("proposes routing's picks in its order, each citing itself and the misses it shares a word with", () => {
    const out = rankByCoverage(MISSES, "refund_order Refund an order");
    expect(out.map((c) => c.text)).toEqual(["I want my money back", "money back for the blender"]);
    expect(out[0].cites).toEqual(["r2", "r1", "r3"]);
    expect(out[0].score).toBe(3);
    expect(out[0].novelWords).toContain("money");
  });

  it("drops a pick resting on fewer than minMisses misses, one already kept, and stops at the limit", () => {
    // "weather in Paris" shares no word with another miss.
    expect(rankByCoverage(MISSES, "", { minMisses: 2 }).map((c) => c.text)).not.toContain("weather in Paris");
    expect(rankByCoverage(MISSES, "", { exclude: ["i want my MONEY back"] }).map((c) => c.text)).toEqual([
      "money back for the blender",
    ]);
    expect(rankByCoverage(MISSES, "", { limit: 1 })).toHaveLength(1);
  });

  it("proposes nothing when routing chose nothing, and ranks by wording when routing was not asked", () => {
    expect(
      rankByCoverage(
        MISSES.map((m) => ({ ...m, pick: null })),
        "",
      ),
    ).toEqual([]);
    const unasked = rankByCoverage(
      MISSES.map(({ requestId, request }) => ({ requestId, request })),
      "",
    );
    expect(unasked.length).toBeGreaterThan(0);
  });
});
