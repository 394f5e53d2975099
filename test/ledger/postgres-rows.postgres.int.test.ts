import pg from "pg";
import { describe, expect, it } from "vitest";
import { encodeLabel } from "../../src/ledger/keys.js";
import { Ledger, type RunRecords } from "../../src/ledger/ledger.js";
import type { TransactionalPostgresStore } from "../../src/ledger/postgres.js";
import { ROWS_PER_STATEMENT } from "../../src/ledger/postgres-rows.js";
import { echoRun } from "../helpers/append-runs.js";
import { freshPostgresStore, POSTGRES_URL, postgresUnavailableReason } from "../helpers/postgres.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] ledger/postgres-rows.postgres: ${unavailable}`);

const PARTITION = "u:rows";

const run = (i: number): RunRecords => echoRun(PARTITION, i);

/** `n` puts of small rows under one namespace, keys `k00000`…, in order. */
function puts(n: number, tag: string) {
  const ns = ["tool-lessons", encodeLabel(PARTITION), "scratch"];
  return Array.from({ length: n }, (_, i) => ({
    namespace: ns,
    key: `k${String(i).padStart(5, "0")}`,
    value: { i, tag, text: 'a "quoted" \\ value' },
  }));
}

async function count(schema: string, tag?: string): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}".store WHERE namespace_path LIKE '%:scratch'${tag ? " AND value->>'tag' = $1" : ""}`,
      tag ? [tag] : [],
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

describe.skipIf(unavailable !== null)("Postgres rows: how the store writes them", () => {
  it("runs written again with their ids (a retry whose first commit landed) are stored once, new runs beside them", async () => {
    const { store, cleanup } = await freshPostgresStore();
    try {
      const ledger = new Ledger(store);
      const first = await ledger.appendRuns([run(1), run(2)]);
      // The retry: the same stamped rows (same ids), grouped with a run not written yet.
      const again: RunRecords[] = [
        { calls: first.calls.slice(0, 2), turn: first.turns[0] },
        { calls: first.calls.slice(2), turn: first.turns[1] },
        run(3),
      ];
      const saved = await ledger.appendRuns(again);
      expect(saved.calls.slice(0, 4).map((c) => c.id)).toEqual(first.calls.map((c) => c.id));
      const calls = await ledger.listCalls(PARTITION);
      expect(calls.map((c) => c.runId).sort()).toEqual(["run-1", "run-1", "run-2", "run-2", "run-3", "run-3"]);
      expect(new Set(calls.map((c) => c.id)).size).toBe(6);
      expect((await ledger.listTurns(PARTITION)).map((t) => t.requestId)).toEqual(["req-1", "req-2", "req-3"]);
    } finally {
      await cleanup();
    }
  });

  it("a batch past one statement's parameters is written whole, and is still one transaction", async () => {
    const { store, schema, cleanup } = await freshPostgresStore();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const pgStore = store as TransactionalPostgresStore;
      const n = ROWS_PER_STATEMENT + 50;
      // The server refuses a row of the second statement: nothing of the batch may remain.
      await admin.query(
        `CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.key = 'k${String(n - 1).padStart(5, "0")}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
         RETURN NEW; END $$`,
      );
      await admin.query(
        `CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".store FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse()`,
      );
      await expect(pgStore.appendNew(puts(n, "new"))).rejects.toThrow(/refused by the test/);
      await expect(pgStore.batch(puts(n, "put"))).rejects.toThrow(/refused by the test/);
      expect(await count(schema)).toBe(0);

      await admin.query(`DROP TRIGGER refuse ON "${schema}".store`);
      await pgStore.appendNew(puts(n, "new"));
      expect(await count(schema, "new")).toBe(n);
      // Written again as puts: every row replaced, none doubled.
      await pgStore.batch(puts(n, "put"));
      expect(await count(schema, "put")).toBe(n);
      expect(await count(schema)).toBe(n);
      const last = await store.get(puts(1, "")[0].namespace, `k${String(n - 1).padStart(5, "0")}`);
      expect(last?.value).toEqual({ i: n - 1, tag: "put", text: 'a "quoted" \\ value' });
    } finally {
      await admin.end();
      await cleanup();
    }
  });
});
