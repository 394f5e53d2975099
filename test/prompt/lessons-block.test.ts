import { describe, expect, it } from "vitest";
import type { Guideline, Rule } from "../../src/ledger/schema.js";
import {
  CUT_ORDER,
  estimateTokens,
  type LessonsBlockInput,
  renderLessonsBlock,
  RETRIEVED_HEADING,
} from "../../src/prompt/lessons-block.js";
import { MEMORY_HEADING } from "../../src/prompt/memory.js";
import { RULES_BLOCK_HEADING } from "../../src/prompt/rules-block.js";

const guideline = (coreFunction: string): Guideline => ({
  coreFunction,
  whatWorks: ["Calls with order_id as ORD-<digits> scored well in 9 of 12 recent calls."],
  commonIssues: ["Refused in 3 of 12 recent calls: the id had no ORD- prefix."],
  bestPractices: ["Send the id with its ORD- prefix."],
  stats: {
    totalCalls: 40,
    recentCalls: 12,
    successRate: 0.75,
    recentSuccessRate: 0.75,
    avgScore: 0.7,
    recentAvgScore: 0.7,
    avgLatencyMs: 120,
    avgTokens: 40,
  },
  through: "x",
  calls: 12,
  synthesizer: "deterministic",
  refused: [],
  at: 1,
});

const rule = (id: string, tool: string, text: string, priority: Rule["priority"], createdAt = 1): Rule => ({
  v: 1,
  id,
  partition: "u:a",
  tool,
  rule: text,
  priority,
  source: "user_explicit",
  tags: [],
  createdAt,
  updatedAt: createdAt,
});

function input(): LessonsBlockInput {
  return {
    rules: [
      rule("r1", "send_email", "Never email Sarah.", "critical"),
      rule(
        "r2",
        "send_email",
        "Sign every email with the team name and the ticket number, and keep the reference line on top.",
        "high",
        2,
      ),
      rule(
        "r3",
        "lookup_order",
        "Say the order's status in one line, then its items, then the total with its currency.",
        "high",
        3,
      ),
    ],
    guidelines: [
      { tool: "lookup_order", guideline: guideline("Look up orders.") },
      { tool: "search_docs", guideline: null },
      { tool: "send_email", guideline: guideline("Email customers.") },
    ],
    retrieved: [
      { tool: "lookup_order", rule: "Failed more than once in one turn: check each argument's format." },
      { tool: "send_email", rule: "Keep emails short." },
    ],
  };
}

describe("renderLessonsBlock", () => {
  it("renders the pinned rules, the retrieved rules and the routed tools' guidelines, byte-stable", () => {
    const block = renderLessonsBlock(input());
    expect(block.text).toContain("[critical] Never email Sarah.");
    const at = [RULES_BLOCK_HEADING, RETRIEVED_HEADING, MEMORY_HEADING].map((h) => block.text.indexOf(h));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    expect(block.text.indexOf("Guideline for lookup_order")).toBeLessThan(
      block.text.indexOf("Guideline for send_email"),
    );
    expect(block.cut).toEqual([]);
    expect(block.tokens).toBe(estimateTokens(block.text));
    // The same input in another object, rules in another order: the same bytes.
    const again = input();
    expect(renderLessonsBlock({ ...again, rules: [...again.rules].reverse() }).text).toBe(block.text);
  });

  it("cuts in the stated order as the budget shrinks, and never a critical rule", () => {
    const full = renderLessonsBlock(input());
    let previous = full.tokens;
    const firstCut: string[] = [];
    for (let budget = full.tokens - 1; budget >= 0; budget -= 5) {
      const block = renderLessonsBlock(input(), { maxTokens: budget });
      expect(block.text).toContain("[critical] Never email Sarah.");
      expect(block.tokens).toBeLessThanOrEqual(previous);
      previous = block.tokens;
      // Each step is taken whole before the next: every step before the last one cut is done.
      const steps = block.cut.map((c) => c.step);
      expect(steps).toEqual(CUT_ORDER.slice(0, steps.length));
      if (steps.length > 0 && !firstCut.includes(steps.at(-1)!)) firstCut.push(steps.at(-1)!);
    }
    expect(firstCut).toEqual([...CUT_ORDER]);
    // With nothing but the critical rule left, the block may exceed the budget.
    const tiny = renderLessonsBlock(input(), { maxTokens: 1 });
    expect(tiny.tokens).toBeGreaterThan(1);
    expect(tiny.text).not.toContain("Sign every email");
    expect(tiny.text).toContain("1 more; recall them with recall_tool_rules");
  });

  it("retrieved rules go first, then the lowest-routed tool's guideline", () => {
    const withoutRetrieved = renderLessonsBlock({ ...input(), retrieved: [] });
    const block = renderLessonsBlock(input(), { maxTokens: withoutRetrieved.tokens });
    expect(block.text).toBe(withoutRetrieved.text);
    expect(block.cut).toEqual([{ step: "retrieved_rules", count: 2 }]);
    const oneGuideline = renderLessonsBlock(input(), { maxTokens: block.tokens - 1 });
    expect(oneGuideline.text).toContain("Guideline for lookup_order");
    expect(oneGuideline.text).not.toContain("Guideline for send_email");
  });

  it("holds no tool description and no learned line: those go into each tool's own definition", () => {
    const block = renderLessonsBlock(input());
    expect(block.text).not.toMatch(/Learned from use|Look up an order: its status/);
  });

  it("keeps only the routed tools' pinned rules when given the routed tools", () => {
    const block = renderLessonsBlock({ ...input(), tools: ["lookup_order"] });
    expect(block.text).not.toContain("Never email Sarah.");
    expect(block.text).toContain("Say the order's status in one line");
  });

  it("is empty when there is nothing to show", () => {
    expect(renderLessonsBlock({ rules: [], guidelines: [], retrieved: [] })).toEqual({ text: "", tokens: 0, cut: [] });
  });
});
