import { describe, expect, it } from "vitest";
import type { Rule } from "../../src/ledger/schema.js";
import {
  CUT_ORDER,
  estimateTokens,
  type LessonsBlockInput,
  renderLessonsBlock,
  RETRIEVED_HEADING,
  TOOLS_HEADING,
} from "../../src/prompt/lessons-block.js";

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
    tools: [
      {
        name: "lookup_order",
        description: "Look up an order: its status, items and total.",
        notes: ["order_id must look like ORD-######; calls with ###### were refused (validation)."],
        notFor: ["Not for refunds; use refund_order."],
        exampleCall: 'Example call: {"order_id": "ORD-######"}',
        guideline: "Guideline for lookup_order (from its 12 most recent evaluated calls):\nWhat it is for: orders",
      },
      {
        name: "send_email",
        description: "Send an email to a customer.",
        notes: ["to must be an email address."],
        notFor: [],
        guideline: "Guideline for send_email (from its 10 most recent evaluated calls):\nWhat it is for: email",
      },
    ],
    retrieved: [
      { tool: "lookup_order", rule: "Failed more than once in one turn: check each argument's format." },
      { tool: "send_email", rule: "Keep emails short." },
    ],
  };
}

describe("renderLessonsBlock", () => {
  it("renders the pinned rules, the routed tools and the retrieved rules, byte-stable", () => {
    const block = renderLessonsBlock(input());
    expect(block.text).toContain("[critical] Never email Sarah.");
    expect(block.text).toContain(TOOLS_HEADING);
    expect(block.text).toContain(
      "### `lookup_order`\nLook up an order: its status, items and total.\nLearned from use:",
    );
    expect(block.text).toContain(RETRIEVED_HEADING);
    expect(block.text.indexOf("### `lookup_order`\nLook")).toBeLessThan(block.text.indexOf("### `send_email`\nSend"));
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

  it("is empty when there is nothing to show", () => {
    expect(renderLessonsBlock({ rules: [], tools: [], retrieved: [] })).toEqual({ text: "", tokens: 0, cut: [] });
  });
});
