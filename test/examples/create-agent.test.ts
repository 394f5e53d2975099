import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedTexts } from "../helpers/stored-values.js";
import { type CreateAgentDemoSummary, main } from "../../examples/create-agent.js";

/** Values the users typed or the model passed as arguments; none may be stored. */
const PLANTED = [
  "482913",
  "771204",
  "660981",
  "590114",
  "319870",
  "ORD-482913",
  "dana.whitfield@northwind.test",
  "dana whitfield",
  "whitfield",
  "northwind",
  "18.50",
];

describe("examples/create-agent (the support desk through createAgent + toolLessonsMiddleware)", () => {
  let dir: string;
  let summary: CreateAgentDemoSummary;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tool-lessons-create-agent-"));
    summary = await main({ quiet: true, dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("files every route record, turn and call of a request in the partition named only in context", () => {
    expect(summary.ledgerPath).toBe(join(dir, "ledger.db"));
    expect(summary.records).toEqual({
      "u:alice": { routes: 6, turns: 6, calls: 8, failed: 4 },
      "u:bob": { routes: 3, turns: 3, calls: 4, failed: 1 },
    });
    expect(summary.unjoinedRoutes).toBe(0);
  });

  it("routes 4 of the 8 tools per request", () => {
    expect(summary.before.shown).toHaveLength(4);
    expect(summary.before.shown.map((t) => t.name)).toContain("lookup_order");
  });

  it("captures alice's edict, pins it, and the model obeys it on her next turn; bob is not bound", () => {
    expect(summary.edict.rule).toBe("Never email Dana.");
    expect(summary.edict.refused.calls).toEqual([]);
    expect(summary.edict.refused.system).toContain("- [critical] Never email Dana.");
    expect(summary.edict.refused.answer).toMatch(/^I won't email dana/);
    expect(summary.edict.other.calls).toEqual([{ tool: "send_email", ok: true }]);
    expect(summary.edict.other.system).toBe("");
  });

  it("shows the learned lines after apply, and the call succeeds first time; undo brings the mistake back", () => {
    expect(summary.before.calls).toEqual([
      { tool: "lookup_order", ok: false },
      { tool: "lookup_order", ok: true },
    ]);
    expect(summary.applied).toEqual(expect.arrayContaining(["lookup_order", "refund_order"]));
    const shown = summary.afterApply.shown.find((t) => t.name === "lookup_order")?.description;
    expect(shown).toContain("Learned from use:");
    expect(shown).toContain('Example call: {"order_id": "ORD-######"}');
    expect(summary.afterApply.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(summary.otherPartition).toBe("Look up an order: its status, items and total.");
    expect(summary.afterUndo.shown.find((t) => t.name === "lookup_order")?.description).toBe(summary.otherPartition);
    expect(summary.afterUndo.calls[0]).toEqual({ tool: "lookup_order", ok: false });
  });

  it("stores no planted value in any row", () => {
    const stored = storedTexts(summary.ledgerPath);
    expect(stored.rows).toBeGreaterThan(30);
    for (const value of PLANTED) expect(stored.hits(value), value).toEqual([]);
    // The raw file too (the letters-only values cannot turn up in a hash or id by chance).
    for (const value of ["whitfield", "northwind"]) expect(stored.raw).not.toContain(value);
  });
});
