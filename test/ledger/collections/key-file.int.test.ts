import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * Processes opening one fresh SQLite ledger at the same moment, none with a secret, agree on the
 * key file made beside it (issue 44, item 4): it is linked into place whole, so no process reads
 * it half-written or makes a second one.
 */

const CHILD = fileURLToPath(new URL("../../helpers/key-child.ts", import.meta.url));

function child(db: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: { ...process.env, DB: db, TOOL_LESSONS_KEY: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    proc.on("error", reject);
    proc.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`child ${code}: ${err}`))));
  });
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tl-keyfile-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the key file beside a SQLite ledger, across processes", () => {
  it("six processes opening a fresh ledger at once all read one key, from one 0600 file", async () => {
    const db = join(dir, "ledger.db");
    const keys = await Promise.all(Array.from({ length: 6 }, () => child(db)));
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
    expect(statSync(`${db}.key`).mode & 0o777).toBe(0o600);
    expect(readFileSync(`${db}.key`, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    // A process opening it later reads the same.
    expect(await child(db)).toBe(keys[0]);
  }, 120_000);
});
