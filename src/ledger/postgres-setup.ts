import { setTimeout as sleep } from "node:timers/promises";
import type { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { StoreUnavailable } from "../errors.js";
import { isRecord, redactUrl } from "../internal.js";

/**
 * Setting up the Postgres ledger's schema: the store's migrations, retried through the races of
 * processes setting up one fresh schema at once, and a failure said as `StoreUnavailable`.
 */

/**
 * SQLSTATEs two processes running `setup()` on the same fresh schema at once can hit
 * (`CREATE … IF NOT EXISTS` is not race-free in Postgres): unique violation, duplicate
 * schema/table/object, "tuple concurrently updated", deadlock, serialization failure.
 * Setup is idempotent, so it is simply run again.
 */
const SETUP_RACE_CODES: ReadonlySet<string> = new Set(["23505", "42P06", "42P07", "42710", "XX000", "40P01", "40001"]);
const SETUP_ATTEMPTS = 5;

/**
 * Run the store's migrations, retrying the races of processes setting up one fresh schema at
 * once. On failure the store's pool is ended (unless `stopOnFailure` is false: a ledger that may
 * call `setup()` again keeps it) and the error is a `StoreUnavailable` saying how to fix it.
 */
export async function setUp(
  store: PostgresStore,
  connectionString: string,
  schema: string,
  options: { stopOnFailure?: boolean } = {},
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await store.setup();
      return;
    } catch (error) {
      if (attempt < SETUP_ATTEMPTS && SETUP_RACE_CODES.has(sqlState(error) ?? "")) {
        await sleep(20 * attempt + Math.random() * 50);
        continue;
      }
      if (options.stopOnFailure ?? true) await store.stop().catch(() => undefined);
      throw new StoreUnavailable(
        `Cannot open the Postgres ledger at ${redactUrl(connectionString)} (schema "${schema}"): ` +
          `${describe(error)}. Start a server (e.g. \`pg_ctlcluster 15 main start\`, or ` +
          "`docker run -e POSTGRES_HOST_AUTH_METHOD=trust -p 5432:5432 postgres:15`) or point " +
          "`postgresUrl` / TOOL_LESSONS_POSTGRES_URL at a reachable database you may create tables in.",
        { cause: error, context: { schema, code: sqlState(error) ?? errorCode(error) } },
      );
    }
  }
}

/** A server error's five-character SQLSTATE, if the error has one. */
function sqlState(error: unknown): string | undefined {
  const code = errorCode(error);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function errorCode(error: unknown): string | undefined {
  return isRecord(error) && typeof error["code"] === "string" ? error["code"] : undefined;
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((e: unknown) => describe(e)).join("; ");
  }
  if (error instanceof Error) return error.message || errorCode(error) || error.name;
  return String(error);
}
