import { describe, expect, it } from "vitest";
import { ruleId } from "../../src/ledger/collections/rules.js";
import { observeRepeatedFailures } from "../../src/rules/observe.js";

const fail = (tool: string, errorClass?: "validation" | "timeout" | "permission") => ({
  tool,
  outcome: "error" as const,
  ...(errorClass ? { errorClass } : {}),
});
const ok = (tool: string) => ({ tool, outcome: "success" as const });

describe("observeRepeatedFailures", () => {
  it("gives a tool that failed twice in one turn a normal post_turn rule naming the failure class", () => {
    const [o, ...rest] = observeRepeatedFailures({
      calls: [fail("refund", "validation"), ok("lookup"), fail("refund", "validation"), ok("refund")],
    });
    expect(rest).toEqual([]);
    expect(o).toEqual({
      tool: "refund",
      rule: "Failed more than once in one turn: its arguments were refused (validation): check each argument's format against the schema before calling it.",
      priority: "normal",
      source: "post_turn",
      tags: ["repeated_failure", "validation"],
    });
  });

  it("gives nothing for one failure, nor for failures spread over tools", () => {
    expect(observeRepeatedFailures({ calls: [fail("refund", "validation"), ok("refund")] })).toEqual([]);
    expect(observeRepeatedFailures({ calls: [fail("refund"), fail("lookup")] })).toEqual([]);
    expect(observeRepeatedFailures({ calls: [] })).toEqual([]);
  });

  it("names the class the failures had most, unknown for failures without one, and honours minFailures", () => {
    const calls = [fail("a", "timeout"), fail("a", "permission"), fail("a", "timeout"), fail("b"), fail("b")];
    const got = observeRepeatedFailures({ calls });
    expect(got.map((o) => [o.tool, o.tags[1]])).toEqual([
      ["a", "timeout"],
      ["b", "unknown"],
    ]);
    expect(observeRepeatedFailures({ calls }, { minFailures: 3 }).map((o) => o.tool)).toEqual(["a"]);
  });

  it("holds no value: the same text (and so the same rule id) whatever the calls were", () => {
    const one = observeRepeatedFailures({ calls: [fail("refund", "validation"), fail("refund", "validation")] })[0];
    const three = observeRepeatedFailures({
      calls: [fail("refund", "validation"), fail("refund", "validation"), fail("refund", "validation")],
    })[0];
    expect(three.rule).toBe(one.rule);
    expect(ruleId(three.tool, three.rule)).toBe(ruleId(one.tool, one.rule));
    for (const o of observeRepeatedFailures({ calls: [fail("x", "permission"), fail("x", "permission")] })) {
      expect(o.rule).not.toMatch(/\d/);
    }
  });
});
