/**
 * Recording under load: N agent processes, each running M agent runs at a time for a fixed time,
 * all recording into one Postgres; then a burst of back-to-back runs on a SQLite file. Every run
 * is the scripted agent of the record tests (2 tool calls through the real `ToolNode`, then an
 * answer: 3 records).
 *
 * - records/s: records found in Postgres afterwards, over the run time;
 * - recording latency: from a run's end (its records handed to the recorder) to the store
 *   confirming the batch holding them (waiting for room, batching and the write);
 * - lost: records the processes produced (counted by each) minus records found in the store.
 *
 * Run alone with `npx tsx bench/load.ts`; `benchLoad()` returns the markdown section.
 * env: BENCH_LOAD_PROCS (2), BENCH_LOAD_CONCURRENCY (8), BENCH_LOAD_SECONDS (10), BENCH_LOAD_MODEL_MS (20),
 * BENCH_LOAD_BURST (5000).
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import type { CallRecord, NewRecord } from "../src/ledger/schema.js";
import { Ledger } from "../src/ledger/ledger.js";
import { openPostgresStore } from "../src/ledger/postgres.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";
import { buildAgent, echoTool, echoTwice, ScriptedChatModel } from "../test/helpers/record-agent.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../test/helpers/postgres.js";

const PROCS = Number(process.env.BENCH_LOAD_PROCS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_LOAD_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const BURST = Number(process.env.BENCH_LOAD_BURST ?? 5000);
const RECORDS_PER_RUN = 3;
const PARTITION_USER = "load";
/** Set in a load process: the Postgres schema to record into. */
const CHILD_ENV = "TOOL_LESSONS_BENCH_LOAD_SCHEMA";

/** A model step's latency in the Postgres load, in ms: a real model answers over the network. */
const MODEL_MS = Number(process.env.BENCH_LOAD_MODEL_MS ?? 20);

/** The scripted model, answering after `ms` (a timer, as a network reply would). */
class SlowScriptedChatModel extends ScriptedChatModel {
  ms = 0;

  override async _generate(messages: Parameters<ScriptedChatModel["_generate"]>[0]) {
    if (this.ms > 0) await sleep(this.ms);
    return super._generate(messages);
  }
}

function agent(modelMs = 0) {
  const model = new SlowScriptedChatModel(echoTwice);
  model.ms = modelMs;
  return buildAgent({ model, tools: [echoTool] });
}

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

interface ChildReport {
  runs: number;
  produced: number;
  latencies: number[];
  stats: ReturnType<ToolLessonsCallbackHandler["stats"]>;
  flush: Awaited<ReturnType<ToolLessonsCallbackHandler["flush"]>>;
  errors: string[];
}

/** One load process: CONCURRENCY runs at a time for SECONDS, then a flush; prints its report. */
async function child(schema: string, label: string): Promise<void> {
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  const ledger = new Ledger(store);
  const latencies: number[] = [];
  /** Root run id → when it ended: its records were handed to the recorder then. */
  const ended = new Map<string, number>();
  const append = ledger.appendCalls.bind(ledger);
  ledger.appendCalls = async (rows: NewRecord<CallRecord>[]) => {
    const saved = await append(rows);
    const now = performance.now();
    for (const row of rows) {
      const at = ended.get(row.runId);
      if (at === undefined) continue;
      latencies.push(now - at);
      ended.delete(row.runId);
    }
    return saved;
  };
  const errors: string[] = [];
  const handler = new ToolLessonsCallbackHandler({ ledger, onFailure: (f) => errors.push(`${f.kind}: ${f.message}`) });
  const handleChainEnd = handler.handleChainEnd.bind(handler);
  handler.handleChainEnd = (outputs, runId, parentRunId) => {
    if (parentRunId === undefined) ended.set(runId, performance.now());
    return handleChainEnd(outputs, runId, parentRunId);
  };
  const graph = agent(MODEL_MS);
  const until = performance.now() + SECONDS * 1000;
  let runs = 0;
  const worker = async (w: number) => {
    while (performance.now() < until) {
      const i = runs++;
      await graph.invoke(
        { messages: [new HumanMessage(`${label} run ${i}`)] },
        {
          configurable: { thread_id: `${label}-${w}-${i}` },
          metadata: { user_id: PARTITION_USER },
          callbacks: [handler],
        },
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  const flush = await handler.flush({ timeoutMs: 60_000 });
  const report: ChildReport = {
    runs,
    produced: runs * RECORDS_PER_RUN,
    latencies,
    stats: handler.stats(),
    flush,
    errors,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  await ledger.close();
  await store.stop();
}

function runChild(schema: string, label: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD_ENV]: schema, TOOL_LESSONS_BENCH_LOAD_LABEL: label },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`load process ${label} exited with ${code}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "") as ChildReport);
      } catch {
        reject(new Error(`load process ${label} printed no report: ${out}`));
      }
    });
  });
}

async function postgresLoad(): Promise<string[]> {
  const unavailable = await postgresUnavailableReason();
  if (unavailable) return [`Postgres part not run: ${unavailable}`, ""];
  const schema = uniqueSchema("tl_bench_load");
  const setupStore = await openPostgresStore(POSTGRES_URL, { schema });
  try {
    await new Ledger(setupStore).configure(`u:${PARTITION_USER}`, { retainCallsPerTool: 10_000_000 });
    await new Ledger(setupStore).fingerprintKey();
    const t0 = performance.now();
    const reports = await Promise.all(Array.from({ length: PROCS }, (_, p) => runChild(schema, `p${p}`)));
    const elapsed = (performance.now() - t0) / 1000;
    const reader = new Ledger(setupStore);
    const stored =
      (await reader.listCalls(`u:${PARTITION_USER}`)).length + (await reader.listTurns(`u:${PARTITION_USER}`)).length;
    const produced = reports.reduce((n, r) => n + r.produced, 0);
    const latencies = reports.flatMap((r) => r.latencies);
    const dropped = reports.reduce((n, r) => n + r.stats.dropped, 0);
    const failed = reports.reduce((n, r) => n + r.stats.failed, 0);
    const errors = reports.reduce((n, r) => n + r.errors.length, 0);
    return [
      `${PROCS} processes × ${CONCURRENCY} concurrent runs each (every model step answers after a ${MODEL_MS} ms timer, as a network reply would), ${SECONDS} s of runs per process (wall time with start-up and the final flush: ${elapsed.toFixed(1)} s), one Postgres (the shared server, a fresh schema), default handler options:`,
      "",
      "| runs | records produced | records in Postgres | records/s (over the run time) | recording latency p50 / p99 (ms, run end → stored) | lost | dropped | failed | recording errors |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      `| ${reports.reduce((n, r) => n + r.runs, 0)} | ${produced} | ${stored} | ${(stored / SECONDS).toFixed(0)} | ` +
        `${quantile(latencies, 0.5).toFixed(0)} / ${quantile(latencies, 0.99).toFixed(0)} | ${produced - stored} | ${dropped} | ${failed} | ${errors} |`,
      "",
    ];
  } finally {
    await setupStore.stop();
    await dropSchema(schema);
  }
}

async function sqliteBurst(): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "tl-bench-burst-"));
  try {
    const store = await SqliteStore.open(path.join(dir, "ledger.db"));
    await store.setup();
    const ledger = new Ledger(store, { ownsStore: true });
    await ledger.configure(`u:${PARTITION_USER}`, { retainCallsPerTool: 10_000_000 });
    const errors: string[] = [];
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      onFailure: (f) => errors.push(`${f.kind}: ${f.message}`),
    });
    const graph = agent();
    let peak = 0;
    const t0 = performance.now();
    for (let i = 0; i < BURST; i += 1) {
      await graph.invoke(
        { messages: [new HumanMessage(`burst run ${i}`)] },
        { configurable: { thread_id: `burst-${i}` }, metadata: { user_id: PARTITION_USER }, callbacks: [handler] },
      );
      const s = handler.stats();
      peak = Math.max(peak, s.buffered + s.inFlight);
    }
    const runsDone = performance.now();
    const flush = await handler.flush();
    const flushed = performance.now();
    const s = handler.stats();
    const stored =
      (await ledger.listCalls(`u:${PARTITION_USER}`)).length + (await ledger.listTurns(`u:${PARTITION_USER}`)).length;
    await ledger.close();
    return [
      `${BURST} back-to-back runs (each awaited before the next; none yields to the event loop) on a SQLite file, default handler options (maxBuffer 10000, batchSize 500):`,
      "",
      "| runs | records produced | records in SQLite | dropped | failed | peak records waiting to be written | runs/s | final flush (ms) |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|",
      `| ${BURST} | ${BURST * RECORDS_PER_RUN} | ${stored} | ${s.dropped} | ${s.failed} | ${peak} | ${(BURST / ((runsDone - t0) / 1000)).toFixed(0)} | ${(flushed - runsDone).toFixed(0)} |`,
      "",
      `Final flush: written ${flush.written}, in flight ${flush.inFlight}, lost ${flush.lost}; recording errors ${errors.length}. ` +
        "The ledger is new, so the first write waits for its fingerprint key (a 250 ms timer, which fires only once the runs let the event loop run): " +
        "the buffer fills to its bound meanwhile, the next run waits for room (back-pressure), and from then on full batches are written as they fill. " +
        "Before back-pressure and full-batch writes, 3,500 such runs dropped 501 records.",
      "",
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchLoad(): Promise<string> {
  const load = os.loadavg()[0].toFixed(1);
  const pg = await postgresLoad();
  const burst = await sqliteBurst();
  return [
    "## Recording under load",
    "",
    `Command: \`npm run bench -- load\` (\`bench/load.ts\`). The 1-minute load average was ${load} when it started ` +
      `(${os.cpus().length} cores, shared with other jobs): rates and latencies carry that contention; ` +
      "the lost and dropped counts do not depend on it.",
    "",
    ...pg,
    ...burst,
  ].join("\n");
}

const childSchema = process.env[CHILD_ENV];
if (childSchema !== undefined) {
  child(childSchema, process.env.TOOL_LESSONS_BENCH_LOAD_LABEL ?? "p").then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchLoad().then(
    (md) => console.log(md),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
