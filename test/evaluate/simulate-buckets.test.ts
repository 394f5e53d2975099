import { describe, expect, it } from "vitest";
import { bucketFigures, popularityBuckets } from "../../src/evaluate/simulate-buckets.js";
import { renderBuckets } from "../../src/cli/simulate-command.js";

describe("popularityBuckets", () => {
  it("puts the most-served tools that take half the traffic in the head, the rest with traffic in the torso", () => {
    const served = new Map([
      ["big", 60],
      ["mid", 30],
      ["small", 20],
      ["tiny", 10],
    ]);
    const buckets = popularityBuckets(["big", "mid", "small", "tiny", "quiet"], served);
    expect(Object.fromEntries(buckets)).toEqual({
      big: "head",
      mid: "torso",
      small: "torso",
      tiny: "torso",
      quiet: "no traffic",
    });
    // Even traffic: half the tools (ties by name) are the head, none is without traffic.
    const even = popularityBuckets(["a", "b", "c", "d"], new Map(["a", "b", "c", "d"].map((t) => [t, 5])));
    expect([...even.values()]).toEqual(["head", "head", "torso", "torso"]);
  });
});

describe("bucketFigures", () => {
  it("scores each bucket on the eval requests of its tools, before and after, with its worst tool", () => {
    const served = new Map([
      ["big", 9],
      ["small", 1],
    ]);
    const buckets = popularityBuckets(["big", "small", "quiet"], served);
    const cases = [{ expect: ["big"] }, { expect: ["quiet"] }, { expect: ["quiet"] }, { expect: [] }];
    const before = [["big"], ["quiet"], ["big"], ["big"]];
    const after = [["big"], ["big", "quiet"], ["big"], ["big"]];
    const figures = bucketFigures(cases, before, after, buckets, served, new Map([["quiet", 1]]));
    const quiet = figures.find((f) => f.bucket === "no traffic")!;
    expect(quiet).toMatchObject({ tools: 1, traffic: 0, n: 2, maxNetLoss: 1 });
    expect(quiet.before.top1).toBe(0.5);
    expect(quiet.after.top1).toBe(0);
    expect(quiet.after["recall@5"]).toBe(0.5);
    expect(figures.find((f) => f.bucket === "head")).toMatchObject({ tools: 1, traffic: 9, n: 1 });
    expect(figures.find((f) => f.bucket === "torso")!.n).toBe(0);
    // The text output has one row per bucket, "-" where a bucket has no eval request.
    const lines = renderBuckets({ buckets: figures });
    expect(lines.find((l) => l.startsWith("no traffic"))).toContain("50.0% -> 0.0%");
    expect(lines.find((l) => l.startsWith("torso"))).toContain("-");
  });
});
