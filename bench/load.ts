/**
 * Recording under load, against one Postgres, then a burst of back-to-back runs on a SQLite file.
 * Every run is the scripted agent of the record tests (2 tool calls through the real `ToolNode`,
 * then an answer: 3 records), each model step answering after a MODEL_MS timer.
 *
 * 1. Capacity: PROCS processes, each running CONCURRENCY runs at a time for CAPACITY_SECONDS
 *    (closed loop, recording): the runs/s a process sustains.
 * 2. Load: PROCS processes, each starting runs at a fixed rate (open loop) at each level of
 *    LEVELS × its capacity, for SECONDS. Call-to-stored latency: from a tool call's end (its
 *    record's `at`) to the store confirming the transaction holding it; a table over time of
 *    calls made and records stored, per second, so records are seen stored while runs go on.
 * 3. Write throughput, side by side in one process: the ledger's batched path (`appendRuns`, the
 *    writer's batch of 500 records, rows built by the recorder as the writer hands them over), the
 *    same rows in a raw multi-row `INSERT … VALUES` into the same table (the floor), the batched
 *    path with rows that come from outside the package (each checked against its schema), and the
 *    per-run path (`appendRuns` of one run at a time). The paths take turns first in each round.
 *
 * lost = records the processes produced (counted by each) − records found in the store.
 *
 * Run alone with `npx tsx bench/load.ts`; `benchLoad()` returns the section and its figures.
 * env: BENCH_LOAD_PROCS (2), BENCH_LOAD_CONCURRENCY (8), BENCH_LOAD_SECONDS (10),
 * BENCH_LOAD_CAPACITY_SECONDS (6), BENCH_LOAD_LEVELS (0.5,0.7), BENCH_LOAD_MODEL_MS (20),
 * BENCH_LOAD_WRITE_RECORDS (6000), BENCH_LOAD_WRITE_ROUNDS (5), BENCH_LOAD_BURST (5000);
 * BENCH_LOAD_WRITE_ONLY=1 runs part 3 alone (`npx tsx bench/load.ts`), for comparing commits.
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import pg from "pg";
import { namespaceFor, timeOrderedId } from "../src/ledger/keys.js";
import { Ledger, type RunRecords } from "../src/ledger/ledger.js";
import { openPostgresStore } from "../src/ledger/postgres.js";
import { SCHEMA_VERSION } from "../src/ledger/schema.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { trustBuilt } from "../src/ledger/trusted.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";
import { buildAgent, echoTool, echoTwice, ScriptedChatModel } from "../test/helpers/record-agent.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../test/helpers/postgres.js";

const PROCS = Number(process.env.BENCH_LOAD_PROCS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_LOAD_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const CAPACITY_SECONDS = Number(process.env.BENCH_LOAD_CAPACITY_SECONDS ?? 6);
const LEVELS = (process.env.BENCH_LOAD_LEVELS ?? "0.5,0.7").split(",").map(Number);
const WRITE_RECORDS = Number(process.env.BENCH_LOAD_WRITE_RECORDS ?? 6000);
const WRITE_ROUNDS = Number(process.env.BENCH_LOAD_WRITE_ROUNDS ?? 5);
const BURST = Number(process.env.BENCH_LOAD_BURST ?? 5000);
const RECORDS_PER_RUN = 3;
const PARTITION_USER = "load";
const PARTITION = `u:${PARTITION_USER}`;
/** Set in a load process: what to run, as JSON ({@link ChildTask}). */
const CHILD_ENV = "TOOL_LESSONS_BENCH_LOAD_TASK";
/** The recorder's default batch, in records: the batched path writes this many at a time. */
const BATCH_RECORDS = 500;

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

function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** What a load process runs: closed loop (capacity) or open loop at `rate` runs/s. */
type ChildTask = { schema: string; label: string; writeThread: boolean } & (
  { mode: "capacity" } | { mode: "load"; rate: number }
);

interface ChildReport {
  runs: number;
  seconds: number;
  produced: number;
  /** When the timed runs began (ms since the epoch). */
  t0: number;
  /** Runs started per second since `t0`. */
  started: number[];
  stats: ReturnType<ToolLessonsCallbackHandler["stats"]>;
  errors: string[];
}

/** One load process: runs for its task, then a flush; prints its report. */
async function child(task: ChildTask): Promise<void> {
  const store = await openPostgresStore(POSTGRES_URL, { schema: task.schema });
  const ledger = new Ledger(store);
  const seconds = task.mode === "capacity" ? CAPACITY_SECONDS : SECONDS;
  const errors: string[] = [];
  const handler = new ToolLessonsCallbackHandler({
    ledger,
    writeThread: task.writeThread,
    failureSink: (f) => errors.push(`${f.kind}: ${f.message}`),
  });
  const graph = agent(MODEL_MS);
  // Warm-up, untimed: the pool's first connection, the fingerprint key, the write thread's start.
  await graph.invoke(
    { messages: [new HumanMessage(`${task.label} warm-up`)] },
    { configurable: { thread_id: `${task.label}-warm` }, metadata: { user_id: "warm-up" }, callbacks: [handler] },
  );
  await handler.flush();
  const t0 = Date.now();
  const started: number[] = [];
  const until = t0 + seconds * 1000;
  let runs = 0;
  const invoke = (i: number) => {
    const second = Math.floor((Date.now() - t0) / 1000);
    started[second] = (started[second] ?? 0) + 1;
    return graph.invoke(
      { messages: [new HumanMessage(`${task.label} run ${i}`)] },
      {
        configurable: { thread_id: `${task.label}-${i}` },
        metadata: { user_id: PARTITION_USER },
        callbacks: [handler],
      },
    );
  };
  if (task.mode === "capacity") {
    const worker = async () => {
      while (Date.now() < until) await invoke(runs++);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  } else {
    // Open loop: a run starts every 1/rate s whatever the others are doing, as users arrive.
    const open = new Set<Promise<unknown>>();
    const interval = 1000 / task.rate;
    for (let next = t0; next < until; next += interval) {
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      const run = invoke(runs++).finally(() => open.delete(run));
      open.add(run);
    }
    await Promise.all(open);
  }
  const elapsed = (Date.now() - t0) / 1000;
  await handler.flush({ timeoutMs: 60_000 });
  const report: ChildReport = {
    runs,
    t0,
    seconds: elapsed,
    produced: runs * RECORDS_PER_RUN,
    started: Array.from(started, (n) => n ?? 0),
    stats: handler.stats(),
    errors,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  await ledger.close();
  await store.stop();
}

function runChild(task: ChildTask): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD_ENV]: JSON.stringify(task) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`load process ${task.label} exited with ${code}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "") as ChildReport);
      } catch {
        reject(new Error(`load process ${task.label} printed no report: ${out}`));
      }
    });
  });
}

/** Records of every call and turn in the partition. */
async function storedRecords(ledger: Ledger): Promise<number> {
  return (await ledger.listCalls(PARTITION)).length + (await ledger.listTurns(PARTITION)).length;
}

/** One second of a load level: runs started, calls made (their `at`), records stored (their row's `created_at`). */
interface Second {
  started: number;
  calls: number;
  stored: number;
}

interface LevelResult {
  level: number;
  writeThread: boolean;
  rate: number;
  runs: number;
  produced: number;
  stored: number;
  /** Call-to-stored latency of every call record, ms. */
  latencies: number[];
  timeline: Second[];
  dropped: number;
  failed: number;
  errors: number;
}

/**
 * Every stored call and turn of the load, read from Postgres: `at` (the call's end, or the run's
 * for a turn, on the recorder's clock) and `created_at` (when the INSERT holding the row ran, on
 * the server's clock: the same machine, the same clock). The rows of one statement commit with it.
 */
async function storedTimes(schema: string): Promise<{ kind: "calls" | "turns"; at: number; stored: number }[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ ns: string; at: string; stored: number }>(
      `SELECT namespace_path AS ns, value->>'at' AS at, extract(epoch FROM created_at) * 1000 AS stored
       FROM "${schema}".store WHERE namespace_path LIKE $1`,
      [`${namespaceFor("tool-lessons", PARTITION, "calls").slice(0, 2).join(":")}:%`],
    );
    return rows
      .filter((r) => r.ns.endsWith(":turns") || r.ns.includes(":calls:"))
      .map((r) => ({ kind: r.ns.endsWith(":turns") ? "turns" : "calls", at: Number(r.at), stored: Number(r.stored) }));
  } finally {
    await client.end();
  }
}

/** PROCS open-loop processes at `rate` runs/s each, into a fresh schema. */
async function loadLevel(level: number, rate: number, writeThread: boolean): Promise<LevelResult> {
  const schema = uniqueSchema("tl_bench_load");
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  try {
    await new Ledger(store).configure(PARTITION, { retainCallsPerTool: 10_000_000, retainTurns: 10_000_000 });
    await new Ledger(store).fingerprintKey("default");
    const reports = await Promise.all(
      Array.from({ length: PROCS }, (_, p) => runChild({ schema, label: `p${p}`, mode: "load", rate, writeThread })),
    );
    const t0 = Math.min(...reports.map((r) => r.t0));
    const timeline: Second[] = [];
    const second = (at: number) =>
      (timeline[Math.max(0, Math.floor((at - t0) / 1000))] ??= { started: 0, calls: 0, stored: 0 });
    for (const r of reports) r.started.forEach((n, i) => (second(r.t0 + i * 1000).started += n));
    const times = await storedTimes(schema);
    const latencies: number[] = [];
    for (const row of times) {
      if (row.kind === "calls") {
        latencies.push(row.stored - row.at);
        second(row.at).calls += 1;
      }
      second(row.stored).stored += 1;
    }
    return {
      level,
      writeThread,
      rate,
      runs: reports.reduce((n, r) => n + r.runs, 0),
      produced: reports.reduce((n, r) => n + r.produced, 0),
      stored: await storedRecords(new Ledger(store)),
      latencies,
      timeline: Array.from(timeline, (b) => b ?? { started: 0, calls: 0, stored: 0 }),
      dropped: reports.reduce((n, r) => n + r.stats.dropped, 0),
      failed: reports.reduce((n, r) => n + r.stats.failed, 0),
      errors: reports.reduce((n, r) => n + r.errors.length, 0),
    };
  } finally {
    await store.stop();
    await dropSchema(schema);
  }
}

/** Runs/s one process sustains with CONCURRENCY runs at a time (PROCS processes at once). */
async function capacity(): Promise<number> {
  const schema = uniqueSchema("tl_bench_cap");
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  try {
    await new Ledger(store).fingerprintKey("default");
    const reports = await Promise.all(
      Array.from({ length: PROCS }, (_, p) =>
        runChild({ schema, label: `c${p}`, mode: "capacity", writeThread: true }),
      ),
    );
    return reports.reduce((n, r) => n + r.runs / r.seconds, 0) / reports.length;
  } finally {
    await store.stop();
    await dropSchema(schema);
  }
}

/** Built runs as the recorder makes them: recorded from the agent into an in-memory ledger. */
async function recordedRuns(): Promise<RunRecords[]> {
  const ledger = new Ledger(new InMemoryStore());
  const runs: RunRecords[] = [];
  const appendRuns = ledger.appendRuns.bind(ledger);
  ledger.appendRuns = async (batch) => {
    runs.push(...batch.map((r) => structuredClone(r)));
    return appendRuns(batch);
  };
  const handler = new ToolLessonsCallbackHandler({ ledger });
  const graph = agent();
  for (let i = 0; i < 20; i += 1) {
    await graph.invoke(
      { messages: [new HumanMessage(`write run ${i}`)] },
      { configurable: { thread_id: `w-${i}` }, metadata: { user_id: PARTITION_USER }, callbacks: [handler] },
    );
    await handler.flush();
  }
  return runs;
}

/**
 * `count` runs copied from `sample`, without ids and times (each write stamps its own). `built`:
 * marked as the recorder marks the rows it builds (`ledger/trusted.ts`), which is how the writer
 * hands them to `appendRuns`; unmarked, they are rows from outside, checked against the schema.
 */
function copies(sample: RunRecords[], count: number, built: boolean): RunRecords[] {
  const copy = <T extends object>(row: T): T => {
    const { id: _id, at: _at, ...rest } = structuredClone(row) as T & { id?: string; at?: number };
    return built ? trustBuilt(rest as T) : (rest as T);
  };
  return Array.from({ length: count }, (_, i) => {
    const { calls, turn } = sample[i % sample.length];
    return { calls: calls.map(copy), ...(turn ? { turn: copy(turn) } : {}) };
  });
}

interface WriteRates {
  batched: number;
  raw: number;
  unbuilt: number;
  perRun: number;
  /** This process's CPU time (user + system) per record, µs: the client's share of a write. */
  cpuUsPerRecord: { batched: number; raw: number; unbuilt: number };
}

/** records/s of the ledger's batched path, the raw multi-row insert and the per-run path, side by side. */
async function writeThroughput(): Promise<WriteRates> {
  const schema = uniqueSchema("tl_bench_write");
  const store = await openPostgresStore(POSTGRES_URL, { schema });
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const ledger = new Ledger(store);
    await ledger.configure(PARTITION, { retainCallsPerTool: 10_000_000, retainTurns: 10_000_000 });
    const sample = await recordedRuns();
    const runsPerBatch = Math.floor(BATCH_RECORDS / RECORDS_PER_RUN);
    const batches = Math.max(1, Math.round(WRITE_RECORDS / BATCH_RECORDS));
    const rates = { batched: [] as number[], raw: [] as number[], unbuilt: [] as number[], perRun: [] as number[] };
    const table = `"${schema}".store`;
    const cpuMs = { batched: 0, raw: 0, unbuilt: 0 };
    /** The ledger's batched path: what the writer calls with a full batch. */
    const batched = async (runs: RunRecords[]) => {
      const saved = await ledger.appendRuns(runs);
      return saved.calls.length + saved.turns.length;
    };
    /** The floor: the same rows, keyed and serialized, in one multi-row INSERT. */
    const raw = async (runs: RunRecords[]) => {
      const values: unknown[] = [];
      const tuples: string[] = [];
      const put = (collection: "calls" | "turns", row: object, tool?: string) => {
        const at = Date.now();
        const id = timeOrderedId(at);
        const n = values.length;
        values.push(
          namespaceFor("tool-lessons", PARTITION, collection, tool).join(":"),
          id,
          JSON.stringify({ ...row, v: SCHEMA_VERSION, id, at }),
        );
        tuples.push(`($${n + 1}, $${n + 2}, $${n + 3}::jsonb)`);
      };
      for (const run of runs) {
        for (const call of run.calls) put("calls", call, call.tool);
        if (run.turn) put("turns", run.turn);
      }
      await client.query(`INSERT INTO ${table} (namespace_path, key, value) VALUES ${tuples.join(", ")}`, values);
      return tuples.length;
    };
    const paths = [
      { name: "batched", write: batched, built: true },
      { name: "raw", write: raw, built: true },
      { name: "unbuilt", write: batched, built: false },
    ] as const;
    for (let round = 0; round < WRITE_ROUNDS; round += 1) {
      // Batch by batch, the paths take turns (each goes first in turn): all see the same machine
      // load, the same table size and the same server caches.
      const data = paths.map((p) => Array.from({ length: batches }, () => copies(sample, runsPerBatch, p.built)));
      const ms = paths.map(() => 0);
      const records = paths.map(() => 0);
      for (let b = 0; b < batches; b += 1) {
        for (let k = 0; k < paths.length; k += 1) {
          const p = (b + round + k) % paths.length;
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          records[p] += await paths[p].write(data[p][b]);
          ms[p] += performance.now() - t0;
          const c = process.cpuUsage(c0);
          cpuMs[paths[p].name] += (c.user + c.system) / 1000;
        }
      }
      paths.forEach((p, i) => rates[p.name].push(records[i] / (ms[i] / 1000)));
      // The per-run path: one run (one transaction) at a time.
      const single = copies(sample, Math.ceil(runsPerBatch / 2), true);
      let n = 0;
      const t0 = performance.now();
      for (const run of single) {
        const saved = await ledger.appendRuns([run]);
        n += saved.calls.length + saved.turns.length;
      }
      rates.perRun.push(n / ((performance.now() - t0) / 1000));
    }
    const cpuUsPerRecord = (name: "batched" | "raw" | "unbuilt") =>
      (cpuMs[name] * 1000) / (WRITE_ROUNDS * batches * runsPerBatch * RECORDS_PER_RUN);
    return {
      batched: median(rates.batched),
      raw: median(rates.raw),
      unbuilt: median(rates.unbuilt),
      perRun: median(rates.perRun),
      cpuUsPerRecord: {
        batched: cpuUsPerRecord("batched"),
        raw: cpuUsPerRecord("raw"),
        unbuilt: cpuUsPerRecord("unbuilt"),
      },
    };
  } finally {
    await client.end();
    await store.stop();
    await dropSchema(schema);
  }
}

interface PostgresPart {
  lines: string[];
  figures: Record<string, unknown>;
}

async function postgresLoad(): Promise<PostgresPart> {
  const unavailable = await postgresUnavailableReason();
  if (unavailable) return { lines: [`Postgres part not run: ${unavailable}`, ""], figures: {} };
  const perProcess = await capacity();
  const levels: LevelResult[] = [];
  // The writer on the main thread and in its write thread, level by level, alternating.
  for (const level of LEVELS) {
    for (const writeThread of [false, true]) levels.push(await loadLevel(level, perProcess * level, writeThread));
  }
  const write = await writeThroughput();
  const threaded = levels.filter((l) => l.writeThread);
  const nearest = threaded.reduce((a, b) => (Math.abs(b.level - 0.7) < Math.abs(a.level - 0.7) ? b : a));
  const lines = [
    `Capacity: ${PROCS} processes at once, each running ${CONCURRENCY} runs at a time for ${CAPACITY_SECONDS} s (every model step answers after a ${MODEL_MS} ms timer, as a network reply would), recording into one Postgres (the shared server, a fresh schema): **${perProcess.toFixed(1)} runs/s per process**.`,
    "",
    `Load: ${PROCS} processes, each starting runs at a fixed rate (open loop: a run starts every 1/rate s whatever the others do) for ${SECONDS} s after one untimed warm-up run, default handler options but for \`writeThread\`. Call-to-stored latency: from a tool call's end (its record's \`at\`) to the INSERT holding its row (the row's \`created_at\` in Postgres; one statement, its own transaction, so the row commits with it), both on this machine's clock. It includes the rest of the run after the call (the next model step), since a run's records are written when it ends.`,
    "",
    "| load (of capacity) | writer | runs/s per process | runs | records produced | records in Postgres | call-to-stored p50 / p90 / p99 (ms) | lost | dropped | failed | recording errors |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...levels.map(
      (l) =>
        `| ${Math.round(l.level * 100)}% | ${l.writeThread ? "write thread (default)" : "main thread"} | ${l.rate.toFixed(1)} | ${l.runs} | ${l.produced} | ${l.stored} | ` +
        `${quantile(l.latencies, 0.5).toFixed(0)} / ${quantile(l.latencies, 0.9).toFixed(0)} / ${quantile(l.latencies, 0.99).toFixed(0)} | ` +
        `${l.produced - l.stored} | ${l.dropped} | ${l.failed} | ${l.errors} |`,
    ),
    "",
    `Over time at ${Math.round(nearest.level * 100)}% with the write thread (all processes, per second since the runs began; calls by their end, records by their row's \`created_at\`):`,
    "",
    "| second | runs started | calls made | records stored |",
    "|---:|---:|---:|---:|",
    ...nearest.timeline.map((b, i) => `| ${i} | ${b.started} | ${b.calls} | ${b.stored} |`),
    "",
    `Write throughput, side by side in one process (median of ${WRITE_ROUNDS} rounds of ${WRITE_RECORDS} records a path; the batched paths and the raw insert in batches of ${BATCH_RECORDS} records, the recorder's default, taking turns batch by batch; every path into the same table, with its primary key and \`PostgresStore\`'s indexes). Client CPU: this process's user + system time while a path's batches ran, per record (the server's share is not in it):`,
    "",
    "| path | records/s | vs the raw insert | client CPU µs / record |",
    "|---|---:|---:|---:|",
    `| raw multi-row \`INSERT … VALUES\` (the floor) | ${write.raw.toFixed(0)} | 1.00× | ${write.cpuUsPerRecord.raw.toFixed(1)} |`,
    `| ledger, batched (\`appendRuns\` of the recorder's rows: every run's calls and turn in one \`INSERT … ON CONFLICT\`) | ${write.batched.toFixed(0)} | ${(write.raw / write.batched).toFixed(2)}× | ${write.cpuUsPerRecord.batched.toFixed(1)} |`,
    `| ledger, batched, rows from outside the package (each checked against its schema) | ${write.unbuilt.toFixed(0)} | ${(write.raw / write.unbuilt).toFixed(2)}× | ${write.cpuUsPerRecord.unbuilt.toFixed(1)} |`,
    `| ledger, per run (\`appendRuns\` of one run at a time) | ${write.perRun.toFixed(0)} | ${(write.raw / write.perRun).toFixed(2)}× | not measured |`,
    "",
  ];
  const figures = {
    capacityRunsPerSecondPerProcess: round(perProcess, 1),
    storeLatencyP50Ms: quantile(nearest.latencies, 0.5),
    storeLatencyP99Ms: quantile(nearest.latencies, 0.99),
    storeLatencyAtLoad: nearest.level,
    lost: levels.reduce((n, l) => n + l.produced - l.stored, 0),
    batchedRecordsPerSecond: Math.round(write.batched),
    rawInsertRecordsPerSecond: Math.round(write.raw),
    perRunRecordsPerSecond: Math.round(write.perRun),
    unbuiltBatchedRecordsPerSecond: Math.round(write.unbuilt),
    clientCpuUsPerRecord: {
      batched: round(write.cpuUsPerRecord.batched, 1),
      raw: round(write.cpuUsPerRecord.raw, 1),
      unbuilt: round(write.cpuUsPerRecord.unbuilt, 1),
    },
    rawOverBatched: round(write.raw / write.batched, 3),
  };
  return { lines, figures };
}

function round(x: number, digits: number): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
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
      failureSink: (f) => errors.push(`${f.kind}: ${f.message}`),
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

export async function benchLoad(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const load = os.loadavg()[0].toFixed(1);
  const pg = await postgresLoad();
  const burst = await sqliteBurst();
  const markdown = [
    "## Recording under load",
    "",
    `Command: \`npm run bench -- load\` (\`bench/load.ts\`). The 1-minute load average was ${load} when it started ` +
      `(${os.cpus().length} cores, shared with other jobs): rates and latencies carry that contention; ` +
      "the lost and dropped counts do not depend on it.",
    "",
    ...pg.lines,
    ...burst,
  ].join("\n");
  return { markdown, figures: pg.figures };
}

const childTask = process.env[CHILD_ENV];
if (childTask !== undefined) {
  child(JSON.parse(childTask) as ChildTask).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const run =
    process.env.BENCH_LOAD_WRITE_ONLY === "1"
      ? async () => {
          const load = os.loadavg()[0].toFixed(2);
          const write = await writeThroughput();
          const ratio = (x: number) => (write.raw / x).toFixed(3);
          const figures = { ...write, rawOverBatched: ratio(write.batched), rawOverUnbuilt: ratio(write.unbuilt) };
          return { markdown: `write throughput alone, load average ${load} at the start`, figures };
        }
      : benchLoad;
  run().then(
    (result) => console.log(`${result.markdown}\n\n${JSON.stringify(result.figures, null, 2)}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
