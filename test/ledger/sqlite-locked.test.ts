import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreUnavailable } from "../../src/errors.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

/**
 * Opening a SQLite ledger file while another process holds its lock (issue 42). The lock holder
 * is a child process: `SqliteStore` waits synchronously, so a lock held by this process could
 * never be released while it waits.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sqlite-locked-"));
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A file in SQLite's default rollback-journal mode with one table: how a fresh file looks before the switch to WAL. */
function rollbackFile(): string {
  const path = join(dir, "ledger.db");
  const db = new Database(path);
  db.exec("CREATE TABLE other (a)");
  db.close();
  return path;
}

/**
 * A process that takes the file's lock with `begin` (`BEGIN IMMEDIATE`: the write lock;
 * `BEGIN EXCLUSIVE`: every lock) and releases it `holdMs` later (never, with `Infinity`).
 * Resolves once the lock is held.
 */
async function holdLock(path: string, begin: string, holdMs: number): Promise<void> {
  const script = `
    const Database = require("better-sqlite3");
    const db = new Database(process.argv[1]);
    db.exec(process.argv[2] + "; INSERT INTO other VALUES (1)");
    process.stdout.write("locked\\n");
    const hold = Number(process.argv[3]);
    if (Number.isFinite(hold)) setTimeout(() => { db.exec("COMMIT"); db.close(); }, hold);
    else setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["-e", script, path, begin, String(holdMs)], { cwd: ROOT });
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => c.toString().includes("locked") && resolve());
    child.on("close", (code) => reject(new Error(`lock holder exited ${code}: ${stderr}`)));
  });
}

describe("SqliteStore opening a file another process has locked", () => {
  it("waits while another process holds the write lock as it switches the file to WAL, then opens it", async () => {
    // With the write lock held elsewhere, the switch to WAL fails at once with SQLITE_BUSY
    // (SQLite's busy timeout does not cover it): before issue 42 this open threw StoreUnavailable.
    const path = rollbackFile();
    await holdLock(path, "BEGIN IMMEDIATE", 300);
    const store = await SqliteStore.open(path);
    try {
      expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(store.db.prepare("SELECT COUNT(*) AS n FROM other").get()).toEqual({ n: 1 });
      await store.put(["opened"], "k", { ok: true });
      expect((await store.get(["opened"], "k"))?.value).toEqual({ ok: true });
    } finally {
      await store.close();
    }
  });

  it("gives up after busyTimeoutMs with a StoreUnavailable naming the file and how to fix it", async () => {
    const path = rollbackFile();
    await holdLock(path, "BEGIN EXCLUSIVE", Infinity);
    const started = Date.now();
    const error: unknown = await SqliteStore.open(path, { busyTimeoutMs: 300 }).catch((e: unknown) => e);
    const waited = Date.now() - started;
    expect(error).toBeInstanceOf(StoreUnavailable);
    const unavailable = error as StoreUnavailable;
    expect(unavailable.message).toContain(JSON.stringify(path));
    expect(unavailable.message).toMatch(/database is locked/);
    expect(unavailable.message).toMatch(/longer than busyTimeoutMs \(300 ms\).*raise busyTimeoutMs/);
    expect(unavailable.context).toMatchObject({ path, code: expect.stringMatching(/^SQLITE_BUSY/) });
    // It waited for the lock rather than failing at once, and no longer than its budget allows
    // (the default 5000 ms would be far past this bound).
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(4000);
  });
});
