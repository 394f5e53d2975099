import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hasWindowReads } from "../../src/ledger/collections/store-io.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { TransactionalPostgresStore } from "../../src/ledger/postgres.js";
import type { CallRecord, NewRecord, TurnRecord } from "../../src/ledger/schema.js";
import { freshPostgresStore, POSTGRES_URL, postgresUnavailableReason } from "../helpers/postgres.js";

/**
 * Window reads on a real Postgres: the newest records of one namespace through the primary key,
 * exact namespaces only (the store's own prefix search matches `a` against `ab`), and pruning
 * that reads only the keys it deletes.
 */

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[tool-lessons] Skipping the Postgres window tests: ${unavailable}`);
const suite = unavailable ? describe.skip : describe;

const START = Date.UTC(2026, 0, 1);
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
const call = (tool: string, i: number, partition = "p"): NewRecord<CallRecord> => ({
  partition,
  at: START + i * 1000,
  tool,
  runId: `r${i}`,
  args: [],
  fingerprints: [],
  outcome: "success",
  source: "api",
});
const turn = (i: number, partition = "p"): NewRecord<TurnRecord> => ({
  partition,
  at: START + i * 1000,
  requestId: `q${i}`,
  request: `request ${i}`,
  calls: [],
});

suite("Postgres window reads", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const open = async () => {
    const fresh = await freshPostgresStore();
    cleanups.push(fresh.cleanup);
    return { ...fresh, store: fresh.store as TransactionalPostgresStore };
  };

  it("reads a tool's and a partition's newest records through the index, exact namespaces only", async () => {
    const { store } = await open();
    expect(hasWindowReads(store)).toBe(true);
    const ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("p", { retainCallsPerTool: 1000 });
    const rows: NewRecord<CallRecord>[] = [];
    for (let i = 0; i < 60; i++) rows.push(call(i % 3 === 0 ? "a" : "ab", i), call("a", i, "p1"), call("a", i, "p10"));
    await ledger.appendCalls(rows);
    await ledger.appendTurns(Array.from({ length: 30 }, (_, i) => turn(i)));
    const search = vi.spyOn(store, "search");

    const all = await ledger.listCalls("p", { tool: "a" });
    expect(all).toHaveLength(20);
    expect(all.every((c) => c.tool === "a" && c.partition === "p")).toBe(true);
    expect(ids(await ledger.listCalls("p", { tool: "a", limit: 5 }))).toEqual(ids(all).slice(15));
    expect(ids(await ledger.listCalls("p", { tool: "a", after: all[12].id, limit: 3 }))).toEqual(ids(all).slice(17));
    const turns = await ledger.listTurns("p");
    expect(turns).toHaveLength(30);
    expect(ids(await ledger.listTurns("p", { limit: 4 }))).toEqual(ids(turns).slice(26));
    expect(search).not.toHaveBeenCalled();
  });

  it("plans the window read as a backward scan of the primary key", async () => {
    const { store, schema } = await open();
    await new Ledger(store).appendCalls(Array.from({ length: 50 }, (_, i) => call("a", i)));
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      // On a table this small the planner may sort anyway; forbidding it shows the index can serve the read.
      await client.query("SET enable_seqscan = off");
      await client.query("SET enable_sort = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT key FROM "${schema}".store WHERE namespace_path = $1 ORDER BY key DESC LIMIT 5`,
        ["tool-lessons:p:calls:a"],
      );
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(plan).toMatch(/Index (Only )?Scan Backward/);
      expect(plan).not.toMatch(/Sort/);
    } finally {
      await client.end();
    }
  });

  it("prunes to the newest through one batch of deletes, the doomed keys read from the index", async () => {
    const { store } = await open();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("p", { retainCallsPerTool: 20, retainTurns: 100 });
    const calls = await ledger.appendCalls(Array.from({ length: 45 }, (_, i) => call("a", i)));
    await ledger.appendCalls(Array.from({ length: 5 }, (_, i) => call("ab", i)));
    const turns = await ledger.appendTurns(Array.from({ length: 250 }, (_, i) => turn(i)));
    expect(ids(await ledger.listCalls("p", { tool: "a" }))).toEqual(ids(calls).slice(25));
    expect(await ledger.listCalls("p", { tool: "ab" })).toHaveLength(5);
    expect(ids(await ledger.listTurns("p"))).toEqual(ids(turns).slice(150));
    expect(await store.keysBeyondNewest(["tool-lessons", "p", "calls", "a"], 15)).toEqual(ids(calls).slice(25, 30));
  });
});
