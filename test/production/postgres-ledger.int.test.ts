/**
 * A Postgres ledger made the way LangGraph users make a `PostgresStore`:
 * `PostgresLedger.fromConnString(url)` opens nothing, `setup()` runs the migrations. Against the
 * real Postgres at POSTGRES_URL.
 */
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable } from "../../src/errors.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import { PostgresLedger } from "../../src/ledger/postgres.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[postgres-ledger.int] skipped: ${unavailable}`);

const schemas: string[] = [];
const fresh = () => {
  const schema = uniqueSchema("tl_pgledger");
  schemas.push(schema);
  return schema;
};

async function tablesIn(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    return rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (unavailable) return;
  for (const schema of schemas) await dropSchema(schema);
});

const TOOLS = [
  { name: "lookup_order", description: "Look up an order." },
  { name: "github.create_issue", description: "Open an issue." },
];

describe.skipIf(unavailable !== null)("PostgresLedger.fromConnString + setup()", () => {
  it("opens nothing until setup(), which creates the schema's tables; then it is a ledger like any other", async () => {
    const schema = fresh();
    const ledger = PostgresLedger.fromConnString(POSTGRES_URL, { schema });
    expect(ledger).toBeInstanceOf(Ledger);
    expect(ledger.store).toBeInstanceOf(PostgresStore);
    expect(await tablesIn(schema)).toEqual([]);
    await ledger.setup();
    expect(await tablesIn(schema)).toEqual(expect.arrayContaining(["store", "store_migrations"]));
    await ledger.setup();
    await registerTools(ledger, TOOLS, { partition: "t:acme" });
    expect((await ledger.listCards("t:acme")).map((c) => c.name).sort()).toEqual([
      "github.create_issue",
      "lookup_order",
    ]);
    await ledger.close();
    // The same rows through today's openLedger({ postgresUrl }).
    const again = await openLedger({ postgresUrl: POSTGRES_URL, postgresSchema: schema });
    expect((await again.listCards("t:acme")).map((c) => c.name).sort()).toEqual([
      "github.create_issue",
      "lookup_order",
    ]);
    await again.close();
  });

  it("set up by several processes' worth of ledgers at once on a fresh schema, each succeeds", async () => {
    const schema = fresh();
    const ledgers = Array.from({ length: 4 }, () =>
      PostgresLedger.fromConnString(POSTGRES_URL, { schema, maxConnections: 2 }),
    );
    await Promise.all(ledgers.map((l) => l.setup()));
    await registerTools(ledgers[0], TOOLS);
    expect((await ledgers[3].listCards("default")).length).toBe(2);
    await Promise.all(ledgers.map((l) => l.close()));
  });

  it("takes the ledger's own options (namespace root) beside the store's", async () => {
    const schema = fresh();
    const ledger = PostgresLedger.fromConnString(POSTGRES_URL, { schema, namespaceRoot: "agents-a" });
    await ledger.setup();
    await registerTools(ledger, TOOLS);
    const other = PostgresLedger.fromConnString(POSTGRES_URL, { schema, namespaceRoot: "agents-b" });
    expect(await other.listCards("default")).toEqual([]);
    await ledger.close();
    await other.close();
  });

  it("refuses a malformed connection string or schema at once; an unreachable server fails setup() with StoreUnavailable, and setup() can be tried again", async () => {
    expect(() => PostgresLedger.fromConnString("localhost:5432/test")).toThrow(InvalidInput);
    expect(() => PostgresLedger.fromConnString(POSTGRES_URL, { schema: "1bad name" })).toThrow(InvalidInput);
    const ledger = PostgresLedger.fromConnString("postgresql://postgres:secret@127.0.0.1:1/test", {
      connectionTimeoutMs: 1_000,
    });
    const error = await ledger.setup().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as Error).message).toMatch(
      /Cannot open the Postgres ledger at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test/,
    );
    expect((error as Error).message).not.toMatch(/secret/);
    await expect(ledger.setup()).rejects.toBeInstanceOf(StoreUnavailable);
    await ledger.close();
  });
});
