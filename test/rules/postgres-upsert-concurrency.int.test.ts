import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import type { PostgresStore } from "../../src/ledger/postgres.js";
import { freshPostgresStore, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";
import { runUpsertRace } from "./upsert-race.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] rules/postgres-upsert-concurrency: ${unavailable}`);

describe.skipIf(unavailable !== null)("rule upserts from two processes on one Postgres schema", () => {
  const schema = uniqueSchema("tl_rules");
  let store: PostgresStore;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await freshPostgresStore(schema));
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("keep createdAt: every upsert of a rule, in either process, returns the row's one creation time", async () => {
    const env = { BACKEND: "postgres", POSTGRES_URL, PG_SCHEMA: schema };
    const overlapping = await runUpsertRace(new Ledger(store), env, 60, 3, 40);
    expect(overlapping).toBeGreaterThan(0);
  }, 60_000);
});
