import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hasWindowReads } from "../../src/ledger/collections/store-io.js";
import { namespaceFor, timeOrderedId } from "../../src/ledger/keys.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { CallRecord, NewRecord, TurnRecord } from "../../src/ledger/schema.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

/**
 * Window reads: the newest records of a tool or a partition, read newest first through the
 * store's index (SqliteStore) or by a full listing (any other BaseStore), with the same result.
 */

const START = Date.UTC(2026, 0, 1);
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

function call(tool: string, i: number, partition = "p"): NewRecord<CallRecord> {
  return {
    partition,
    at: START + i * 1000,
    tool,
    runId: `r${i}`,
    args: [],
    fingerprints: [],
    outcome: "success",
    source: "api",
  };
}

function turn(i: number, partition = "p"): NewRecord<TurnRecord> {
  return { partition, at: START + i * 1000, requestId: `q${i}`, request: `request ${i}`, calls: [] };
}

/** The same store without its window reads: what a BaseStore without them gets. */
function plain(store: BaseStore): BaseStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "newestInNamespace" || property === "keysBeyondNewest") return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
async function sqlite(): Promise<SqliteStore> {
  const store = await SqliteStore.open(":memory:");
  stores.push(store);
  return store;
}

const backends: [string, () => Promise<BaseStore>][] = [
  ["SqliteStore (indexed)", sqlite],
  ["InMemoryStore (full listing)", async () => new InMemoryStore()],
  ["SqliteStore without window reads (full listing)", async () => plain(await sqlite())],
];

describe.each(backends)("window reads on %s", (_name, make) => {
  it("listCalls({ tool, limit }) is the newest `limit` of that tool, oldest first; `after` cuts below", async () => {
    const ledger = new Ledger(await make(), { failureSink: () => undefined });
    await ledger.configure("p", { retainCallsPerTool: 1000 });
    // Interleaved tools, and lookalike tool and partition names that must not leak in.
    const rows: NewRecord<CallRecord>[] = [];
    for (let i = 0; i < 60; i++) {
      rows.push(call(i % 3 === 0 ? "a" : "ab", i), call("a", i, "p1"), call("a", i, "p10"));
    }
    await ledger.appendCalls(rows);
    const all = await ledger.listCalls("p", { tool: "a" });
    expect(all).toHaveLength(20);
    expect(all.every((c) => c.tool === "a" && c.partition === "p")).toBe(true);
    expect(ids(await ledger.listCalls("p", { tool: "a", limit: 5 }))).toEqual(ids(all).slice(15));
    expect(ids(await ledger.listCalls("p", { tool: "a", limit: 50 }))).toEqual(ids(all));
    expect(await ledger.listCalls("p", { tool: "a", limit: 0 })).toEqual([]);
    expect(ids(await ledger.listCalls("p", { tool: "a", after: all[12].id }))).toEqual(ids(all).slice(13));
    expect(ids(await ledger.listCalls("p", { tool: "a", after: all[12].id, limit: 3 }))).toEqual(ids(all).slice(17));
    expect(await ledger.listCalls("p", { tool: "nobody", limit: 5 })).toEqual([]);
  });

  it("listTurns/listRoutes({ limit, after }) are the partition's newest, oldest first", async () => {
    const ledger = new Ledger(await make(), { failureSink: () => undefined });
    await ledger.appendTurns([
      ...Array.from({ length: 40 }, (_, i) => turn(i)),
      ...Array.from({ length: 40 }, (_, i) => turn(i, "p1")),
    ]);
    const all = await ledger.listTurns("p");
    expect(all).toHaveLength(40);
    expect(ids(await ledger.listTurns("p", { limit: 7 }))).toEqual(ids(all).slice(33));
    expect(ids(await ledger.listTurns("p", { after: all[30].id, limit: 100 }))).toEqual(ids(all).slice(31));
    await ledger.appendRoutes(
      Array.from({ length: 12 }, (_, i) => ({
        partition: "p",
        at: START + i,
        requestId: `q${i}`,
        offered: [],
        allSent: false,
        k: 5,
      })),
    );
    const routes = await ledger.listRoutes("p");
    expect(ids(await ledger.listRoutes("p", { limit: 2 }))).toEqual(ids(routes).slice(10));
  });

  it("listCalledTools names each tool with calls once, of this partition only", async () => {
    const ledger = new Ledger(await make(), { failureSink: () => undefined });
    await ledger.appendCalls([
      ...["a", "ab", "send.email", "a_b", "zz"].flatMap((tool, i) => [call(tool, i), call(tool, i + 10)]),
      call("other", 1, "p1"),
      call("x", 1, "p10"),
    ]);
    expect(await ledger.listCalledTools("p")).toEqual(["a", "a_b", "ab", "send.email", "zz"]);
    expect(await ledger.listCalledTools("p1")).toEqual(["other"]);
    expect(await ledger.listCalledTools("nobody")).toEqual([]);
  });

  it("a corrupt row in the window is skipped and counted, never failing the read", async () => {
    const store = await make();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.appendCalls(Array.from({ length: 5 }, (_, i) => call("a", i)));
    await store.put(namespaceFor("tool-lessons", "p", "calls", "a"), timeOrderedId(START + 99_000), { v: 1 });
    const read = await ledger.listCalls("p", { tool: "a", limit: 3 });
    expect(read).toHaveLength(2);
    expect(ledger.skippedRows).toBe(1);
  });

  it("retention prunes a tool's calls and a partition's turns to the newest, through the store's batch", async () => {
    const store = await make();
    const batch = vi.spyOn(store, "batch");
    const ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("p", { retainCallsPerTool: 20, retainTurns: 100 });
    const calls = await ledger.appendCalls(Array.from({ length: 45 }, (_, i) => call("a", i)));
    const turns = await ledger.appendTurns(Array.from({ length: 250 }, (_, i) => turn(i)));
    expect(ids(await ledger.listCalls("p", { tool: "a" }))).toEqual(ids(calls).slice(25));
    expect(ids(await ledger.listTurns("p"))).toEqual(ids(turns).slice(150));
    const deletes = batch.mock.calls.flatMap(([ops]) => ops.filter((op) => "value" in op && op.value === null));
    expect(deletes).toHaveLength(25 + 150);
    expect(await ledger.pruneCalls("p", "a", 20)).toBe(0);
    expect(await ledger.pruneCalls("p", "a", 5)).toBe(15);
  });
});

describe("SqliteStore window reads", () => {
  it("are offered (the ledger uses them) and read only the rows they return", async () => {
    const store = await sqlite();
    expect(hasWindowReads(store)).toBe(true);
    expect(hasWindowReads(new InMemoryStore())).toBe(false);
    const ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("p", { retainCallsPerTool: 10_000 });
    await ledger.appendCalls(Array.from({ length: 3000 }, (_, i) => call("a", i)));
    const search = vi.spyOn(store, "search");
    const newest = vi.spyOn(store, "newestInNamespace");
    const read = await ledger.listCalls("p", { tool: "a", limit: 24 });
    expect(read).toHaveLength(24);
    expect(search).not.toHaveBeenCalled();
    expect(newest).toHaveBeenCalledTimes(1);
    expect(await newest.mock.results[0].value).toHaveLength(24);
    // The query walks the primary key backwards: no sort step, no scan of the table.
    const plan = store.db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT namespace, key, value FROM store WHERE namespace = ? AND key > ? ORDER BY key DESC LIMIT ?",
      )
      .all("x", "y", 1) as { detail: string }[];
    const detail = plan.map((p) => p.detail).join("; ");
    expect(detail).toMatch(/USING INDEX/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it("reads rows another store wrote in the same layout (no migration step)", async () => {
    const store = await sqlite();
    // Written through the plain BaseStore path, as a ledger before window reads wrote them.
    const before = new Ledger(plain(store), { failureSink: () => undefined });
    const written = await before.appendCalls(Array.from({ length: 30 }, (_, i) => call("send.email", i)));
    const after = new Ledger(store, { failureSink: () => undefined });
    expect(ids(await after.listCalls("p", { tool: "send.email", limit: 10 }))).toEqual(ids(written).slice(20));
  });

  it("namespacesOneBelow finds the namespaces right below a prefix that hold rows, one seek each", async () => {
    const store = await sqlite();
    const put = (ns: string[]) => store.put(ns, "k", { x: 1 });
    for (let i = 0; i < 50; i++) await store.put(["r", "p", "a"], `k${i}`, { x: 1 });
    await put(["r", "p", "a\u0001b"]); // a label extending "a" with a control character sorts before "a" + separator
    await put(["r", "p", "a", "deeper"]);
    await put(["r", "p", "only", "deeper"]); // holds rows only below: not listed (as listNamespaces' exact depth)
    await put(["r", "p", "ab"]);
    await put(["r", "p"]);
    await put(["r", "p1", "c"]);
    await put(["r", "q", "d"]);
    expect(await store.namespacesOneBelow(["r", "p"])).toEqual([
      ["r", "p", "a"],
      ["r", "p", "a\u0001b"],
      ["r", "p", "ab"],
    ]);
    const exact = (await store.listNamespaces({ prefix: ["r", "p"] })).filter((ns) => ns.length === 3 && ns[1] === "p");
    expect(await store.namespacesOneBelow(["r", "p"])).toEqual(exact);
    expect(await store.namespacesOneBelow(["r", "none"])).toEqual([]);
  });

  it("keysBeyondNewest names exactly the keys a prune to `keep` deletes, of that namespace only", async () => {
    const store = await sqlite();
    const ns = ["r", "p", "calls", "a"];
    for (const key of ["k3", "k1", "k4", "k2"]) await store.put(ns, key, { x: 1 });
    await store.put(["r", "p", "calls", "ab"], "k0", { x: 1 });
    await store.put([...ns, "deeper"], "k0", { x: 1 });
    expect(await store.keysBeyondNewest(ns, 2)).toEqual(["k1", "k2"]);
    expect(await store.keysBeyondNewest(ns, 0)).toEqual(["k1", "k2", "k3", "k4"]);
    expect(await store.keysBeyondNewest(ns, 9)).toEqual([]);
    expect((await store.newestInNamespace(ns, { limit: 2 })).map((i) => i.key)).toEqual(["k4", "k3"]);
    expect((await store.newestInNamespace(ns, { after: "k2" })).map((i) => i.key)).toEqual(["k4", "k3"]);
  });
});
