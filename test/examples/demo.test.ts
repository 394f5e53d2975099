import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedTexts } from "../helpers/stored-values.js";
import { type DayDemoSummary, main } from "../../examples/demo.js";
import { supportDeskTools } from "../../examples/support-desk.js";
import { LEARNED_HEADING } from "../../src/prompt/describe.js";

/** Values the demo's users typed or the model passed as arguments; none may be stored. */
const PLANTED = [
  "482913",
  "771204",
  "202020",
  "303030",
  "319870",
  "590114",
  "ORD-482913",
  "dana.whitfield@northwind.test",
  "whitfield",
  "northwind",
  "18.50",
  "14.00",
];

describe("examples/demo (npm run demo): a day at the support desk through the four nodes", () => {
  let dir: string;
  let day: DayDemoSummary;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tool-lessons-day-"));
    day = await main({ quiet: true, dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a tool failing, a lesson proposed, applied by the operator, and the failure gone", () => {
    expect(day.morning.order.calls).toEqual([
      { tool: "lookup_order", ok: false },
      { tool: "lookup_order", ok: true },
    ]);
    expect(day.morning.refund.calls[0]).toEqual({ tool: "refund_order", ok: false });
    expect(day.pending.map((p) => p.tool).sort()).toEqual(["lookup_order", "refund_order", "search_public_docs"]);
    expect(day.pending.find((p) => p.tool === "lookup_order")?.notesAdded[0]).toMatch(
      /^order_id must look like ORD-######/,
    );
    expect(day.applied.sort()).toEqual(["lookup_order", "refund_order", "search_public_docs"]);
    expect(day.afternoon.order.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(day.afternoon.refund.calls).toEqual([{ tool: "refund_order", ok: true }]);
    // The docs question goes where the learned "Not for" line sends it.
    expect(day.afternoon.docs.calls).toEqual([{ tool: "search_internal_runbooks", ok: true }]);
  });

  it("nothing crosses partitions: bob (named in configurable only) still makes the mistake", () => {
    expect(day.morning.bob.calls[0]).toEqual({ tool: "lookup_order", ok: false });
    expect(day.afternoon.bob.calls[0]).toEqual({ tool: "lookup_order", ok: false });
    expect(day.calls["u:bob"]).toBeGreaterThan(0);
  });

  it("an edict is a rule at once, obeyed from the next turn, in that caller's partition only", () => {
    expect(day.morning.edict.rules).toBe(1);
    expect(day.morning.obeyed.calls).toEqual([]);
    expect(day.morning.obeyed.answer).toMatch(/won't email Dana/);
    expect(day.morning.obeyed.block).toContain("[critical] Never email Dana.");
    expect(day.morning.otherCaller.calls).toEqual([{ tool: "send_email", ok: true }]);
    expect(day.rules).toEqual([
      { partition: "u:alice", priority: "critical", tool: "send_email", rule: "Never email Dana." },
    ]);
  });

  it("a missed wording is learned and routed right the next time", () => {
    expect(day.morning.missed.routed).not.toContain("refund_order");
    const refund = day.pending.find((p) => p.tool === "refund_order");
    expect(refund?.queriesAdded.some((q) => /money back/.test(q))).toBe(true);
    expect(day.afternoon.missed.routed[0]).toBe("refund_order");
  });

  it("prints the tool's description as the model was sent it: the author's text, then the learned lines", () => {
    const { description } = supportDeskTools().find((t) => t.name === "lookup_order")!;
    const [author, learned] = day.shownLookup.split(`\n\n${LEARNED_HEADING}\n`);
    expect(author).toBe(description);
    const lines = learned?.split("\n") ?? [];
    expect(lines[0]).toBe(`- ${day.pending.find((p) => p.tool === "lookup_order")?.notesAdded[0]}`);
    expect(lines).toContain('- Example call: {"order_id": "ORD-######"}');
    // The model saw exactly this on that turn's first call.
    expect(day.afternoon.order.shown.find((t) => t.name === "lookup_order")?.description).toBe(day.shownLookup);
    // Bob's partition learned nothing: his lookup_order was sent as its author wrote it.
    expect(day.afternoon.bob.shown.find((t) => t.name === "lookup_order")?.description).toBe(description);
  });

  it("a guideline is shown before the tool is used", () => {
    expect(day.afternoon.order.block).toContain("Guideline for lookup_order");
  });

  it("the evening shows each applied lesson's measured effect, counts only", () => {
    expect(day.effects.map((e) => e.tool).sort()).toEqual([...day.applied].sort());
    // A day's traffic is far below the minimum a side: the demo says so rather than claim an effect.
    for (const e of day.effects) {
      expect(e.verdict).toBe("not_enough_data");
      expect(e.line).toMatch(
        /^not enough data yet \(20 a side\): (refused \(\w+\)|missed|confused with \w+) \d+\/\d+ -> \d+\/\d+/,
      );
      for (const value of PLANTED) expect(e.line).not.toContain(value);
    }
  });

  it("the operator's view and an undo: the failure is back", () => {
    expect(day.history).toEqual(["applied"]);
    expect(day.afterUndo.calls[0]).toEqual({ tool: "refund_order", ok: false });
  });

  it("stores no planted value in any row or in the file", () => {
    const stored = storedTexts(day.ledgerPath);
    expect(stored.rows).toBeGreaterThan(50);
    for (const value of PLANTED) expect(stored.hits(value), value).toEqual([]);
    // The raw file too (the letters-only values cannot turn up in a hash or id by chance).
    for (const value of ["whitfield", "northwind"]) expect(stored.raw).not.toContain(value);
  });
});
