/**
 * The stores other processes share, for the benchmarks that compare serving over them: a fresh
 * SQLite file, and a fresh schema of the Postgres at `POSTGRES_URL` (the machines' own by default).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BaseStore } from "@langchain/langgraph";
import pg from "pg";
import { openPostgresStore } from "../src/ledger/postgres.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";

export const SHARED_STORES = ["sqlite", "postgres"] as const;
export type SharedStoreKind = (typeof SHARED_STORES)[number];

const POSTGRES_URL = process.env.POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/test";

/** A fresh store of that kind and how to let it go (file or schema removed), or why it cannot be had here. */
export async function sharedStore(
  kind: SharedStoreKind,
  label: string,
): Promise<{ store: BaseStore; close(): Promise<void> } | string> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(path.join(os.tmpdir(), `tl-bench-${label}-`));
    const store = await SqliteStore.open(path.join(dir, "ledger.db"));
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `tl_bench_${label}_${process.pid}`;
  try {
    const store = await openPostgresStore(POSTGRES_URL, { schema });
    return {
      store,
      close: async () => {
        await (store as unknown as { stop(): Promise<void> }).stop();
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    };
  } catch (error) {
    return `Postgres at ${POSTGRES_URL} not reachable (${String(error)})`;
  }
}
