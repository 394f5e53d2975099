/**
 * Tool memory cost: a deterministic evaluation pass and a summary pass per 1,000 calls (10 tools ×
 * 100 calls, over an InMemoryStore and a SQLite ledger), the pure evaluator and synthesis alone,
 * and the model evaluator's throughput against a scripted model that answers after 50 ms, at
 * concurrency 1, 4 and 16. Run alone with `npx tsx bench/run.ts memory` (rewrites its section of
 * docs/benchmarks.md) or `npx tsx bench/memory.ts` (prints it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { Ledger } from "../src/ledger/ledger.js";
import type { CallRecord, NewRecord } from "../src/ledger/schema.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { evaluateByCode } from "../src/memory/deterministic-evaluator.js";
import { ModelEvaluator } from "../src/memory/model-evaluator.js";
import { toolStats } from "../src/memory/stats.js";
import { synthesizeByCode } from "../src/memory/synthesis.js";
import { ToolMemory } from "../src/memory/tool-memory.js";
import type { EvaluationInput } from "../src/memory/types.js";
import { isUnanimous, vetGuideline, windowValueCheck } from "../src/memory/vet-guideline.js";
import { evaluatedRow, evaluationInput } from "../src/memory/window.js";
import { valueFingerprints } from "../src/text/mask.js";

const P = "bench";
const TOOLS = 10;
const CALLS_PER_TOOL = 100;
const RUNS = 5;
const OUTPUTS = [
  "Found # results: overview, setup, reference.",
  "No results found.",
  "Warning: option <value> is not supported; used the default.",
  "Rows: a, b, c and ## more",
];
const KEY = "b".repeat(64);

/** 1,000 call records as the recorder writes them: masked, with fingerprints and output summaries. */
function records(): NewRecord<CallRecord>[] {
  const out: NewRecord<CallRecord>[] = [];
  for (let t = 0; t < TOOLS; t++) {
    for (let i = 0; i < CALLS_PER_TOOL; i++) {
      const failed = i % 9 === 0;
      const text = OUTPUTS[i % OUTPUTS.length];
      out.push({
        partition: P,
        tool: `tool_${t}`,
        runId: `run-${t}-${i}`,
        requestId: `q-${t}-${i}`,
        request: `please find item ${"#".repeat(1 + (i % 5))} for team ${i} of kind ${t}`,
        args: [
          { name: "query", kind: "string", shape: "<text>" },
          { name: "limit", kind: "number", shape: "<number>" },
        ],
        fingerprints: valueFingerprints({ query: `item ${i} team ${t}`, limit: i }, KEY),
        outcome: failed ? "error" : "success",
        ...(failed ? { errorClass: "validation" as const, errorMessage: "limit must be at most ##" } : {}),
        latencyMs: 20 + (i % 7) * 3 + (i % 50 === 0 ? 400 : 0),
        tokens: 80 + (i % 11),
        ...(failed
          ? {}
          : { output: { text, chars: text.length, empty: false, truncated: i % 4 === 3, zeroCount: false } }),
        source: "api",
      });
    }
  }
  return out;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

interface PassTimes {
  evaluateMs: number;
  summarizeMs: number;
  unchangedMs: number;
  evaluated: number;
  summarized: number;
}

/** One evaluation pass and one summary pass over a fresh ledger on `store`. */
async function passes(store: BaseStore): Promise<PassTimes> {
  const ledger = new Ledger(store, { failureSink: () => undefined });
  await ledger.configure(P, { retainCallsPerTool: CALLS_PER_TOOL, memoryWindow: CALLS_PER_TOOL });
  await ledger.appendCalls(records());
  await ledger.fingerprintKey(P);
  const memory = new ToolMemory({ ledger });
  let t0 = performance.now();
  const evaluation = await memory.evaluate(P);
  const evaluateMs = performance.now() - t0;
  t0 = performance.now();
  const summary = await memory.summarize(P);
  const summarizeMs = performance.now() - t0;
  t0 = performance.now();
  await memory.summarize(P);
  const unchangedMs = performance.now() - t0;
  return {
    evaluateMs,
    summarizeMs,
    unchangedMs,
    evaluated: evaluation.tools.reduce((n, t) => n + t.evaluated, 0),
    summarized: summary.tools.filter((t) => t.status === "summarized").length,
  };
}

async function measureStore(name: string, open: () => Promise<{ store: BaseStore; close: () => Promise<void> }>) {
  const runs: PassTimes[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { store, close } = await open();
    runs.push(await passes(store));
    await close();
  }
  return {
    name,
    evaluateMs: median(runs.map((r) => r.evaluateMs)),
    summarizeMs: median(runs.map((r) => r.summarizeMs)),
    unchangedMs: median(runs.map((r) => r.unchangedMs)),
    evaluated: runs[0].evaluated,
    summarized: runs[0].summarized,
  };
}

/** The pure pieces alone: µs per call evaluated by code, ms per tool synthesized and vetted (100-call window, 20 recent). */
function pureCosts(): { evaluateUs: number; synthesisMs: number } {
  const calls = records().map((r, i) => ({ ...r, v: 1 as const, id: `id-${String(i).padStart(6, "0")}`, at: i }));
  const inputs: EvaluationInput[] = calls.map((c) => evaluationInput(c, { latencyNormMs: 29, slowLatencyFactor: 3 }));
  const batches: number[] = [];
  for (let b = 0; b < 7; b++) {
    const t0 = performance.now();
    for (const input of inputs) evaluateByCode(input);
    batches.push(((performance.now() - t0) * 1000) / inputs.length);
  }
  const window = calls
    .slice(0, CALLS_PER_TOOL)
    .map((c, i) => evaluatedRow(c, evaluateByCode(inputs[i]), "deterministic", 1));
  const recent = window.slice(-20);
  const per: number[] = [];
  for (let b = 0; b < 7; b++) {
    const t0 = performance.now();
    for (let k = 0; k < 20; k++) {
      const draft = synthesizeByCode({
        tool: "tool_0",
        description: "Finds items for a team.",
        requiredArgs: ["query"],
        recent,
        stats: toolStats(window, 20),
        limits: { maxLineLength: 220, maxGuidelineLength: 1200 },
      });
      vetGuideline(draft, {
        containsValue: windowValueCheck(window, KEY),
        callIds: new Set(window.map((r) => r.id)),
        unanimous: isUnanimous(recent),
        maxLineLength: 220,
        maxGuidelineLength: 1200,
      });
    }
    per.push((performance.now() - t0) / 20);
  }
  return { evaluateUs: median(batches), synthesisMs: median(per) };
}

/** A chat model with no tool calling that answers every evaluation after `latencyMs`. */
class SlowJudge extends BaseChatModel {
  inFlight = 0;
  maxInFlight = 0;
  constructor(private readonly latencyMs: number) {
    super({});
  }
  _llmType(): string {
    return "slow-judge";
  }
  async _generate(): Promise<ChatResult> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    this.inFlight -= 1;
    const text = JSON.stringify({ summary: "Found pages.", evaluation: "Fits the request.", score: 1, issues: [] });
    return { generations: [{ text, message: new AIMessage(text) }] };
  }
}

const MODEL_LATENCY_MS = 50;
const MODEL_CALLS = 80;

async function modelThroughput(concurrency: number) {
  const model = new SlowJudge(MODEL_LATENCY_MS);
  const evaluator = new ModelEvaluator(model, { concurrency });
  const inputs = records()
    .slice(0, MODEL_CALLS)
    .map((r, i) => evaluationInput({ ...r, v: 1, id: `m-${i}`, at: i }, { slowLatencyFactor: 3 }));
  const t0 = performance.now();
  const outcomes = await evaluator.evaluate(inputs);
  const seconds = (performance.now() - t0) / 1000;
  return {
    concurrency,
    seconds,
    perSecond: MODEL_CALLS / seconds,
    ideal: (1000 / MODEL_LATENCY_MS) * concurrency,
    maxInFlight: model.maxInFlight,
    ok: outcomes.filter((o) => o.ok).length,
  };
}

/** Markdown section: memory pass costs per 1,000 calls and the model evaluator's throughput. */
export async function benchMemory(): Promise<string> {
  const loadBefore = loadavg()[0];
  const memoryStore = await measureStore("InMemoryStore", async () => ({
    store: new InMemoryStore(),
    close: async () => undefined,
  }));
  const sqliteStore = await measureStore("SqliteStore (file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tl-bench-memory-"));
    const store = await SqliteStore.open(join(dir, "ledger.db"));
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
  const pure = pureCosts();
  const throughput = [];
  for (const c of [1, 4, 16]) throughput.push(await modelThroughput(c));
  const perThousand = (ms: number, n: number) => ((ms * 1000) / n).toFixed(0);
  const load = `Load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end (2 cores: above 2, other work shared the CPU and inflated the times).`;
  return [
    "## Tool memory",
    "",
    `One deterministic memory pass over ${(TOOLS * CALLS_PER_TOOL).toLocaleString("en-US")} recorded calls (${TOOLS} tools × ${CALLS_PER_TOOL}, masked, with fingerprints and output summaries: successes, no results, warnings, truncated output, every 9th a validation error), on a fresh ledger each run, median of ${RUNS} runs. "Evaluate" reads each tool's state, window and new calls, evaluates them by code, writes the window rows and slides the window; "summarize" writes the ${TOOLS} guidelines (deterministic synthesis and the vet, value fingerprints included) from the newest 20 evaluated calls of each; "again" is a second summary with nothing new (no synthesis).`,
    "",
    "| ledger | evaluate: ms per 1,000 calls | calls evaluated | summarize: ms for 10 tools (1,000 evaluated calls) | guidelines written | summarize again, nothing new (ms) |",
    "|---|---:|---:|---:|---:|---:|",
    ...[memoryStore, sqliteStore].map(
      (s) =>
        `| ${s.name} | ${perThousand(s.evaluateMs, s.evaluated)} | ${s.evaluated} | ${s.summarizeMs.toFixed(0)} | ${s.summarized} | ${s.unchangedMs.toFixed(1)} |`,
    ),
    "",
    `The decisions alone, without the ledger (median of 7 batches): evaluating one call by code **${pure.evaluateUs.toFixed(2)} µs**; one tool's synthesis and vet over a 100-call window **${pure.synthesisMs.toFixed(2)} ms**.`,
    "",
    `Model evaluator throughput: ${MODEL_CALLS} calls evaluated by \`ModelEvaluator\` over a scripted chat model that answers each after ${MODEL_LATENCY_MS} ms (JSON text reply, zod-checked), at each concurrency limit. "Ideal" is concurrency × ${1000 / MODEL_LATENCY_MS} calls/s.`,
    "",
    "| concurrency | wall time (s) | calls/s | ideal calls/s | most in flight | evaluated |",
    "|---:|---:|---:|---:|---:|---:|",
    ...throughput.map(
      (t) =>
        `| ${t.concurrency} | ${t.seconds.toFixed(2)} | ${t.perSecond.toFixed(1)} | ${t.ideal.toFixed(0)} | ${t.maxInFlight} | ${t.ok}/${MODEL_CALLS} |`,
    ),
    "",
    load,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchMemory());
}
