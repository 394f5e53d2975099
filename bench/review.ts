/**
 * Review cost as the history grows: the time of one `LessonManager.review()` (deterministic
 * proposer, no model, dry run) and the process's peak RSS while it runs, over a SQLite ledger
 * holding 10k, 100k and 1M call records (plus one turn and one route record per call), with
 * retention set to keep all of them. One file grows from size to size; each size's reviews run in
 * a fresh child process, so its RSS holds the review and nothing the seeding left behind.
 * Run alone with `npx tsx bench/review.ts`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ToolIndex } from "../src/routing/tool-index.js";
import { LessonManager } from "../src/learn/manager.js";
import { gatherWindow } from "../src/learn/review/gather.js";
import { registerTools } from "../src/learn/register.js";
import { Ledger } from "../src/ledger/ledger.js";
import type { CallRecord, NewRecord, RouteRecord, TurnRecord } from "../src/ledger/schema.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { DEFAULT_SETTINGS } from "../src/settings.js";

const P = "bench";
const TOOLS = 100;
const SIZES = [10_000, 100_000, 1_000_000];
/** Reviews per size: the median is reported with the range. */
const RUNS = 3;
/** One call (and its turn) a second: 1M calls span about 11.6 days of history. */
const STEP_MS = 1000;
const START_MS = Date.UTC(2026, 0, 1);
const WORDS = [
  "order",
  "refund",
  "invoice",
  "shipment",
  "account",
  "password",
  "ticket",
  "report",
  "email",
  "calendar",
];
/** Set in a child process: the SQLite file to review (see {@link benchReview}). */
const CHILD_ENV = "TOOL_LESSONS_BENCH_REVIEW_DB";

function quiet(store: SqliteStore): Ledger {
  return new Ledger(store, { failureSink: () => {} });
}

export async function setUp(ledger: Ledger): Promise<void> {
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `tool_${i}`,
    description: `Handles ${WORDS[i % WORDS.length]} tasks of kind ${i} for customers.`,
  }));
  // Retention keeps the whole history: the review alone must keep its cost to its window.
  await ledger.configure(P, {
    retainCallsPerTool: SIZES[SIZES.length - 1],
    retainTurns: SIZES[SIZES.length - 1] * 2,
    maxTools: TOOLS,
  });
  await registerTools(ledger, tools, { partition: P });
}

/** Append records `from` to `to` (call i at START_MS + i seconds). */
export async function seed(ledger: Ledger, from: number, to: number): Promise<void> {
  const batch = 5000;
  for (let start = from; start < to; start += batch) {
    const c: NewRecord<CallRecord>[] = [];
    const t: NewRecord<TurnRecord>[] = [];
    const r: NewRecord<RouteRecord>[] = [];
    for (let i = start; i < Math.min(to, start + batch); i++) {
      const at = START_MS + i * STEP_MS;
      const tool = `tool_${i % TOOLS}`;
      const failed = i % 7 === 0;
      const requestId = `q${i}`;
      const threadId = `t${i}`;
      const request = `please help with ${WORDS[(i * 3) % WORDS.length]} number ### for team ${i % 13}`;
      r.push({
        partition: P,
        at,
        requestId,
        threadId,
        request,
        offered: [{ tool: `tool_${(i + 1) % TOOLS}`, rank: 1, score: 0.5 }],
        allSent: false,
        k: 5,
      });
      c.push({
        partition: P,
        at: at + 1,
        tool,
        runId: requestId,
        requestId,
        threadId,
        args: [{ name: "id", kind: "string", shape: failed ? "#####" : "ORD-#####" }],
        fingerprints: [],
        outcome: failed ? "error" : "success",
        errorClass: failed ? "validation" : undefined,
        errorMessage: failed ? "id must start with ORD-" : undefined,
        source: "api",
      });
      t.push({
        partition: P,
        at: at + 2,
        requestId,
        threadId,
        request,
        calls: [{ tool, outcome: failed ? "error" : "success" }],
        servedBy: failed ? undefined : tool,
      });
    }
    await ledger.appendRoutes(r);
    await ledger.appendCalls(c);
    await ledger.appendTurns(t);
  }
}

interface Measured {
  seconds: number;
  /** CPU time (user + system) of the process during the review: less sensitive than wall time to other load. */
  cpuSeconds: number;
  peakMb: number;
  revisions: number;
  /** Call and turn records the review's window held. */
  callsRead: number;
  turnsRead: number;
}

/** In a child: the reviews of one file, as JSON on stdout. */
async function reviewFile(file: string): Promise<Measured[]> {
  const store = await SqliteStore.open(file);
  const ledger = quiet(store);
  const index = new ToolIndex({ ledger });
  await index.reindex(P);
  const manager = new LessonManager({ ledger, index });
  const out: Measured[] = [];
  for (let i = 0; i < RUNS; i++) {
    global.gc?.();
    let peak = process.memoryUsage().rss;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const review = await manager.review({ partition: P, dryRun: true });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    out.push({
      seconds,
      cpuSeconds,
      peakMb: Math.round(peak / 2 ** 20),
      revisions: review.revisions.length,
      callsRead: 0,
      turnsRead: 0,
    });
  }
  const window = await gatherWindow(ledger, P);
  for (const m of out) Object.assign(m, { callsRead: window.calls.length, turnsRead: window.turns.length });
  await store.close();
  return out;
}

/** Markdown section: review time and peak RSS at 10k, 100k and 1M call records. */
export async function benchReview(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-lessons-bench-review-"));
  const file = path.join(dir, "ledger.db");
  const rows = [];
  try {
    const store = await SqliteStore.open(file);
    const ledger = quiet(store);
    await setUp(ledger);
    let seeded = 0;
    for (const n of SIZES) {
      const t0 = performance.now();
      await seed(ledger, seeded, n);
      seeded = n;
      const seedSeconds = (performance.now() - t0) / 1000;
      store.db.pragma("wal_checkpoint(TRUNCATE)");
      const load = os.loadavg()[0];
      const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
        env: { ...process.env, [CHILD_ENV]: file },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
      if (run.status !== 0) throw new Error(`review child failed (exit ${run.status ?? run.signal})`);
      const runs = JSON.parse(run.stdout) as Measured[];
      const times = runs.map((r) => r.seconds).sort((a, b) => a - b);
      const cpus = runs.map((r) => r.cpuSeconds).sort((a, b) => a - b);
      rows.push({
        calls: n,
        median: times[Math.floor(times.length / 2)],
        min: times[0],
        max: times[times.length - 1],
        cpu: cpus[Math.floor(cpus.length / 2)],
        peakMb: Math.max(...runs.map((r) => r.peakMb)),
        revisions: runs[0].revisions,
        callsRead: runs[0].callsRead,
        turnsRead: runs[0].turnsRead,
        fileMb: Math.round(statSync(file).size / 2 ** 20),
        seedSeconds,
        load,
      });
    }
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  return [
    "## Review cost",
    "",
    `\`npm run bench -- review\`: one \`LessonManager.review()\` (deterministic proposer, no model, dry run) over a SQLite ledger file holding N call records of ${TOOLS} tools, plus one route and one turn record per call (one request a second of history; every 7th call a validation failure), with retention set to keep all of it. The file grows from size to size; each size's ${RUNS} reviews run in a fresh process (after the index is built), so its peak RSS (the whole process, sampled every 5 ms during the reviews) holds the review and not the seeding. The review reads its window (defaults: the newest \`reviewTurns\` = ${DEFAULT_SETTINGS.reviewTurns.toLocaleString("en-US")} turns and routes, each tool's calls since the oldest of them and at least the newest \`maxCallsPerTool\` = ${DEFAULT_SETTINGS.maxCallsPerTool}) newest first through the store's primary-key index, so what it reads does not grow with the file.`,
    "",
    "| call records | review time, median (s) | fastest – slowest (s) | CPU time, median (s) | peak RSS (MB) | calls / turns in the window | revisions proposed | ledger file (MB) |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.calls.toLocaleString("en-US")} | ${r.median.toFixed(2)} | ${r.min.toFixed(2)} – ${r.max.toFixed(2)} | ${r.cpu.toFixed(2)} | ${r.peakMb} | ${r.callsRead.toLocaleString("en-US")} / ${r.turnsRead.toLocaleString("en-US")} | ${r.revisions} | ${r.fileMb} |`,
    ),
    "",
    `From ${first.calls.toLocaleString("en-US")} to ${last.calls.toLocaleString("en-US")} call records: time × ${(last.median / first.median).toFixed(2)} (CPU time × ${(last.cpu / first.cpu).toFixed(2)}), peak RSS × ${(last.peakMb / first.peakMb).toFixed(2)} (target: within 2×, and at 1M <= 3 s and <= 400 MB). Machine load while measuring (1-minute load average, 2 cores shared with other jobs): ${rows.map((r) => r.load.toFixed(1)).join(" / ")} before each size's reviews; wall time on an idle machine is lower, CPU time is the steadier figure. Seeding (not measured above) took ${rows.map((r) => `${r.seedSeconds.toFixed(0)} s`).join(" / ")} for the three sizes' increments.`,
  ].join("\n");
}

const childFile = process.env[CHILD_ENV];
if (childFile !== undefined) {
  process.stdout.write(JSON.stringify(await reviewFile(childFile)));
  process.exit(0);
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchReview());
}
