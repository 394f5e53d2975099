import pg from "pg";
import { describe } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore } from "../../src/ledger/postgres.js";
import { appendRunsSuite, type RefusingWorld } from "../helpers/append-runs.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] ledger/append-runs.postgres: ${unavailable}`);

/** A fresh schema whose store table gets a trigger refusing one collection's rows on demand. */
async function world(writeThread: boolean): Promise<RefusingWorld> {
  const schema = uniqueSchema("tl_append_runs");
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(
    `CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF NEW.namespace_path LIKE TG_ARGV[0] THEN RAISE EXCEPTION 'refused by the test'; END IF;
       RETURN NEW;
     END $$`,
  );
  return {
    ledger: new Ledger(store, { failureSink: () => undefined }),
    recorder: { writeThread },
    async refuse(collection) {
      const pattern = collection === "turns" ? "%:turns" : "%:calls:%";
      await admin.query(
        `CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".store FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse('${pattern}')`,
      );
    },
    async allow() {
      await admin.query(`DROP TRIGGER IF EXISTS refuse ON "${schema}".store`);
    },
    async cleanup() {
      await admin.end();
      await store.stop();
      await dropSchema(schema);
    },
  };
}

describe.skipIf(unavailable !== null)("appendRuns on Postgres: a run's calls and turn in one transaction", () => {
  describe("recorder writing from its write thread (the default)", () => {
    appendRunsSuite(() => world(true));
  });
  describe("recorder writing on the main thread", () => {
    appendRunsSuite(() => world(false));
  });
});
