import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { runUpsertRace } from "./upsert-race.js";

const dir = mkdtempSync(join(tmpdir(), "tl-rules-race-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("rule upserts from two processes on one SQLite file", () => {
  it("keep createdAt: every upsert of a rule, in either process, returns the row's one creation time", async () => {
    const path = join(dir, "ledger.db");
    const store = await SqliteStore.open(path);
    try {
      const overlapping = await runUpsertRace(new Ledger(store), { BACKEND: "sqlite", DB_PATH: path }, 60, 3, 20);
      // The first upserts of most rules ran at the same time in both processes: the race was real.
      expect(overlapping).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 60_000);
});
