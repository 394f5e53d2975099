import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.js";

const CHILD = fileURLToPath(new URL("./upsert-child.ts", import.meta.url));

/** What one child printed. */
interface ChildReport {
  worker: string;
  rules: { id: string; createdAts: number[]; first: [number, number] }[];
}

/** Start one child; resolves its "ready" and its final report. */
function start(env: Record<string, string>): {
  ready: Promise<void>;
  done: Promise<ChildReport>;
  go(at: number): void;
} {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("ready\n")) markReady();
  });
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const done = new Promise<ChildReport>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`child ${env.WORKER} exited with ${code}: ${err}`));
      const line = out.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(line) as ChildReport);
      } catch {
        reject(new Error(`child ${env.WORKER} printed no report: ${out}\n${err}`));
      }
    });
  });
  return { ready, done, go: (at) => child.stdin.end(`go ${at}\n`) };
}

/**
 * Two processes upsert the same `rules` rules `rounds` times each, each rule at the same moment
 * in both (one slot of `slotMs` per rule).
 * Asserts: one row per rule, both processes computed the same id, and every upsert of a rule, in
 * either process, returned the createdAt the row has at the end. Returns how many rules' first
 * upserts overlapped in time across the processes (the races that were really run).
 */
export async function runUpsertRace(
  ledger: Ledger,
  env: Record<string, string>,
  rules: number,
  rounds: number,
  slotMs: number,
): Promise<number> {
  const children = ["p1", "p2"].map((worker) =>
    start({ ...env, WORKER: worker, RULES: String(rules), ROUNDS: String(rounds), SLOT_MS: String(slotMs) }),
  );
  await Promise.all(children.map((c) => c.ready));
  const at = Date.now() + 300;
  for (const c of children) c.go(at);
  const [a, b] = await Promise.all(children.map((c) => c.done));

  const stored = await ledger.listRules("u:alice");
  expect(stored).toHaveLength(rules);
  let overlapping = 0;
  for (let r = 0; r < rules; r++) {
    const [ra, rb] = [a.rules[r], b.rules[r]];
    expect(ra.id).toBe(rb.id);
    const row = stored.find((s) => s.id === ra.id);
    expect(row).toBeDefined();
    for (const createdAt of [...ra.createdAts, ...rb.createdAts]) expect(createdAt).toBe(row!.createdAt);
    if (ra.first[0] <= rb.first[1] && rb.first[0] <= ra.first[1]) overlapping += 1;
  }
  return overlapping;
}
