import { describe, expect, it } from "vitest";
import { compareRuns } from "../../src/evaluate/compare.js";
import type { CaseResult } from "../../src/evaluate/confusion.js";
import { summarizeSelection } from "../../src/evaluate/harness.js";

/** A run of `cases` where each case's picks are given per run. */
function run(label: string, cases: { turn: string; expect: string[]; picks: (string | null)[] }[]) {
  const results: CaseResult[] = cases.map((c, i) => ({
    id: `line ${i + 1}`,
    turn: c.turn,
    expect: c.expect,
    outcomes: c.picks.map((tool) => ({ tool })),
  }));
  return summarizeSelection({
    mode: "chat-model",
    label,
    runs: 3,
    tools: ["a", "b", "c"],
    warnings: [],
    seconds: 0,
    cases: results,
  });
}

const many = (tool: string, n: number, picks: (i: number) => (string | null)[]) =>
  Array.from({ length: n }, (_, i) => ({ turn: `${tool} turn ${i}`, expect: [tool], picks: picks(i) }));

describe("two runs side by side", () => {
  // a: 12 cases, all right before; after, 4 of them flip to b in every run: worse, beyond the noise.
  // b: 12 cases, one run in three wrong before and after (noise 1/12 per run at most): within noise.
  // c: 3 cases: too few to judge.
  const before = run("v1", [
    ...many("a", 12, () => ["a", "a", "a"]),
    ...many("b", 12, (i) => (i === 0 ? ["b", "c", "b"] : ["b", "b", "b"])),
    ...many("c", 3, () => ["a", "a", "a"]),
  ]);
  const after = run(
    "v2",
    [
      ...many("a", 12, (i) => (i < 4 ? ["b", "b", "b"] : ["a", "a", "a"])),
      ...many("b", 12, (i) => (i === 1 ? ["b", "b", "c"] : ["b", "b", "b"])),
      ...many("c", 3, () => ["c", "c", "c"]),
    ].reverse(),
  );

  it("judges each tool's change against the repeats' spread, with at least 10 cases", () => {
    const cmp = compareRuns(before, after);
    const by = new Map(cmp.perTool.map((t) => [t.tool, t]));
    expect(by.get("a")).toMatchObject({ cases: 12, before: 1, after: 8 / 12, verdict: "worse" });
    expect(by.get("a")!.change).toBeCloseTo(-4 / 12);
    expect(by.get("b")).toMatchObject({ cases: 12, verdict: "within_noise" });
    expect(by.get("b")!.noise).toBeCloseTo(1 / 12);
    expect(by.get("c")).toMatchObject({ cases: 3, before: 0, after: 1, verdict: "too_few_cases" });
    // Judged tools first, the largest change first.
    expect(cmp.perTool.map((t) => t.tool)).toEqual(["a", "b", "c"]);
  });

  it("matches cases by turn (the after file is in another order) and counts fixed and broken by majority", () => {
    const cmp = compareRuns(before, after);
    expect(cmp.cases).toEqual({ matched: 27, onlyBefore: 0, onlyAfter: 0, fixed: 3, broken: 4 });
    expect(cmp.before).toEqual({ label: "v1", runs: 3, cases: 27 });
  });

  it("accuracy: a change no larger than the spread of the runs is noise, even when one tool got worse", () => {
    const cmp = compareRuns(before, after);
    expect(cmp.accuracy.before).toBeCloseTo((36 + 35) / 81);
    expect(cmp.accuracy.after).toBeCloseTo((24 + 35 + 9) / 81);
    // Per run, before: 24, 23, 24 of 27; after: 23, 23, 22. The change (3 of 81) is one run's spread (1 of 27).
    expect(cmp.accuracy.noise).toBeCloseTo(1 / 27);
    expect(cmp.accuracy.change).toBeCloseTo(-1 / 27);
    expect(cmp.accuracy.verdict).toBe("within_noise");
    const worse = run("v4", [
      ...many("a", 12, () => ["b", "b", "b"]),
      ...many("b", 12, () => ["b", "b", "b"]),
      ...many("c", 3, () => ["a", "a", "a"]),
    ]);
    expect(compareRuns(before, worse).accuracy.verdict).toBe("worse");
    const same = compareRuns(before, before);
    expect(same.accuracy).toMatchObject({ change: 0, verdict: "within_noise" });
    expect(same.perTool.every((t) => t.verdict === "within_noise" || t.verdict === "too_few_cases")).toBe(true);
  });

  it("counts cases only one side has", () => {
    const shorter = run(
      "v3",
      many("a", 12, () => ["a", "a", "a"]),
    );
    expect(compareRuns(before, shorter).cases).toMatchObject({ matched: 12, onlyBefore: 15, onlyAfter: 0 });
  });
});

describe("recall@k and the no-tool AUROC side by side", () => {
  /** A one-run router run whose cases carry a ranking and a best score. */
  const routed = (label: string, rankings: string[][], scores: number[]) =>
    summarizeSelection({
      mode: "router",
      label,
      runs: 1,
      tools: ["a", "b", "c"],
      warnings: [],
      seconds: 0,
      k: [1, 3],
      cases: [
        ...rankings.map((ranked, i) => ({
          id: `t${i}`,
          turn: `turn ${i}`,
          expect: ["a"],
          outcomes: [{ tool: ranked[0] }],
          ranked,
        })),
        { id: "n", turn: "hi", expect: [], outcomes: [{ tool: "b" }], ranked: ["b", "a", "c"] },
      ],
      scores,
    });

  it("gives recall@k before and after for each k, judged like accuracy, and the AUROC", () => {
    const before = routed(
      "v1",
      [
        ["b", "a", "c"],
        ["b", "c", "a"],
      ],
      [0.3, 0.2, 0.25],
    );
    const after = routed(
      "v2",
      [
        ["a", "b", "c"],
        ["b", "a", "c"],
      ],
      [0.5, 0.4, 0.25],
    );
    const c = compareRuns(before, after);
    expect(c.recallAtK).toEqual([
      { k: 1, before: 0, after: 0.5, change: 0.5, noise: 0, verdict: "better" },
      { k: 3, before: 1, after: 1, change: 0, noise: 0, verdict: "within_noise" },
    ]);
    expect(c.noToolAuroc).toEqual({ before: 0.5, after: 1 });
    // A run that did not rank (a chat model's) gives nothing to compare.
    const unranked = { ...after, ranking: undefined, noTool: undefined };
    expect(compareRuns(before, unranked)).toMatchObject({ recallAtK: [] });
    expect(compareRuns(before, unranked).noToolAuroc).toBeUndefined();
  });
});
