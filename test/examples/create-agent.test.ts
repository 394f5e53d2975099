import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** Token sequence of a text: runs of letters and digits, lower case. */
function tokens(text: string): string {
  return ` ${(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ")} `;
}

/** Every string leaf of a JSON value except the keyed fingerprints (hashes, not values). */
function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) if (key !== "fingerprints") stringLeaves(v, out);
  }
  return out;
}

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
    const db = new Database(summary.ledgerPath, { readonly: true });
    const rows = db.prepare("SELECT namespace, key, value FROM store").all() as {
      namespace: string;
      key: string;
      value: string;
    }[];
    db.close();
    expect(rows.length).toBeGreaterThan(30);
    const texts = rows.flatMap((r) => [r.namespace, r.key, ...stringLeaves(JSON.parse(r.value))]).map(tokens);
    for (const value of PLANTED) {
      const needle = tokens(value);
      expect(
        texts.filter((t) => t.includes(needle)),
        value,
      ).toEqual([]);
    }
    const files = [summary.ledgerPath, `${summary.ledgerPath}-wal`].filter((f) => existsSync(f));
    const raw = files.map((f) => readFileSync(f).toString("latin1").toLowerCase()).join("\n");
    for (const value of ["whitfield", "northwind"]) expect(raw).not.toContain(value);
  });
});
