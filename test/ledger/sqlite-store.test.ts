import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import {
  type BaseStore,
  type GetOperation,
  InMemoryStore,
  type ListNamespacesOperation,
  type PutOperation,
  type SearchOperation,
} from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable } from "../../src/errors.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STORE_MODULE = fileURLToPath(new URL("../../src/ledger/sqlite-store.ts", import.meta.url));

let dir: string;
const opened: SqliteStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
});

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openFile(path = join(dir, "ledger.db")): Promise<SqliteStore> {
  const store = await SqliteStore.open(path);
  opened.push(store);
  return store;
}

async function openMemory(): Promise<SqliteStore> {
  const store = await SqliteStore.open(":memory:");
  opened.push(store);
  return store;
}

/** Run a script in a child Node process that can import the store's TypeScript source. */
function runChild(script: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolvePromise({ code, signal, stderr }));
  });
}

// The same behaviour must hold for LangGraph's InMemoryStore: SqliteStore is a drop-in.
describe.each([
  ["SqliteStore", (): Promise<BaseStore> => openMemory()],
  ["InMemoryStore", async (): Promise<BaseStore> => new InMemoryStore()],
])("%s: BaseStore behaviour shared with InMemoryStore", (_name, make) => {
  let store: BaseStore;
  beforeEach(async () => {
    store = await make();
  });

  it("puts, gets, updates and deletes an item", async () => {
    expect(await store.get(["docs"], "a")).toBeNull();
    await store.put(["docs"], "a", { title: "first", n: 1 });
    const created = await store.get(["docs"], "a");
    expect(created).toMatchObject({ namespace: ["docs"], key: "a", value: { title: "first", n: 1 } });
    expect(created?.createdAt).toBeInstanceOf(Date);
    expect(created?.updatedAt).toBeInstanceOf(Date);
    // InMemoryStore hands out its live item and updates it in place: keep the times as numbers.
    const createdAt = created!.createdAt.getTime();
    const firstUpdatedAt = created!.updatedAt.getTime();

    await new Promise((r) => setTimeout(r, 5));
    await store.put(["docs"], "a", { title: "second" });
    const updated = await store.get(["docs"], "a");
    expect(updated?.value).toEqual({ title: "second" });
    expect(updated?.createdAt.getTime()).toBe(createdAt);
    expect(updated!.updatedAt.getTime()).toBeGreaterThan(firstUpdatedAt);

    await store.delete(["docs"], "a");
    expect(await store.get(["docs"], "a")).toBeNull();
  });

  it("keeps items of different namespaces apart", async () => {
    await store.put(["u", "1"], "k", { who: 1 });
    await store.put(["u", "2"], "k", { who: 2 });
    expect((await store.get(["u", "1"], "k"))?.value).toEqual({ who: 1 });
    expect((await store.get(["u", "2"], "k"))?.value).toEqual({ who: 2 });
    expect(await store.get(["u"], "k")).toBeNull();
  });

  it("searches a namespace and everything under it", async () => {
    await store.put(["tool", "a"], "k1", { v: 1 });
    await store.put(["tool", "a", "x"], "k2", { v: 2 });
    await store.put(["tool", "b"], "k3", { v: 3 });
    await store.put(["other"], "k4", { v: 4 });
    const hits = await store.search(["tool", "a"]);
    expect(hits.map((h) => [h.namespace, h.key])).toEqual([
      [["tool", "a"], "k1"],
      [["tool", "a", "x"], "k2"],
    ]);
    expect((await store.search(["tool"])).map((h) => h.key).sort()).toEqual(["k1", "k2", "k3"]);
    expect((await store.search([])).length).toBe(4);
    expect(hits[0].createdAt).toBeInstanceOf(Date);
  });

  it("filters on top-level fields by equality and by operator", async () => {
    await store.put(["f"], "a", { status: "active", score: 1, tag: "x" });
    await store.put(["f"], "b", { status: "active", score: 5 });
    await store.put(["f"], "c", { status: "retired", score: 9 });
    const keys = async (filter: Record<string, unknown>): Promise<string[]> =>
      (await store.search(["f"], { filter })).map((h) => h.key).sort();
    expect(await keys({ status: "active" })).toEqual(["a", "b"]);
    expect(await keys({ status: "active", score: 5 })).toEqual(["b"]);
    expect(await keys({ score: "5" })).toEqual([]);
    expect(await keys({ status: { $eq: "retired" } })).toEqual(["c"]);
    expect(await keys({ status: { $ne: "retired" } })).toEqual(["a", "b"]);
    expect(await keys({ score: { $gt: 1 } })).toEqual(["b", "c"]);
    expect(await keys({ score: { $gte: 1, $lt: 9 } })).toEqual(["a", "b"]);
    expect(await keys({ score: { $lte: 5 } })).toEqual(["a", "b"]);
    expect(await keys({ score: { $in: [1, 9] } })).toEqual(["a", "c"]);
    expect(await keys({ score: { $nin: [1, 9] } })).toEqual(["b"]);
    expect(await keys({ tag: "x" })).toEqual(["a"]);
    expect(await keys({ missing: "x" })).toEqual([]);
  });

  it("pages search results with limit (default 10) and offset", async () => {
    for (let i = 0; i < 15; i += 1) {
      await store.put(["p"], `k${String(i).padStart(2, "0")}`, { i });
    }
    expect(await store.search(["p"])).toHaveLength(10);
    const page = await store.search(["p"], { limit: 4, offset: 3 });
    expect(page.map((h) => h.key)).toEqual(["k03", "k04", "k05", "k06"]);
    expect(await store.search(["p"], { offset: 14 })).toHaveLength(1);
    expect(await store.search(["p"], { limit: 3, filter: { i: { $gte: 10 } } })).toHaveLength(3);
  });

  it("ignores a natural-language query when there is no index", async () => {
    await store.put(["q"], "a", { text: "hello" });
    const hits = await store.search(["q"], { query: "greeting" });
    expect(hits.map((h) => h.key)).toEqual(["a"]);
    expect(hits[0].score).toBeUndefined();
  });

  it("lists namespaces by prefix, suffix, depth, limit and offset", async () => {
    await store.put(["a", "x", "v1"], "k", {});
    await store.put(["a", "y", "v1"], "k", {});
    await store.put(["a", "y", "v2"], "k", {});
    await store.put(["b", "x"], "k", {});
    expect(await store.listNamespaces()).toEqual([
      ["a", "x", "v1"],
      ["a", "y", "v1"],
      ["a", "y", "v2"],
      ["b", "x"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a", "y"] })).toEqual([
      ["a", "y", "v1"],
      ["a", "y", "v2"],
    ]);
    expect(await store.listNamespaces({ suffix: ["v1"] })).toEqual([
      ["a", "x", "v1"],
      ["a", "y", "v1"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a", "*", "v1"] })).toEqual([
      ["a", "x", "v1"],
      ["a", "y", "v1"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a"], suffix: ["v2"] })).toEqual([["a", "y", "v2"]]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ["a", "x"],
      ["a", "y"],
      ["b", "x"],
    ]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["a"], ["b"]]);
    expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
      ["a", "y", "v1"],
      ["a", "y", "v2"],
    ]);
  });

  it("runs a batch and returns results in operation order", async () => {
    await store.put(["b"], "old", { v: 0 });
    // A mixed batch needs a tuple type: inferred as an array of a union, its results are `never`.
    // InMemoryStore only recognises a list operation by its `matchConditions` key.
    const ops: [PutOperation, GetOperation, SearchOperation, ListNamespacesOperation, GetOperation] = [
      { namespace: ["b"], key: "new", value: { v: 1 } },
      { namespace: ["b"], key: "old" },
      { namespacePrefix: ["b"], limit: 10, offset: 0 },
      { matchConditions: [], limit: 10, offset: 0 },
      { namespace: ["b"], key: "absent" },
    ];
    const [put, get, search, list, miss] = await store.batch(ops);
    expect(put ?? undefined).toBeUndefined();
    expect(get?.value).toEqual({ v: 0 });
    expect(search.some((h) => h.key === "old")).toBe(true);
    expect(list).toContainEqual(["b"]);
    expect(miss).toBeNull();
    expect((await store.get(["b"], "new"))?.value).toEqual({ v: 1 });
  });
});

describe("SqliteStore", () => {
  it("matches namespace prefixes label by label, not as strings", async () => {
    const store = await openMemory();
    await store.put(["tool", "a"], "k", { v: "a" });
    await store.put(["tool", "ab"], "k", { v: "ab" });
    await store.put(["tool", "a", "b"], "k", { v: "a/b" });
    await store.put(["tool", "a b"], "k", { v: "a b" });
    await store.put(["tool", "a-"], "k", { v: "a-" });
    await store.put(["toolbox"], "k", { v: "toolbox" });
    expect((await store.search(["tool", "a"])).map((h) => h.value.v)).toEqual(["a", "a/b"]);
    expect((await store.search(["tool"])).map((h) => h.value.v)).toEqual(["a", "a/b", "a b", "a-", "ab"]);
    expect(await store.listNamespaces({ prefix: ["tool", "a"] })).toEqual([
      ["tool", "a"],
      ["tool", "a", "b"],
    ]);
    expect(await store.listNamespaces({ suffix: ["b"] })).toEqual([["tool", "a", "b"]]);
  });

  it("orders search hits by namespace, then key, ascending, whatever the write order", async () => {
    const store = await openMemory();
    await store.put(["n", "z"], "b", {});
    await store.put(["n", "z"], "a", {});
    await store.put(["n"], "c", {});
    await store.put(["n", "a"], "z", {});
    expect((await store.search(["n"])).map((h) => `${h.namespace.join("/")}:${h.key}`)).toEqual([
      "n:c",
      "n/a:z",
      "n/z:a",
      "n/z:b",
    ]);
  });

  it("lets a later operation of a batch see an earlier write", async () => {
    const store = await openMemory();
    const [, got, , gone] = await store.batch([
      { namespace: ["b"], key: "k", value: { v: 1 } },
      { namespace: ["b"], key: "k" },
      { namespace: ["b"], key: "k", value: null },
      { namespace: ["b"], key: "k" },
    ]);
    expect(got?.value).toEqual({ v: 1 });
    expect(gone).toBeNull();
  });

  it("writes nothing of a batch in which one operation fails", async () => {
    const store = await openMemory();
    await store.put(["t"], "kept", { v: "before" });
    await expect(
      store.batch([
        { namespace: ["t"], key: "a", value: { v: 1 } },
        { namespace: ["t"], key: "kept", value: { v: "after" } },
        { namespace: ["t"], key: "kept", value: null },
        { namespace: ["t"], key: "b", value: { big: 10n } },
        { namespace: ["t"], key: "c", value: { v: 3 } },
      ]),
    ).rejects.toBeInstanceOf(InvalidInput);
    expect(await store.get(["t"], "a")).toBeNull();
    expect(await store.get(["t"], "b")).toBeNull();
    expect((await store.get(["t"], "kept"))?.value).toEqual({ v: "before" });
    expect((await store.search(["t"])).length).toBe(1);
  });

  it("refuses malformed operations with InvalidInput", async () => {
    const store = await openMemory();
    await expect(store.batch([{ namespace: ["a.b"], key: "k", value: {} }])).rejects.toBeInstanceOf(InvalidInput);
    await expect(store.batch([{ namespace: ["a\u001fb"], key: "k" }])).rejects.toBeInstanceOf(InvalidInput);
    await expect(store.batch([{ namespace: [], key: "k", value: {} }])).rejects.toBeInstanceOf(InvalidInput);
    await expect(store.batch([{ namespace: ["a", ""], key: "k" }])).rejects.toBeInstanceOf(InvalidInput);
    await expect(
      store.batch([{ namespace: ["a"], key: "k", value: [1] as unknown as Record<string, unknown> }]),
    ).rejects.toBeInstanceOf(InvalidInput);
    await expect(store.search(["a"], { limit: -1 })).rejects.toBeInstanceOf(InvalidInput);
  });

  it("forgets a namespace once its last item is deleted", async () => {
    const store = await openMemory();
    await store.put(["gone"], "k", {});
    await store.put(["stays"], "k", {});
    await store.delete(["gone"], "k");
    expect(await store.listNamespaces()).toEqual([["stays"]]);
  });

  it("compares object filter values by deep equality and keeps the filter exact", async () => {
    const store = await openMemory();
    await store.put(["d"], "a", { meta: { lang: "en", tags: ["x"] }, "odd-key": "v", flag: true });
    await store.put(["d"], "b", { meta: { lang: "fr" }, "odd-key": "w", flag: 1 });
    const keys = async (filter: Record<string, unknown>): Promise<string[]> =>
      (await store.search(["d"], { filter })).map((h) => h.key);
    expect(await keys({ meta: { lang: "en", tags: ["x"] } })).toEqual(["a"]);
    expect(await keys({ meta: { lang: "en" } })).toEqual([]);
    expect(await keys({ "odd-key": "w" })).toEqual(["b"]);
    expect(await keys({ flag: true })).toEqual(["a"]);
    expect(await keys({ flag: 1 })).toEqual(["b"]);
  });

  it("answers prefix search from the primary key index", async () => {
    const store = await openMemory();
    const plan = store.db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT namespace, key FROM store WHERE namespace >= ? AND namespace < ? ORDER BY namespace, key",
      )
      .all("a", "b") as { detail: string }[];
    expect(plan.map((p) => p.detail).join("\n")).toMatch(
      /SEARCH store USING (COVERING )?INDEX .*namespace>\? AND namespace<\?/,
    );
    expect(plan.map((p) => p.detail).join("\n")).not.toMatch(/TEMP B-TREE/);
  });

  it("creates parent directories, uses WAL and sets up idempotently", async () => {
    const path = join(dir, "nested", "deeper", "ledger.db");
    const store = await openFile(path);
    await store.setup();
    expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(store.db.pragma("synchronous", { simple: true })).toBe(1);
    expect(store.db.pragma("busy_timeout", { simple: true })).toBe(5000);
    const again = await openFile(path);
    await again.setup();
    const migrations = again.db.prepare("SELECT COUNT(*) AS n FROM store_migrations").get() as { n: number };
    expect(migrations.n).toBe(1);
  });

  it("creates the schema on first use when setup() was not called", async () => {
    const store = new SqliteStore(":memory:");
    opened.push(store);
    await store.put(["lazy"], "k", { v: 1 });
    expect((await store.get(["lazy"], "k"))?.value).toEqual({ v: 1 });
  });

  it("keeps data across close and reopen of the same file", async () => {
    const path = join(dir, "durable.db");
    const first = await SqliteStore.open(path);
    await first.batch([
      { namespace: ["d", "1"], key: "a", value: { text: "é ✓ 😀", n: 1.5, list: [1, null, "x"] } },
      { namespace: ["d", "2"], key: "b", value: { nested: { deep: true } } },
    ]);
    const written = await first.get(["d", "1"], "a");
    await first.close();
    await first.close();

    const second = await openFile(path);
    const read = await second.get(["d", "1"], "a");
    expect(read).toEqual(written);
    expect((await second.get(["d", "2"], "b"))?.value).toEqual({ nested: { deep: true } });
    expect(await second.listNamespaces()).toEqual([
      ["d", "1"],
      ["d", "2"],
    ]);
  });

  it("throws StoreUnavailable after close", async () => {
    const store = await SqliteStore.open(":memory:");
    await store.close();
    await expect(store.get(["a"], "k")).rejects.toBeInstanceOf(StoreUnavailable);
  });

  it("throws StoreUnavailable when the file cannot be opened", async () => {
    const blocker = join(dir, "a-file");
    writeFileSync(blocker, "x");
    await expect(SqliteStore.open(join(blocker, "ledger.db"))).rejects.toBeInstanceOf(StoreUnavailable);

    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "this is not a database, not even close to one".repeat(50));
    const error: unknown = await SqliteStore.open(garbage).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as StoreUnavailable).context).toMatchObject({ path: garbage });
  });

  it("leaves a Database passed by the caller open on close", async () => {
    const db = new Database(":memory:");
    const store = new SqliteStore(db);
    await store.setup();
    await store.put(["c"], "k", { v: 1 });
    await store.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT COUNT(*) AS n FROM store").get()).toEqual({ n: 1 });
    db.close();
  });

  it("loses no write when two instances share one file", async () => {
    const path = join(dir, "shared.db");
    const a = await openFile(path);
    const b = await openFile(path);
    for (let i = 0; i < 50; i += 1) {
      await a.put(["shared"], `a${i}`, { i });
      await b.put(["shared"], `b${i}`, { i });
      await (i % 2 ? a : b).put(["shared"], "last", { i });
      expect((await a.get(["shared"], `b${i}`))?.value).toEqual({ i });
      expect((await b.get(["shared"], `a${i}`))?.value).toEqual({ i });
    }
    for (const store of [a, b]) {
      expect(await store.search(["shared"], { limit: 1000 })).toHaveLength(101);
      expect((await store.get(["shared"], "last"))?.value).toEqual({ i: 49 });
    }
  });

  it("loses no write when another process writes the same file concurrently", async () => {
    const path = join(dir, "two-processes.db");
    const store = await openFile(path);
    const child = runChild(`
      import { SqliteStore } from ${JSON.stringify(STORE_MODULE)};
      const store = await SqliteStore.open(${JSON.stringify(path)});
      await store.put(["started"], "child", {});
      for (let i = 0; i < 300; i += 1) {
        await store.batch([
          { namespace: ["proc", "child"], key: "k" + i, value: { i } },
          { namespace: ["proc", "both"], key: "child" + i, value: { i } },
        ]);
        await new Promise((r) => setImmediate(r));
      }
      await store.close();
    `);
    // Start writing once the child is writing, so that the two really interleave.
    const deadline = Date.now() + 30_000;
    while (!(await store.get(["started"], "child")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    for (let i = 0; i < 300; i += 1) {
      await store.batch([
        { namespace: ["proc", "parent"], key: `k${i}`, value: { i } },
        { namespace: ["proc", "both"], key: `parent${i}`, value: { i } },
      ]);
      await new Promise((r) => setImmediate(r));
    }
    const result = await child;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(await store.search(["proc", "both"], { limit: 10_000 })).toHaveLength(600);
    expect(await store.search(["proc"], { limit: 10_000 })).toHaveLength(1200);
  });

  it("writes nothing of a batch when the process is killed in the middle of it", async () => {
    const path = join(dir, "crash.db");
    const result = await runChild(`
      import { SqliteStore } from ${JSON.stringify(STORE_MODULE)};
      const store = await SqliteStore.open(${JSON.stringify(path)});
      await store.put(["crash"], "committed", { ok: true });
      const ops = [];
      for (let i = 0; i < 500; i += 1) {
        ops.push({ namespace: ["crash"], key: "k" + i, value: { pad: "x".repeat(2000) } });
      }
      ops.push({ namespace: ["crash"], key: "boom", value: { toJSON() { process.kill(process.pid, "SIGKILL"); } } });
      await store.batch(ops);
    `);
    expect(result.signal).toBe("SIGKILL");
    const store = await openFile(path);
    expect((await store.get(["crash"], "committed"))?.value).toEqual({ ok: true });
    expect(await store.search(["crash"], { limit: 1000 })).toHaveLength(1);
  });
});
