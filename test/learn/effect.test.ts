import { describe, expect, it } from "vitest";
import {
  countTarget,
  effectTargets,
  judgeRevision,
  judgeTarget,
  MIN_EFFECT_OPPORTUNITIES,
} from "../../src/learn/effect.js";
import type { EffectBaseline } from "../../src/ledger/schema.js";

const failure: EffectBaseline = {
  target: { kind: "failure", errorClass: "validation" },
  before: { opportunities: 40, events: 20 },
};
const rev = { id: "r1", tool: "lookup_order", partition: "p" };

describe("effectTargets", () => {
  it("names each kind of evidence a revision answered once, in order", () => {
    expect(
      effectTargets([
        { kind: "failed_call", callIds: ["a"], errorClass: "validation", errorMessage: "", argNames: [] },
        { kind: "failed_call", callIds: ["b"], errorClass: "validation", errorMessage: "", argNames: [] },
        { kind: "missed_request", requestId: "q1", request: "x", how: "re_asked" },
        { kind: "confused_request", requestId: "q2", request: "y", servedBy: "track_parcel", how: "re_asked" },
        { kind: "missed_request", requestId: "q3", request: "z", how: "served_unoffered" },
      ]),
    ).toEqual([
      { kind: "failure", errorClass: "validation" },
      { kind: "miss" },
      { kind: "confusion", neighbour: "track_parcel" },
    ]);
  });
});

describe("countTarget", () => {
  const detection = {
    tool: "lookup_order",
    calls: 30,
    failures: [
      {
        tool: "lookup_order",
        errorClass: "validation" as const,
        errorMessage: "",
        callIds: ["a", "b"],
        argNames: [],
        shapes: [],
      },
      {
        tool: "lookup_order",
        errorClass: "not_found" as const,
        errorMessage: "",
        callIds: ["c"],
        argNames: [],
        shapes: [],
      },
      {
        tool: "lookup_order",
        errorClass: "validation" as const,
        errorMessage: "x",
        callIds: ["d"],
        argNames: [],
        shapes: [],
      },
    ],
    misses: [{ tool: "lookup_order", requestId: "q1", request: "", how: "re_asked" as const }],
    confusions: [
      { tool: "lookup_order", requestId: "q2", request: "", servedBy: "track_parcel", how: "re_asked" as const },
      { tool: "lookup_order", requestId: "q3", request: "", servedBy: "cancel_order", how: "re_asked" as const },
    ],
  };
  const turns = [
    { requestId: "q0", calls: [{ tool: "lookup_order", outcome: "success" as const }], servedBy: "lookup_order" },
    { requestId: "q2", calls: [{ tool: "track_parcel", outcome: "success" as const }], servedBy: "track_parcel" },
    { requestId: "q4", calls: [], servedBy: undefined },
  ];

  it("failures: the tool's calls, and those failing with the class", () => {
    expect(countTarget({ kind: "failure", errorClass: "validation" }, detection, turns)).toMatchObject({
      opportunities: 30,
      events: 3,
    });
  });
  it("misses: requests the tool served or missed", () => {
    expect(countTarget({ kind: "miss" }, detection, turns)).toMatchObject({ opportunities: 2, events: 1 });
  });
  it("confusions: requests that went to the tool or that neighbour, and those confused with it", () => {
    expect(countTarget({ kind: "confusion", neighbour: "track_parcel" }, detection, turns)).toMatchObject({
      opportunities: 2,
      events: 1,
    });
  });
});

describe("judgeTarget", () => {
  it("says not enough data below the minimum on either side", () => {
    const few = { opportunities: MIN_EFFECT_OPPORTUNITIES - 1, events: 0 };
    expect(judgeTarget(failure, few)).toMatchObject({ verdict: "not_enough_data", change: null });
    expect(judgeTarget({ ...failure, before: few }, { opportunities: 100, events: 0 }).verdict).toBe("not_enough_data");
  });
  it("a rate that falls past chance helped; one that holds had no effect; one that rises hurt", () => {
    expect(judgeTarget(failure, { opportunities: 20, events: 0 })).toMatchObject({ verdict: "helped", change: -0.5 });
    expect(judgeTarget(failure, { opportunities: 20, events: 9 }).verdict).toBe("no_effect");
    expect(
      judgeTarget({ ...failure, before: { opportunities: 40, events: 4 } }, { opportunities: 40, events: 20 }).verdict,
    ).toBe("hurt");
  });
  it("a small fall within chance is no effect, not help", () => {
    expect(judgeTarget(failure, { opportunities: 20, events: 7 }).verdict).toBe("no_effect");
  });
});

describe("judgeRevision", () => {
  const t = (verdict: "helped" | "no_effect" | "hurt" | "not_enough_data") => ({
    ...failure,
    after: { opportunities: 20, events: 0 },
    change: verdict === "not_enough_data" ? null : 0,
    verdict,
  });
  it("helped when a target fell and none rose; flags none", () => {
    const e = judgeRevision(rev, [t("helped"), t("not_enough_data")]);
    expect(e.verdict).toBe("helped");
    expect(e.flag).toBeUndefined();
  });
  it("flags no effect and harm, with counts only", () => {
    const none = judgeRevision(rev, [t("no_effect")]);
    expect(none.verdict).toBe("no_effect");
    expect(none.flag).toBe("no measured effect on what it answered (failure:validation 20/40 → 0/20)");
    expect(judgeRevision(rev, [t("helped"), t("hurt")]).verdict).toBe("hurt");
    expect(judgeRevision(rev, [t("hurt")]).flag).toMatch(/^what it answered got worse/);
  });
  it("not enough data when no target could be judged", () => {
    expect(judgeRevision(rev, [t("not_enough_data")])).toMatchObject({ verdict: "not_enough_data" });
    expect(judgeRevision(rev, []).verdict).toBe("not_enough_data");
  });
});
