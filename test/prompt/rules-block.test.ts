import { describe, expect, it, vi } from "vitest";
import type { Rule } from "../../src/ledger/schema.js";
import {
  RulesBlockCache,
  rulesBlockStamp,
  renderRulesBlock,
  RULES_BLOCK_HEADING,
  RULES_BLOCK_PREAMBLE,
} from "../../src/prompt/rules-block.js";
import { SHARED_SCOPE, UNSCOPED_TOOL } from "../../src/rules/model.js";

let clock = 1_000;
function rule(tool: string, text: string, priority: Rule["priority"], extra: Partial<Rule> = {}): Rule {
  clock += 1;
  return {
    v: 1,
    id: `rule-${[...clock.toString(16)].map((c) => "bcdfghjklmnpqrst"[parseInt(c, 16)]).join("")}`,
    partition: "u:alice",
    tool,
    rule: text,
    priority,
    source: "user_explicit",
    tags: [],
    createdAt: clock,
    updatedAt: clock,
    ...extra,
  };
}

/** Deterministic shuffles of a list. */
function shuffles<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  let seed = 7;
  for (let i = 0; i < n; i++) {
    const copy = [...items];
    for (let j = copy.length - 1; j > 0; j--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const k = seed % (j + 1);
      [copy[j], copy[k]] = [copy[k], copy[j]];
    }
    out.push(copy);
  }
  return out;
}

describe("renderRulesBlock", () => {
  it("lists critical then high rules per tool under one fixed preamble, tools by name", () => {
    const rules = [
      rule("send_email", "Never email Sarah.", "critical"),
      rule("exec_command", "Prefer dry runs first.", "high"),
      rule("send_email", "Keep subject lines short.", "high"),
      rule("exec_command", "Never run rm -rf.", "critical"),
      rule("send_email", "Sign off as Alice.", "normal"),
    ];
    const block = renderRulesBlock(rules);
    expect(block.text).toBe(
      [
        RULES_BLOCK_HEADING,
        RULES_BLOCK_PREAMBLE,
        "",
        "### `exec_command`",
        "- [critical] Never run rm -rf.",
        "- [high] Prefer dry runs first.",
        "",
        "### `send_email`",
        "- [critical] Never email Sarah.",
        "- [high] Keep subject lines short.",
        "",
      ].join("\n"),
    );
    expect(block.shown.map((r) => [r.tool, r.priority])).toEqual([
      ["exec_command", "critical"],
      ["exec_command", "high"],
      ["send_email", "critical"],
      ["send_email", "high"],
    ]);
    expect(block.omitted).toEqual([]);
  });

  it("is byte-for-byte the same for the same rules, in any order, and when a rule is only re-upserted", () => {
    const rules = Array.from({ length: 40 }, (_, i) =>
      rule(
        ["a_tool", "b_tool", "c_tool"][i % 3],
        `Rule number ${"x".repeat(i)} here.`,
        i % 4 === 0 ? "critical" : "high",
      ),
    );
    const first = renderRulesBlock(rules, { maxRules: 20 });
    for (const order of shuffles(rules, 20)) expect(renderRulesBlock(order, { maxRules: 20 }).text).toBe(first.text);
    const touched = rules.map((r) => ({ ...r, updatedAt: r.updatedAt + 10_000 }));
    const again = renderRulesBlock(touched, { maxRules: 20 });
    expect(again.text).toBe(first.text);
    expect(again.digest).toBe(first.digest);
    expect(renderRulesBlock([...rules, rule("a_tool", "One more.", "critical")], { maxRules: 20 }).digest).not.toBe(
      first.digest,
    );
  });

  it("never drops a critical rule, whatever the cap; high rules fill what is left and the cut is said", () => {
    const critical = Array.from({ length: 35 }, (_, i) =>
      rule(`tool_${i % 5}`, `Never do thing ${"y".repeat(i)}.`, "critical"),
    );
    const high = Array.from({ length: 10 }, (_, i) => rule("tool_0", `Prefer way ${"z".repeat(i)}.`, "high"));
    for (const maxRules of [0, 1, 30, 35]) {
      const block = renderRulesBlock([...critical, ...high], { maxRules });
      expect(block.shown.filter((r) => r.priority === "critical")).toHaveLength(35);
      expect(block.shown.filter((r) => r.priority === "high")).toHaveLength(0);
      expect(block.omitted).toEqual([{ tool: "tool_0", count: 10 }]);
      expect(block.text).toContain('- 10 more; recall them with recall_tool_rules({"tool":"tool_0"}).');
    }
    const roomy = renderRulesBlock([...critical, ...high], { maxRules: 40 });
    expect(roomy.shown.filter((r) => r.priority === "high").map((r) => r.rule)).toEqual(
      high.slice(5).map((r) => r.rule),
    );
    expect(roomy.omitted).toEqual([{ tool: "tool_0", count: 5 }]);
    expect(renderRulesBlock([...critical, ...high], { maxRules: 45 }).omitted).toEqual([]);
  });

  it("leaves out normal and unscoped rules, and rules of tools not asked for", () => {
    const rules = [
      rule("send_email", "Never email Sarah.", "critical"),
      rule(UNSCOPED_TOOL, "Never share my phone number.", "critical"),
      rule("send_email", "Sign off as Alice.", "normal"),
      rule("browse_web", "Never open banking sites.", "critical"),
    ];
    expect(renderRulesBlock(rules, { tools: ["send_email"] }).shown.map((r) => r.rule)).toEqual(["Never email Sarah."]);
    expect(renderRulesBlock(rules).shown.map((r) => r.tool)).toEqual(["browse_web", "send_email"]);
    expect(renderRulesBlock([rules[1], rules[2]])).toMatchObject({ text: "", shown: [], omitted: [] });
    expect(renderRulesBlock([])).toMatchObject({ text: "", shown: [] });
  });

  it("lists a rule held in the partition and in the shared scope once, and marks a shared one's scope", () => {
    const own = rule("send_email", "Never email Sarah.", "critical");
    const shared = { ...own, partition: SHARED_SCOPE };
    const sameText = rule("send_email", "never email sarah", "high", { partition: SHARED_SCOPE, id: "rule-other" });
    const other = rule("send_email", "Never email the board.", "critical", { partition: SHARED_SCOPE });
    const block = renderRulesBlock([shared, own, sameText, other]);
    expect(block.shown.map((r) => [r.rule, r.scope])).toEqual([
      ["Never email Sarah.", "partition"],
      ["Never email the board.", "shared"],
    ]);
  });

  it("points the cut line at the recall tool it is given", () => {
    const rules = [rule("a", "One.", "high"), rule("a", "Two.", "high")];
    expect(renderRulesBlock(rules, { maxRules: 1, recallTool: "rules_for" }).text).toContain(
      '- 1 more; recall them with rules_for({"tool":"a"}).',
    );
  });
});

describe("RulesBlockCache", () => {
  const rules = [rule("send_email", "Never email Sarah.", "critical"), rule("exec", "Ask before sudo.", "high")];
  const thread = (threadId: string, partition = "u:alice") => ({ partition, threadId, writeVersions: [0, 0] });

  it("renders a thread's block once and serves the same object until the stamp moves", () => {
    const render = vi.fn(renderRulesBlock);
    const cache = new RulesBlockCache({ render });
    const first = cache.serve(thread("t"), rules, { tools: ["send_email", "exec"] });
    expect(cache.serve(thread("t"), [...rules].reverse(), { tools: ["exec", "send_email", "exec"] })).toBe(first);
    expect(render).toHaveBeenCalledTimes(1);
    expect(first).toEqual(renderRulesBlock(rules, { tools: ["send_email", "exec"] }));

    const bumped = cache.serve({ ...thread("t"), writeVersions: [1, 0] }, rules, { tools: ["send_email", "exec"] });
    expect(bumped).not.toBe(first);
    expect(bumped.text).toBe(first.text);
    expect(render).toHaveBeenCalledTimes(2);
    expect(cache.size).toBe(1);
  });

  it("keys by partition and thread: one never gets another's block", () => {
    const cache = new RulesBlockCache();
    const alice = cache.serve(thread("t"), rules);
    const bob = cache.serve(thread("t", "u:bob"), []);
    expect(bob.text).toBe("");
    expect(cache.serve(thread("t"), rules)).toBe(alice);
    expect(cache.serve(thread("t2"), rules)).not.toBe(alice);
    expect(cache.size).toBe(3);
  });

  it("is bounded: past maxThreads the least recently served thread is dropped", () => {
    const render = vi.fn(renderRulesBlock);
    const cache = new RulesBlockCache({ maxThreads: 2, render });
    const a = cache.serve(thread("a"), rules);
    cache.serve(thread("b"), rules);
    expect(cache.serve(thread("a"), rules)).toBe(a); // a is now the most recent
    cache.serve(thread("c"), rules); // drops b
    expect(cache.size).toBe(2);
    expect(render).toHaveBeenCalledTimes(3);
    expect(cache.serve(thread("a"), rules)).toBe(a);
    cache.serve(thread("b"), rules);
    expect(render).toHaveBeenCalledTimes(4);
    for (let i = 0; i < 100; i++) cache.serve(thread(`t${i}`), rules);
    expect(cache.size).toBe(2);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it("serves frozen blocks: a turn cannot change what later turns are given", () => {
    const block = new RulesBlockCache().serve(thread("t"), rules);
    expect(Object.isFrozen(block) && Object.isFrozen(block.shown) && Object.isFrozen(block.shown[0])).toBe(true);
  });
});

describe("rulesBlockStamp", () => {
  const base = [rule("send_email", "Never email Sarah.", "critical")];
  const stamp = (rules: Rule[], tools?: string[], versions = [0, 0]) =>
    rulesBlockStamp(rules, tools === undefined ? {} : { tools }, versions);

  it("moves with what can change the block: a pinned rule added, updated, deleted, a write here, the options", () => {
    const s = stamp(base, ["send_email"]);
    expect(stamp([...base], ["send_email"])).toBe(s);
    expect(stamp([...base, rule("send_email", "Keep it short.", "high")], ["send_email"])).not.toBe(s);
    expect(stamp([{ ...base[0], updatedAt: base[0].updatedAt + 1 }], ["send_email"])).not.toBe(s);
    expect(stamp([], ["send_email"])).not.toBe(s);
    expect(stamp(base, ["send_email"], [0, 1])).not.toBe(s);
    expect(stamp(base, ["send_email", "exec"])).not.toBe(s);
    expect(rulesBlockStamp(base, { tools: ["send_email"], maxRules: 3 }, [0, 0])).not.toBe(s);
  });

  it("does not move for rules that cannot reach the block (normal, unscoped, other tools)", () => {
    const s = stamp(base, ["send_email"]);
    expect(
      stamp(
        [
          ...base,
          rule("send_email", "Sign off as Alice.", "normal"),
          rule(UNSCOPED_TOOL, "Never share my phone number.", "critical"),
          rule("exec", "Never run rm -rf.", "critical"),
        ],
        ["send_email"],
      ),
    ).toBe(s);
  });
});
