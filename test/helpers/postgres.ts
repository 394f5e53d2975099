import { randomBytes } from "node:crypto";
import pg from "pg";
import { openPostgresStore, type PostgresStore } from "../../src/ledger/postgres.js";

/**
 * The Postgres the integration tests use: `POSTGRES_URL`, else the server these machines start
 * (trust auth on 127.0.0.1:5432, database `test`).
 */
export const POSTGRES_URL = process.env.POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/test";

let availability: Promise<string | null> | undefined;

/**
 * Whether the test Postgres answers. Resolves to `null` when it does, else to the reason it
 * cannot be used (printed by the suite that skips). Asked once per test file.
 */
export function postgresUnavailableReason(): Promise<string | null> {
  availability ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return null;
    } catch (error) {
      const detail = error instanceof AggregateError ? error.errors.map(String).join("; ") : String(error);
      return (
        `Postgres at ${POSTGRES_URL} is not reachable (${detail}). Start it ` +
        "(`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`) or set POSTGRES_URL."
      );
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return availability;
}

/** True when the test Postgres answers. */
export async function postgresAvailable(): Promise<boolean> {
  return (await postgresUnavailableReason()) === null;
}

/** A schema name no other test run uses. */
export function uniqueSchema(prefix = "tl_test"): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

/** Drop a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A set-up `PostgresStore` in a fresh schema; `cleanup()` ends its pool and drops the schema.
 */
export async function freshPostgresStore(
  schema: string = uniqueSchema(),
): Promise<{ store: PostgresStore; schema: string; cleanup(): Promise<void> }> {
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  return {
    store,
    schema,
    async cleanup() {
      await store.stop();
      await dropSchema(schema);
    },
  };
}
