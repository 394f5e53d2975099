import { openLedger } from "../../src/ledger/open.js";

/**
 * A child process of test/ledger/collections/key-file.int.test.ts: opens the SQLite ledger at DB
 * with no secret (the key file beside it) and prints the key of partition "p".
 */
const ledger = await openLedger({ path: process.env.DB!, env: {}, failureSink: () => undefined });
process.stdout.write(`${await ledger.fingerprintKey("p")}\n`);
await ledger.close();
