import type { BaseStore } from "@langchain/langgraph";
import { openPostgresStore } from "../../src/ledger/postgres.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

/**
 * The store a test's child process opens from its environment: BACKEND (sqlite | postgres), DB
 * (the SQLite file), POSTGRES_URL and PG_SCHEMA.
 */
export async function openChildStore(env: NodeJS.ProcessEnv = process.env): Promise<BaseStore> {
  if (env.BACKEND === "postgres") {
    return openPostgresStore(env.POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test", {
      schema: env.PG_SCHEMA,
    });
  }
  return SqliteStore.open(env.DB ?? "ledger.db");
}
