import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedTexts } from "../helpers/stored-values.js";
import { type DemoSummary, main } from "../../examples/quickstart.js";
import { agentThatLearns } from "../../examples/readme-snippet.js";
import { ScriptedSupportModel, supportDeskTools } from "../../examples/support-desk.js";

/** Values the demo's users typed or the model passed as arguments; none may be stored. */
const PLANTED = [
  "482913",
  "771204",
  "660981",
  "590114",
  "319870",
  "ORD-482913",
  "dana.whitfield@northwind.test",
  "bob.okafor@northwind.test",
  "dana whitfield",
  "whitfield",
  "okafor",
  "northwind",
  "18.50",
];

describe("examples/quickstart (the operator's loop with a hand-built graph)", () => {
  let dir: string;
  let summary: DemoSummary;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tool-lessons-demo-"));
    summary = await main({ quiet: true, dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("records both callers in their own partitions, with exact call counts", () => {
    expect(summary.ledgerPath).toBe(join(dir, "ledger.db"));
    expect(summary.partitions).toEqual(["u:alice", "u:bob"]);
    expect(summary.calls).toEqual({ "u:alice": 13, "u:bob": 5 });
  });

  it("records the refused ids and the schema refusals that never reached tool callbacks", () => {
    expect(summary.failures["u:alice"]).toEqual({
      lookup_order: { validation: 2 },
      refund_order: { validation: 2 },
    });
    expect(summary.failures["u:bob"]).toEqual({ lookup_order: { validation: 1 } });
    expect(summary.schemaRefusals).toBe(2);
  });

  it("proposes vetted revisions from repeated evidence, and only where there is enough", () => {
    const alice = summary.proposed["u:alice"];
    const lookup = alice.find((r) => r.tool === "lookup_order");
    expect(lookup?.notesAdded).toEqual([
      "order_id must look like ORD-######; calls with ###### were refused (validation).",
    ]);
    expect(lookup?.callExample).toBe('Example call: {"order_id": "ORD-######"}');
    const refund = alice.find((r) => r.tool === "refund_order");
    expect(refund?.notesAdded[0]).toMatch(/^amount must look like <number>/);
    const docs = alice.find((r) => r.tool === "search_public_docs");
    expect(docs?.avoidAdded.map((n) => n.tool)).toEqual(["search_internal_runbooks"]);
    expect(docs?.avoidAdded[0].text).toMatch(/^Not for .*cluster.* requests; use search_internal_runbooks\.$/);
    // Bob's single refusal is below minFailures: nothing is learned for him.
    expect(summary.proposed["u:bob"]).toEqual([]);
    expect(summary.applied.sort()).toEqual(["lookup_order", "refund_order", "search_public_docs"]);
  });

  it("shows the model the learned lines after apply, and the call then succeeds first time", () => {
    expect(summary.before.description).toBe("Look up an order: its status, items and total.");
    expect(summary.before.turn.calls).toEqual([
      { tool: "lookup_order", ok: false, errorClass: "validation" },
      { tool: "lookup_order", ok: true },
    ]);
    expect(summary.afterApply.description).toContain("Learned from use:");
    expect(summary.afterApply.description).toContain("order_id must look like ORD-######");
    expect(summary.afterApply.description).toContain('Example call: {"order_id": "ORD-######"}');
    expect(summary.afterApply.turn.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(summary.otherPartitionDescription).toBe(summary.before.description);
    expect(summary.docsAfterApply.calls).toEqual([{ tool: "search_internal_runbooks", ok: true }]);
  });

  it("takes the lesson back on undo: the description and the mistake return", () => {
    expect(summary.afterUndo.description).toBe(summary.before.description);
    expect(summary.afterUndo.description).not.toContain("ORD-");
    expect(summary.afterUndo.turn.calls[0]).toEqual({ tool: "lookup_order", ok: false, errorClass: "validation" });
    expect(summary.history).toEqual(["undone"]);
  });

  it("stores no planted value in any row", () => {
    const stored = storedTexts(summary.ledgerPath);
    expect(stored.rows).toBeGreaterThan(50);
    for (const value of PLANTED) expect(stored.hits(value), value).toEqual([]);
    // The raw file too (the letters-only values cannot turn up in a hash or id by chance).
    for (const value of ["whitfield", "okafor", "northwind"]) expect(stored.raw).not.toContain(value);
  });
});

describe("examples/readme-snippet (the README's usage code)", () => {
  it("runs: records, learns a note for lookup_order, applies and undoes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tool-lessons-snippet-"));
    // openLedger() reads its location from the environment: point it at a temp file, not Postgres.
    const saved = { ledger: process.env.TOOL_LESSONS_LEDGER, postgres: process.env.TOOL_LESSONS_POSTGRES_URL };
    process.env.TOOL_LESSONS_LEDGER = join(dir, "ledger.db");
    delete process.env.TOOL_LESSONS_POSTGRES_URL;
    try {
      const history = await agentThatLearns(new ScriptedSupportModel(), supportDeskTools());
      expect(history.map((r) => [r.status, r.approvedBy, r.closedBy])).toEqual([["undone", "you", "you"]]);
      expect(history[0].notesAdded[0]).toMatch(/^order_id must look like ORD-#{6}/);
    } finally {
      for (const [key, value] of [
        ["TOOL_LESSONS_LEDGER", saved.ledger],
        ["TOOL_LESSONS_POSTGRES_URL", saved.postgres],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
