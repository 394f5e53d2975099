/**
 * Review cost over many call records: the time of one `LessonManager.review()` (deterministic
 * proposer, no model) and the process's peak RSS while it runs, for 10k and 100k call records.
 * Run alone with `npx tsx bench/review.ts`.
 */
import { InMemoryStore } from "@langchain/langgraph";
import { ToolIndex } from "../src/index/tool-index.js";
import { LessonManager } from "../src/learn/manager.js";
import { registerTools } from "../src/learn/register.js";
import { Ledger } from "../src/ledger/ledger.js";
import type { NewRecord, CallRecord, TurnRecord, RouteRecord } from "../src/ledger/schema.js";
import { pathToFileURL } from "node:url";

const P = "bench";
const TOOLS = 100;
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

async function seed(ledger: Ledger, calls: number): Promise<void> {
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `tool_${i}`,
    description: `Handles ${WORDS[i % WORDS.length]} tasks of kind ${i} for customers.`,
  }));
  await ledger.configure(P, {
    retainCallsPerTool: Math.ceil(calls / TOOLS) + 10,
    retainTurns: calls + 10,
    maxTools: TOOLS,
  });
  await registerTools(ledger, tools, { partition: P });
  const batch = 2000;
  for (let start = 0; start < calls; start += batch) {
    const c: NewRecord<CallRecord>[] = [];
    const t: NewRecord<TurnRecord>[] = [];
    const r: NewRecord<RouteRecord>[] = [];
    for (let i = start; i < Math.min(calls, start + batch); i++) {
      const tool = `tool_${i % TOOLS}`;
      const failed = i % 7 === 0;
      const requestId = `q${i}`;
      const request = `please help with ${WORDS[(i * 3) % WORDS.length]} number ### for team ${i % 13}`;
      c.push({
        partition: P,
        tool,
        runId: requestId,
        requestId,
        threadId: `t${i}`,
        args: [{ name: "id", kind: "string", shape: failed ? "#####" : "ORD-#####" }],
        fingerprints: [],
        outcome: failed ? "error" : "success",
        errorClass: failed ? "validation" : undefined,
        errorMessage: failed ? "id must start with ORD-" : undefined,
        source: "api",
      });
      t.push({
        partition: P,
        requestId,
        threadId: `t${i}`,
        request,
        calls: [{ tool, outcome: failed ? "error" : "success" }],
        servedBy: failed ? undefined : tool,
      });
      r.push({
        partition: P,
        requestId,
        threadId: `t${i}`,
        request,
        offered: [{ tool: `tool_${(i + 1) % TOOLS}`, rank: 1, score: 0.5 }],
        allSent: false,
        k: 5,
      });
    }
    await ledger.appendCalls(c);
    await ledger.appendTurns(t);
    await ledger.appendRoutes(r);
  }
}

async function once(calls: number): Promise<{ calls: number; seconds: number; peakMb: number; revisions: number }> {
  const ledger = new Ledger(new InMemoryStore(), { onWarning: () => {} });
  await seed(ledger, calls);
  const index = new ToolIndex({ ledger });
  await index.reindex(P);
  const manager = new LessonManager({ ledger, index });
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const t0 = performance.now();
  const review = await manager.review({ partition: P, dryRun: true });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { calls, seconds, peakMb: Math.round(peak / 2 ** 20), revisions: review.revisions.length };
}

/** Reviews per size: this machine's timings vary by a second from run to run, so the median is reported with the range. */
const RUNS = 3;

/** Markdown section: review time and peak RSS for 10k and 100k call records. */
export async function benchReview(): Promise<string> {
  const rows = [];
  for (const n of [10_000, 100_000]) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(n));
    const times = runs.map((r) => r.seconds).sort((a, b) => a - b);
    rows.push({
      calls: n,
      median: times[Math.floor(times.length / 2)],
      min: times[0],
      max: times[times.length - 1],
      peakMb: Math.max(...runs.map((r) => r.peakMb)),
      revisions: runs[0].revisions,
    });
  }
  return [
    "## Review cost",
    "",
    `One \`LessonManager.review()\` (deterministic proposer, no model, dry run) over an InMemoryStore ledger holding N call records of ${TOOLS} tools, plus one turn and one route record per call (every 7th call a validation failure), ${RUNS} times per size on a fresh ledger each. Peak RSS is the whole process, sampled every 5 ms during the review (the highest of the runs).`,
    "",
    "| call records | review time, median (s) | fastest – slowest (s) | peak RSS (MB) | revisions proposed |",
    "|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.calls.toLocaleString("en-US")} | ${r.median.toFixed(2)} | ${r.min.toFixed(2)} – ${r.max.toFixed(2)} | ${r.peakMb} | ${r.revisions} |`,
    ),
    "",
    "Target: 100k records in <= 3 s without a model.",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchReview());
}
