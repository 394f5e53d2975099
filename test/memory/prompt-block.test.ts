import { describe, expect, it } from "vitest";
import type { Guideline } from "../../src/ledger/schema.js";
import { renderGuideline, renderMemoryBlock, renderStatsBlock } from "../../src/prompt/memory.js";

/** The prompt block of tool memory (src/prompt/memory.ts). */

const GUIDELINE: Guideline = {
  coreFunction: "Search the product documentation for a topic.",
  whatWorks: ["Calls with query as <text> scored well in 4 of 14 recent calls."],
  commonIssues: ["Succeeded but returned no results in 10 of 14 recent calls: the request matched nothing."],
  bestPractices: ["Make the request specific.", "Name the product area."],
  stats: {
    totalCalls: 57,
    recentCalls: 14,
    successRate: 0.9649,
    recentSuccessRate: 1,
    avgScore: 0.6053,
    recentAvgScore: 0.6429,
    avgLatencyMs: 1234.5,
    avgTokens: 85.4,
  },
  through: "x",
  calls: 14,
  synthesizer: "deterministic",
  refused: [],
  at: 1,
};

describe("the memory prompt block", () => {
  it("renders a guideline's four parts, then its statistics block", () => {
    expect(renderGuideline("search_docs", GUIDELINE)).toBe(
      [
        "Guideline for search_docs (from its 14 most recent evaluated calls):",
        "What it is for: Search the product documentation for a topic.",
        "What works:",
        "- Calls with query as <text> scored well in 4 of 14 recent calls.",
        "Common issues:",
        "- Succeeded but returned no results in 10 of 14 recent calls: the request matched nothing.",
        "Best practices:",
        "1. Make the request specific.",
        "2. Name the product area.",
        "Statistics:",
        "- calls: 57 evaluated, 14 recent",
        "- success rate: 96% overall, 100% recent",
        "- average score (0 to 1): 0.61 overall, 0.64 recent",
        "- average time: 1.2 s",
        "- average tokens: 85",
      ].join("\n"),
    );
  });

  it("says n/a for a figure with nothing behind it", () => {
    expect(
      renderStatsBlock({
        totalCalls: 0,
        recentCalls: 0,
        successRate: null,
        recentSuccessRate: null,
        avgScore: null,
        recentAvgScore: null,
        avgLatencyMs: 12.4,
        avgTokens: null,
      }),
    ).toContain(
      "- success rate: n/a overall, n/a recent\n- average score (0 to 1): n/a overall, n/a recent\n- average time: 12 ms\n- average tokens: n/a",
    );
  });

  it("shows the given (routed) tools in order, once each, leaving out those without a guideline; byte-stable", () => {
    const entries = [
      { tool: "b_tool", guideline: GUIDELINE },
      { tool: "no_memory", guideline: null },
      { tool: "a_tool", guideline: { ...GUIDELINE, calls: 3 } },
      { tool: "b_tool", guideline: GUIDELINE },
    ];
    const block = renderMemoryBlock(entries);
    expect(block.startsWith("Guidelines from past use of these tools:\n\nGuideline for b_tool")).toBe(true);
    expect(block.indexOf("Guideline for b_tool")).toBeLessThan(block.indexOf("Guideline for a_tool"));
    expect(block.match(/Guideline for b_tool/g)).toHaveLength(1);
    expect(block).not.toContain("no_memory");
    expect(renderMemoryBlock(structuredClone(entries))).toBe(block);
    expect(renderMemoryBlock([{ tool: "x", guideline: null }])).toBe("");
  });
});
