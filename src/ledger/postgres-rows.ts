/**
 * The statements `TransactionalPostgresStore` writes rows with (`./postgres.ts`): a DELETE of
 * keys, and a multi-row `INSERT … VALUES`, as an upsert (`put`) or as plain new rows (the
 * ledger's appends).
 *
 * A row's columns go as one parameter each, its JSON as it was serialised. An array parameter
 * (`unnest($3::jsonb[])`, what this store sent before) has the driver escape every quote of
 * every value into an array literal and the server parse it back: that cost more of the client's
 * CPU than the rest of the write did (docs/benchmarks.md, "Recording under load").
 *
 * @module
 */
import { PureMemo } from "../memo.js";
import type { PutOperation } from "@langchain/langgraph";
import { isRecord } from "../internal.js";

/** The part of a `pg` client the statements use. */
export interface RowsClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** Postgres takes at most 65,535 parameters in a statement; a row takes 3. */
export const ROWS_PER_STATEMENT = Math.floor(65_535 / 3);

/** `($1, $2, $3::jsonb), …` for `n` rows, kept for the row counts seen (a batch size repeats). */
const tupleLists = new PureMemo<number, string>(64);

function tuplesOf(n: number): string {
  return tupleLists.get(n, () =>
    Array.from({ length: n }, (_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3}::jsonb)`).join(", "),
  );
}

const UPSERT = `ON CONFLICT (namespace_path, key)
  DO UPDATE SET value = EXCLUDED.value, expires_at = NULL, updated_at = CURRENT_TIMESTAMP`;

/**
 * Write puts and deletes of distinct rows (in a fixed order) inside the caller's transaction:
 * at most one DELETE, then one INSERT per {@link ROWS_PER_STATEMENT} puts. `upsert` replaces a
 * stored row (a `put`); `insert` writes new rows only and fails with a unique violation
 * ({@link isUniqueViolation}), writing nothing, when a key is stored already.
 */
export async function writeRows(
  client: RowsClient,
  table: string,
  rows: readonly PutOperation[],
  mode: "upsert" | "insert",
): Promise<void> {
  const puts = rows.filter((op) => op.value !== null);
  const deletes = rows.filter((op) => op.value === null);
  if (deletes.length > 0) {
    await client.query(
      `DELETE FROM ${table} WHERE (namespace_path, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [deletes.map((op) => op.namespace.join(":")), deletes.map((op) => op.key)],
    );
  }
  for (let start = 0; start < puts.length; start += ROWS_PER_STATEMENT) {
    const chunk = puts.slice(start, start + ROWS_PER_STATEMENT);
    const values = new Array<string>(3 * chunk.length);
    chunk.forEach((op, i) => {
      values[3 * i] = op.namespace.join(":");
      values[3 * i + 1] = op.key;
      values[3 * i + 2] = JSON.stringify(op.value);
    });
    await client.query(
      `INSERT INTO ${table} (namespace_path, key, value) VALUES ${tuplesOf(chunk.length)}${mode === "upsert" ? ` ${UPSERT}` : ""}`,
      values,
    );
  }
}

/** A `pg` error for a key stored already (SQLSTATE 23505, unique_violation). */
export function isUniqueViolation(error: unknown): boolean {
  return isRecord(error) && error["code"] === "23505";
}
