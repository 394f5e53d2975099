/**
 * A separate agent process for the Postgres ledger tests: opens the store (running setup, which
 * may race another process doing the same) and appends `count` calls to partition "p" in small
 * batches, runIds `<writer>-<n>`.
 *
 * Usage: node --import tsx test/helpers/append-calls.ts <postgresUrl> <schema> <writer> <count>
 */
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore } from "../../src/ledger/postgres.js";

const [url, schema, writer, countText] = process.argv.slice(2);
const count = Number(countText);
const BATCH = 10;

const store = await openPostgresStore(url, { schema });
const ledger = new Ledger(store, { ownsStore: true });
try {
  // Setup raced; settings are read once per ledger, so configure before the first append.
  await ledger.configure("p", { retainCallsPerTool: 10_000 });
  for (let n = 0; n < count; n += BATCH) {
    const size = Math.min(BATCH, count - n);
    await ledger.appendCalls(
      Array.from({ length: size }, (_, i) => ({
        partition: "p",
        tool: (n + i) % 3 === 0 ? "github.create_issue" : "send_email",
        runId: `${writer}-${n + i}`,
        args: [],
        fingerprints: [],
        outcome: "success" as const,
        source: "api" as const,
      })),
    );
  }
} finally {
  await ledger.close();
}
