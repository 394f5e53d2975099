import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

const CHILD = fileURLToPath(new URL("../helpers/record-pg-child.ts", import.meta.url));
const WORKERS = ["p1", "p2"];
const RUNS = 10;
const STEPS = 10;
const CALLS = 5;

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] record/postgres-concurrency: ${unavailable}`);

interface ChildReport {
  worker: string;
  stats: { written: { calls: number; turns: number }; dropped: number; failed: number };
  errors: string[];
}

function runChild(worker: string, schema: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: {
        ...process.env,
        POSTGRES_URL,
        PG_SCHEMA: schema,
        WORKER: worker,
        RUNS: String(RUNS),
        STEPS: String(STEPS),
        CALLS: String(CALLS),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`child ${worker} exited with ${code}: ${err}`));
      const line = out.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(line) as ChildReport);
      } catch {
        reject(new Error(`child ${worker} printed no report: ${out}\n${err}`));
      }
    });
  });
}

describe.skipIf(unavailable !== null)("recording from two processes into one Postgres", () => {
  const schema = uniqueSchema("tl_record");
  let store: PostgresStore;
  let ledger: Ledger;

  beforeAll(async () => {
    store = PostgresStore.fromConnString(POSTGRES_URL, { schema });
    await store.setup();
    ledger = new Ledger(store);
    // Keep every record: pruning would otherwise trim each tool to its newest 100.
    for (const user of ["alice", "bob"]) await ledger.configure(`u:${user}`, { retainCallsPerTool: 5000 });
  });

  afterAll(async () => {
    await store?.stop();
    await dropSchema(schema);
  });

  it("keeps exactly 1,000 call records, 500 per partition, none lost or duplicated", async () => {
    const reports = await Promise.all(WORKERS.map((w) => runChild(w, schema)));
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      expect(report.stats).toMatchObject({
        dropped: 0,
        failed: 0,
        written: { calls: RUNS * STEPS * CALLS, turns: RUNS },
      });
    }

    const alice = await ledger.listCalls("u:alice");
    const bob = await ledger.listCalls("u:bob");
    expect(alice).toHaveLength(500);
    expect(bob).toHaveLength(500);
    const all = [...alice, ...bob];
    expect(new Set(all.map((c) => c.id)).size).toBe(1000);
    for (const call of alice) expect(Number(call.threadId!.split("-")[1]) % 2).toBe(0);
    for (const call of bob) expect(Number(call.threadId!.split("-")[1]) % 2).toBe(1);
    for (const worker of WORKERS) {
      expect(all.filter((c) => c.threadId!.startsWith(`${worker}-`))).toHaveLength(500);
    }
    expect((await ledger.listTurns("u:alice")).length + (await ledger.listTurns("u:bob")).length).toBe(2 * RUNS);
    // Both processes agreed on one fingerprint key: the same value has the same fingerprint.
    const fingerprintsOf = (worker: string) =>
      new Set(all.filter((c) => c.threadId!.startsWith(`${worker}-`)).flatMap((c) => c.fingerprints));
    expect([...fingerprintsOf("p1")].sort()).toEqual([...fingerprintsOf("p2")].sort());
  });
});
