import { describe, expect, it } from "vitest";
import { toolStats } from "../../src/memory/stats.js";
import {
  duplicateKey,
  evaluatedRow,
  latencyNorm,
  planEvaluation,
  requiredArgs,
  settledThrough,
} from "../../src/memory/window.js";
import { callRecord, output, row } from "./memory-fixtures.js";

describe("statistics by code, on hand-computed fixtures", () => {
  it("total and recent calls, success rate and average score overall and recent, average time and tokens", () => {
    const window = [
      row({ success: true, score: 1, latencyMs: 100, tokens: 10 }),
      row({ success: true, score: 0.5, latencyMs: 200, tokens: 20 }),
      row({ success: false, score: 0, latencyMs: 300, tokens: undefined }),
      row({ success: true, score: 1, latencyMs: undefined, tokens: 30 }),
      row({ success: true, score: 0.5, latencyMs: 400, tokens: 40 }),
    ];
    // success 4/5; scores (1 + .5 + 0 + 1 + .5) / 5; recent = the last two; latency (100+200+300+400)/4; tokens 100/4.
    expect(toolStats(window, 2)).toEqual({
      totalCalls: 5,
      recentCalls: 2,
      successRate: 0.8,
      recentSuccessRate: 1,
      avgScore: 0.6,
      recentAvgScore: 0.75,
      avgLatencyMs: 250,
      avgTokens: 25,
    });
  });

  it("rounds rates and scores to 4 decimals, time and tokens to 1", () => {
    const window = [
      row({ success: true, score: 1, latencyMs: 1, tokens: 1 }),
      row({ success: false, score: 0.5, latencyMs: 2, tokens: 1 }),
      row({ success: false, score: 0.5, latencyMs: 4, tokens: 2 }),
    ];
    expect(toolStats(window, 20)).toEqual({
      totalCalls: 3,
      recentCalls: 3,
      successRate: 0.3333,
      recentSuccessRate: 0.3333,
      avgScore: 0.6667,
      recentAvgScore: 0.6667,
      avgLatencyMs: 2.3,
      avgTokens: 1.3,
    });
  });

  it("gives null for what there is nothing to average", () => {
    expect(toolStats([], 20)).toEqual({
      totalCalls: 0,
      recentCalls: 0,
      successRate: null,
      recentSuccessRate: null,
      avgScore: null,
      recentAvgScore: null,
      avgLatencyMs: null,
      avgTokens: null,
    });
    expect(toolStats([row({ latencyMs: undefined, tokens: undefined })], 20)).toMatchObject({
      avgLatencyMs: null,
      avgTokens: null,
    });
  });
});

describe("the window's decisions", () => {
  it("drops duplicates (same masked input and output) of the window and of the batch, skips known calls", () => {
    const a = callRecord("search", { request: "pricing" });
    const b = callRecord("search", { request: "refunds" });
    const aAgain = callRecord("search", { request: "pricing" });
    const bOther = callRecord("search", { request: "refunds", output: output("No results.") });
    const c = callRecord("search", { request: "billing" });
    const cAgain = callRecord("search", { request: "billing" });
    const window = [evaluatedRow(a, { summary: "s", evaluation: "e", score: 1, signals: [] }, "deterministic", 1)];
    const plan = planEvaluation([a, b, aAgain, bOther, c, cAgain], window);
    expect(plan.known).toBe(1);
    expect(plan.pending.map((x) => x.id)).toEqual([b.id, bOther.id, c.id]);
    expect(plan.duplicates.map((x) => x.id)).toEqual([aAgain.id, cAgain.id]);
  });

  it("keys a call by its masked input and result, not by its id, time or run", () => {
    const a = callRecord("search");
    expect(duplicateKey({ ...a, id: "other", at: 5, runId: "r2", latencyMs: 999, tokens: 1 })).toBe(duplicateKey(a));
    for (const change of [
      { tool: "other" },
      { request: "something else" },
      { args: [{ name: "query", kind: "string" as const, shape: "####" }] },
      { outcome: "error" as const },
      { errorClass: "timeout" as const },
      { errorMessage: "x" },
      { output: output("Found # results: pricing, plans, billing.", { truncated: true }) },
      { output: undefined },
    ]) {
      expect(duplicateKey({ ...a, ...change }), JSON.stringify(change)).not.toBe(duplicateKey(a));
    }
  });

  it("moves the watermark up to the call before the first one left unevaluated", () => {
    const calls = [callRecord("s"), callRecord("s"), callRecord("s"), callRecord("s")];
    expect(settledThrough(calls, new Set(), "old")).toBe(calls[3].id);
    expect(settledThrough(calls, new Set([calls[2].id]), "old")).toBe(calls[1].id);
    expect(settledThrough(calls, new Set([calls[0].id, calls[3].id]), "old")).toBe("old");
    expect(settledThrough([], new Set(), undefined)).toBeUndefined();
  });

  it("takes the tool's norm as the median latency of its successful calls, once there are five", () => {
    const window = [10, 20, 30, 40].map((latencyMs) => row({ latencyMs }));
    expect(latencyNorm(window)).toBeUndefined();
    expect(latencyNorm([...window, row({ latencyMs: 1000, success: false })])).toBeUndefined();
    expect(latencyNorm(window, [callRecord("s", { latencyMs: 50 })])).toBe(30);
    expect(latencyNorm([...window, row({ latencyMs: 50 }), row({ latencyMs: 60 })])).toBe(35);
  });

  it("reads required arguments from the card's JSON schema", () => {
    const card = {
      author: { description: "", argNames: [], schema: { type: "object", required: ["query", 3] } },
    } as never;
    expect(requiredArgs(card)).toEqual(["query"]);
    expect(requiredArgs(null)).toEqual([]);
  });
});
