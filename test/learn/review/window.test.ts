import { InMemoryStore } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ToolIndex } from "../../../src/routing/tool-index.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import type { CallRecord, NewRecord, RouteRecord, TurnRecord } from "../../../src/ledger/schema.js";
import { SqliteStore } from "../../../src/ledger/sqlite-store.js";
import { LessonManager } from "../../../src/learn/manager.js";
import { registerTools } from "../../../src/learn/register.js";
import { CALL_SLACK_MS, gatherWindow } from "../../../src/learn/review/gather.js";
import { DEFAULT_SETTINGS } from "../../../src/settings.js";

/**
 * A review reads its window (the newest `reviewTurns` turns and routes, the calls around them,
 * and at least each tool's newest `maxCallsPerTool`), not the partition's history; where the
 * window holds everything it reads exactly what the whole partition holds.
 */

const P = "default";
const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const TOOLS = [
  { name: "lookup_order", description: "Look up an order by its id and show its status." },
  { name: "refund_order", description: "Refund an order to the customer's card." },
  { name: "track_parcel", description: "Track a parcel shipment with the carrier." },
  { name: "send_email", description: "Send an email to a customer." },
  { name: "cancel_order", description: "Cancel an order that has not shipped yet." },
];
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** Request i at START + i × `step`: its route, one call of `tool` (failing every 3rd), its turn. */
async function traffic(ledger: Ledger, from: number, to: number, tool: (i: number) => string, step = HOUR) {
  const routes: NewRecord<RouteRecord>[] = [];
  const calls: NewRecord<CallRecord>[] = [];
  const turns: NewRecord<TurnRecord>[] = [];
  for (let i = from; i < to; i++) {
    const at = START + i * step;
    const name = tool(i);
    const failed = i % 3 === 0;
    const requestId = `q${i}`;
    const request = `where is my order number ${i % 5} please`;
    routes.push({
      partition: P,
      at,
      requestId,
      request,
      offered: [{ tool: name, rank: 1, score: 1 }],
      allSent: false,
      k: 2,
    });
    calls.push({
      partition: P,
      at: at + 1,
      tool: name,
      runId: requestId,
      requestId,
      args: [{ name: "order_id", kind: "string", shape: failed ? "#####" : "ORD-#####" }],
      fingerprints: [`f${i}`],
      outcome: failed ? "error" : "success",
      errorClass: failed ? "validation" : undefined,
      errorMessage: failed ? "order_id must start with ORD-" : undefined,
      source: "api",
    });
    turns.push({
      partition: P,
      at: at + 2,
      requestId,
      request,
      calls: [{ tool: name, outcome: failed ? "error" : "success" }],
      servedBy: failed ? undefined : name,
    });
  }
  await ledger.appendRoutes(routes);
  await ledger.appendCalls(calls);
  await ledger.appendTurns(turns);
}

async function sqliteLedger(): Promise<{ store: SqliteStore; ledger: Ledger }> {
  const store = await SqliteStore.open(":memory:");
  stores.push(store);
  const ledger = new Ledger(store, { failureSink: () => undefined });
  await ledger.configure(P, { retainCallsPerTool: 100_000, retainTurns: 100_000 });
  await registerTools(ledger, TOOLS, { partition: P });
  return { store, ledger };
}

describe("gatherWindow", () => {
  it.each([
    ["InMemoryStore", async () => new Ledger(new InMemoryStore(), { failureSink: () => undefined })],
    ["SqliteStore", async () => (await sqliteLedger()).ledger],
  ])("on %s, holds exactly the partition's records when the window holds everything", async (_n, make) => {
    const ledger = await make();
    await registerTools(ledger, TOOLS, { partition: P });
    // Calls of a tool no card names take part too (the vet's value check reads their fingerprints).
    await traffic(ledger, 0, 90, (i) => (i % 10 === 0 ? "retired_tool" : TOOLS[i % 3].name));
    const window = await gatherWindow(ledger, P);
    expect(ids(window.turns)).toEqual(ids(await ledger.listTurns(P)));
    expect(ids(window.routes)).toEqual(ids(await ledger.listRoutes(P)));
    expect(ids(window.calls)).toEqual(ids(await ledger.listCalls(P)));
    expect(window.calls.some((c) => c.tool === "retired_tool")).toBe(true);
  });

  it("reads the newest reviewTurns turns and routes, the calls since the oldest of them, and each tool's newest maxCallsPerTool", async () => {
    const { ledger } = await sqliteLedger();
    // Old history: track_parcel only; then 200 requests an hour apart to the two other tools.
    await traffic(ledger, 0, 100, () => "track_parcel");
    await traffic(ledger, 100, 300, (i) => (i % 2 === 0 ? "lookup_order" : "refund_order"));
    const window = await gatherWindow(ledger, P, { config: { reviewTurns: 50, maxCallsPerTool: 10 } });

    expect(ids(window.turns)).toEqual(ids(await ledger.listTurns(P, { limit: 50 })));
    expect(ids(window.routes)).toEqual(ids(await ledger.listRoutes(P, { limit: 50 })));
    const oldest = window.turns[0].at;
    const byTool = (tool: string) => window.calls.filter((c) => c.tool === tool);
    // The window's own calls: every call made since its oldest turn (less the slack), and no older one.
    for (const tool of ["lookup_order", "refund_order"]) {
      const all = await ledger.listCalls(P, { tool });
      expect(ids(byTool(tool))).toEqual(ids(all.filter((c) => c.at >= oldest - CALL_SLACK_MS)));
      expect(byTool(tool).length).toBe(25);
    }
    // A tool with no call in the window still brings its newest maxCallsPerTool (detection's window).
    expect(ids(byTool("track_parcel"))).toEqual(ids(await ledger.listCalls(P, { tool: "track_parcel", limit: 10 })));
    expect(window.calls).toHaveLength(60);
    // Every request of the window has its call in it, for the value check.
    const inWindow = new Set(window.calls.map((c) => c.requestId));
    expect(window.turns.every((t) => inWindow.has(t.requestId))).toBe(true);
  });

  it("reads the same number of rows through the index whatever the history holds", async () => {
    const readFor = async (history: number): Promise<{ rows: number; searchedRecords: boolean }> => {
      const { store, ledger } = await sqliteLedger();
      await traffic(ledger, 0, history, (i) => TOOLS[i % 3].name);
      const newest = vi.spyOn(store, "newestInNamespace");
      const search = vi.spyOn(store, "search");
      await gatherWindow(ledger, P, { config: { reviewTurns: 30 } });
      let rows = 0;
      for (const result of newest.mock.results) rows += ((await result.value) as unknown[]).length;
      const searchedRecords = search.mock.calls.some(([ns]) => ns.includes("calls") || ns.includes("turns"));
      return { rows, searchedRecords };
    };
    const small = await readFor(300);
    const large = await readFor(3000);
    expect(large.rows).toBe(small.rows);
    expect(large.searchedRecords).toBe(false);
    expect(large.rows).toBeLessThan(200);
  });
});

describe("LessonManager.review over a window", () => {
  it("learns from the window: requests older than it are not evidence (with the whole history they are)", async () => {
    const { ledger } = await sqliteLedger();
    await ledger.configure(P, { retainCallsPerTool: 100_000, retainTurns: 100_000, routingK: 2 });
    // Old history: refund_order served requests routing had not offered it for (misses).
    const old = [
      "track the parcel shipment of my order with the carrier",
      "track parcel shipment of the order, carrier delivery date",
    ];
    for (let i = 0; i < 6; i++) {
      const requestId = `old${i}`;
      const request = old[i % 2];
      const at = START + i * HOUR;
      await ledger.appendRoutes([
        {
          partition: P,
          at,
          requestId,
          request,
          offered: [
            { tool: "track_parcel", rank: 1, score: 1 },
            { tool: "send_email", rank: 2, score: 0.9 },
          ],
          allSent: false,
          k: 2,
        },
      ]);
      await ledger.appendCalls([
        {
          partition: P,
          at: at + 1,
          tool: "refund_order",
          runId: requestId,
          requestId,
          args: [],
          fingerprints: [],
          outcome: "success",
          source: "api",
        },
      ]);
      await ledger.appendTurns([
        {
          partition: P,
          at: at + 2,
          requestId,
          request,
          calls: [{ tool: "refund_order", outcome: "success" }],
          servedBy: "refund_order",
        },
      ]);
    }
    // Then 100 ordinary requests, each routed to the tool that served it.
    await traffic(ledger, 100, 200, (i) => TOOLS[i % 3].name);
    // Wordings off: the subject is the evidence window of example learning.
    const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger, wordings: false }) });
    const learned = async (reviewTurns: number) => {
      const review = await manager.review({ partition: P, dryRun: true, config: { reviewTurns } });
      return JSON.stringify([review.revisions.filter((r) => r.tool === "refund_order"), review.refused]);
    };
    expect(await learned(100_000)).toContain("parcel shipment");
    expect(await learned(60)).not.toContain("parcel shipment");
  });

  it("has defaults under which retention keeps what the windows read", () => {
    expect(DEFAULT_SETTINGS.retainTurns).toBeGreaterThanOrEqual(DEFAULT_SETTINGS.reviewTurns);
    expect(DEFAULT_SETTINGS.retainCallsPerTool).toBeGreaterThanOrEqual(DEFAULT_SETTINGS.maxCallsPerTool);
  });
});
