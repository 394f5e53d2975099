/**
 * One process of the concurrent-upsert test: opens the shared store (SQLite file or Postgres
 * schema), says "ready", waits for "go <T0>" on stdin, then upserts RULES rules (no id: the ids
 * follow from tool and text) ROUNDS times each; rule r starts at T0 + r × SLOT_MS in both
 * processes (the second a fraction of a millisecond later, so their clocks differ), so their
 * first upserts of each rule race. Prints one JSON line: per rule, the
 * createdAt every upsert returned and the window of its first upsert.
 *
 * env: BACKEND (sqlite | postgres), DB_PATH or POSTGRES_URL + PG_SCHEMA, WORKER, RULES, ROUNDS, SLOT_MS.
 */
import { createInterface } from "node:readline";
import type { BaseStore } from "@langchain/langgraph";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore } from "../../src/ledger/postgres.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

const worker = process.env.WORKER ?? "w";
const rules = Number(process.env.RULES ?? 20);
const rounds = Number(process.env.ROUNDS ?? 5);
const slotMs = Number(process.env.SLOT_MS ?? 25);

/** Epoch milliseconds with sub-millisecond precision (the same clock in every process). */
const clock = () => performance.timeOrigin + performance.now();

/** Wait until the clock reads `at`: a timer to just before it, then a spin for the last milliseconds. */
async function until(at: number): Promise<void> {
  const early = at - clock() - 3;
  if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
  while (clock() < at) {
    // spin
  }
}

/** Where in its slot this process starts a rule: p2 a fraction of a millisecond after p1, varying by rule. */
function offset(rule: number): number {
  return worker === "p1" ? 0 : 0.25 + (rule % 4) * 0.25;
}

async function open(): Promise<BaseStore> {
  if (process.env.BACKEND === "postgres") {
    return openPostgresStore(process.env.POSTGRES_URL ?? "", { schema: process.env.PG_SCHEMA ?? "public" });
  }
  return SqliteStore.open(process.env.DB_PATH ?? "");
}

async function main(): Promise<void> {
  const store = await open();
  try {
    const ledger = new Ledger(store);
    const go = new Promise<number>((resolve) => {
      const lines = createInterface({ input: process.stdin });
      lines.on("line", (line) => {
        const [word, at] = line.trim().split(" ");
        if (word === "go") {
          lines.close();
          resolve(Number(at));
        }
      });
    });
    process.stdout.write("ready\n");
    const t0 = await go;
    const out: { id: string; createdAts: number[]; first: [number, number] }[] = [];
    for (let r = 0; r < rules; r++) {
      const text = `Never email person ${"x".repeat(r + 1)}.`;
      const createdAts: number[] = [];
      let first: [number, number] = [0, 0];
      let id = "";
      await until(t0 + r * slotMs + offset(r));
      for (let round = 0; round < rounds; round++) {
        const start = Date.now();
        const rule = await ledger.putRule("u:alice", {
          tool: "send_email",
          rule: text,
          priority: round % 2 === 0 ? "critical" : "high",
          source: "user_explicit",
          tags: [worker],
        });
        if (round === 0) first = [start, Date.now()];
        id = rule.id;
        createdAts.push(rule.createdAt);
      }
      out.push({ id, createdAts, first });
    }
    process.stdout.write(`${JSON.stringify({ worker, rules: out })}\n`);
  } finally {
    await store.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
