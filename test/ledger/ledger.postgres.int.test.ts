import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import { encodeLabel } from "../../src/ledger/keys.js";
import { redactUrl as redact } from "../../src/internal.js";
import { openPostgresStore, PostgresStore, TransactionalPostgresStore } from "../../src/ledger/postgres.js";
import {
  dropSchema,
  freshPostgresStore,
  POSTGRES_URL,
  postgresUnavailableReason,
  uniqueSchema,
} from "../helpers/postgres.js";
import { card, ledgerContract, revision } from "./contract.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WRITER = fileURLToPath(new URL("../helpers/append-calls.ts", import.meta.url));

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[tool-lessons] Skipping the Postgres ledger tests: ${unavailable}`);
const suite = unavailable ? describe.skip : describe;

suite("Postgres ledger", () => {
  ledgerContract("PostgresStore", () => freshPostgresStore());

  it("keeps every record when two processes append 500 calls each to one schema", async () => {
    const schema = uniqueSchema();
    try {
      // Neither child finds the tables: both run setup() at once, as two agents starting would.
      const outputs = await Promise.all(["w0", "w1"].map((writer) => runWriter(schema, writer, 500)));
      for (const out of outputs) expect(out).toMatchObject({ code: 0 });

      const store = await openPostgresStore(POSTGRES_URL, { schema });
      const calls = await new Ledger(store).listCalls("p");
      await store.stop();
      expect(calls).toHaveLength(1000);
      expect(new Set(calls.map((c) => c.id)).size).toBe(1000);
      for (const writer of ["w0", "w1"]) {
        expect(new Set(calls.filter((c) => c.runId.startsWith(`${writer}-`)).map((c) => c.runId)).size).toBe(500);
      }
    } finally {
      await dropSchema(schema);
    }
  });

  it("writes a batch as one transaction: all of it or nothing", async () => {
    const { store, cleanup } = await freshPostgresStore();
    try {
      expect(store).toBeInstanceOf(TransactionalPostgresStore);
      expect((store as TransactionalPostgresStore).atomicBatches).toBe(true);
      const ledger = new Ledger(store, { failureSink: () => {} });
      const searchCard = card("p", "search");
      // Postgres jsonb cannot hold U+0000: the server refuses this row, after the card's.
      const badRevision = revision("p", "search", "applied", "rev-1", {
        notesAdded: ["bad \u0000 note"],
        cardVersionBefore: 0,
      });
      await expect(ledger.commit("p", { cards: [searchCard], revisions: [badRevision] })).rejects.toThrow();
      expect(await ledger.getCard("p", "search")).toBeNull();

      // Same key twice in one batch: the last write wins, as when applied in order.
      const ns = ["tool-lessons", encodeLabel("p"), "scratch"];
      await store.batch([
        { namespace: ns, key: "k", value: { n: 1 } },
        { namespace: ns, key: "gone", value: { n: 0 } },
        { namespace: ns, key: "k", value: { n: 2 } },
      ]);
      await store.batch([
        { namespace: ns, key: "gone", value: null },
        { namespace: ns, key: "k", value: { n: 3 } },
      ]);
      expect((await store.get(ns, "k"))?.value).toEqual({ n: 3 });
      expect(await store.get(ns, "gone")).toBeNull();
    } finally {
      await cleanup();
    }
  });

  it("openLedger({ postgresUrl }) opens a PostgresStore that close() ends", async () => {
    const schema = uniqueSchema();
    try {
      const ledger = await openLedger({ postgresUrl: POSTGRES_URL, postgresSchema: schema });
      expect(ledger.store).toBeInstanceOf(PostgresStore);
      await ledger.appendCalls([
        { partition: "p", tool: "search", runId: "r", args: [], fingerprints: [], outcome: "success", source: "api" },
      ]);
      await ledger.close();
      await expect(ledger.listCalls("p")).rejects.toThrow();

      // An environment given whole: it names the ledger's secret too (over Postgres one is required).
      await expect(openLedger({ env: { postgresUrl: POSTGRES_URL }, postgresSchema: schema })).rejects.toThrow(
        /TOOL_LESSONS_KEY/,
      );
      const again = await openLedger({
        env: { postgresUrl: POSTGRES_URL, ledgerKey: "the-secret-of-this-test" },
        postgresSchema: schema,
      });
      expect(await again.listCalls("p")).toHaveLength(1);
      await again.close();
    } finally {
      await dropSchema(schema);
    }
  });
});

describe("openPostgresStore", () => {
  it("reports an unreachable server as StoreUnavailable, saying how to fix it", async () => {
    const url = "postgresql://someone:s3cret@127.0.0.1:1/nowhere";
    const error = await openPostgresStore(url, { connectionTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailable);
    const message = (error as StoreUnavailable).message;
    expect(message).toMatch(/Start a server/);
    expect(message).toMatch(/TOOL_LESSONS_POSTGRES_URL/);
    expect(message).not.toContain("s3cret");
  });

  it("refuses a malformed connection string or schema name", async () => {
    await expect(openPostgresStore("localhost:5432")).rejects.toBeInstanceOf(InvalidInput);
    await expect(openPostgresStore(POSTGRES_URL, { schema: 'x"; DROP TABLE y; --' })).rejects.toBeInstanceOf(
      InvalidInput,
    );
  });

  it("redacts passwords", () => {
    expect(redact("postgresql://u:pw@h:5432/d")).toBe("postgresql://u:***@h:5432/d");
    expect(redact("postgresql://u@h/d")).toBe("postgresql://u@h/d");
  });
});

/** Run the writer script in its own Node process. */
function runWriter(schema: string, writer: string, count: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WRITER, POSTGRES_URL, schema, writer, String(count)], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stderr }));
  });
}
