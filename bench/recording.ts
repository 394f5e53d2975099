/**
 * What recording costs an agent: the same agent turn (scripted model, real `ToolNode`, a few
 * tools, several calls per turn including a tool error and a schema refusal) run many times
 * without the handler and with it, interleaved in one process, on an in-memory ledger and on
 * a SQLite file. Medians after a warm-up.
 *
 * Run alone with `npx tsx bench/recording.ts`; `benchRecording()` returns the markdown section.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { Ledger } from "../src/ledger/ledger.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";
import { createTextMasker, maskArgs, valueFingerprints } from "../src/text/mask.js";
import {
  buildAgent,
  echoTool,
  planScript,
  ScriptedChatModel,
  shopTools,
  type PlannedCall,
} from "../test/helpers/record-agent.js";

/** Turns per mode after warm-up. */
const TURNS = Number(process.env.BENCH_RECORDING_TURNS ?? 300);
const WARMUP = 40;

/** One turn: 3 model steps, 7 tool calls (one tool error, one schema refusal), then an answer. */
const PLAN: PlannedCall[][] = [
  [
    { name: "lookup_order", args: { order_id: "ORD-918273" } },
    { name: "echo", args: { n: 1 } },
    { name: "refund", args: { order_id: "ORD-918273", amount: "48.50" } },
  ],
  [
    { name: "refund", args: { order_id: "ORD-918273", amount: 48.5 } },
    { name: "echo", args: { n: 2 } },
    { name: "lookup_order", args: { order_id: "918273" } },
  ],
  [
    {
      name: "send_email",
      args: { to: "sam@example.com", subject: "Refund", body: "Your refund of 48.50 is on its way." },
    },
  ],
];
const CALLS_PER_TURN = PLAN.flat().length;

/** A handler that does nothing: isolates what LangChain's callback machinery costs by itself. */
class NoopHandler extends BaseCallbackHandler {
  name = "noop";

  constructor() {
    super({ _awaitHandler: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

interface Mode {
  name: string;
  turn(i: number): Promise<number>;
  samples: number[];
}

export async function benchRecording(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const graph = buildAgent({
    model: new ScriptedChatModel(planScript((step) => PLAN[step], { tokensPerStep: 120 })),
    tools: [...shopTools(), echoTool],
  });
  const dir = mkdtempSync(path.join(tmpdir(), "tl-bench-recording-"));
  const sqlite = await SqliteStore.open(path.join(dir, "ledger.db"));
  await sqlite.setup();
  const errors: unknown[] = [];
  const handlerOn = (store: BaseStore) =>
    new ToolLessonsCallbackHandler({ ledger: new Ledger(store), failureSink: (f) => errors.push(f) });

  const input = (i: number) => ({
    messages: [new HumanMessage(`Refund 48.50 on ORD-918273 and tell sam@example.com (${i})`)],
  });
  const config = (i: number) => ({ configurable: { thread_id: `bench-${i}` }, metadata: { user_id: "bench" } });
  const timed = async (body: () => Promise<unknown>) => {
    const t0 = performance.now();
    await body();
    return performance.now() - t0;
  };

  const noop = new NoopHandler();
  const memBg = handlerOn(new InMemoryStore());
  const memFlush = handlerOn(new InMemoryStore());
  const sqlBg = handlerOn(sqlite);
  const sqlFlush = handlerOn(sqlite);
  const modes: Mode[] = [
    { name: "without handler", samples: [], turn: (i) => timed(() => graph.invoke(input(i), config(i))) },
    {
      name: "a no-op handler (LangChain's callback cost)",
      samples: [],
      turn: (i) => timed(() => graph.invoke(input(i), { ...config(i), callbacks: [noop] })),
    },
    {
      name: "memory, writes in background",
      samples: [],
      turn: (i) => timed(() => graph.invoke(input(i), { ...config(i), callbacks: [memBg] })),
    },
    {
      name: "memory, flush awaited each turn",
      samples: [],
      turn: (i) =>
        timed(async () => {
          await graph.invoke(input(i), { ...config(i), callbacks: [memFlush] });
          await memFlush.flush();
        }),
    },
    {
      name: "SQLite, writes in background",
      samples: [],
      turn: (i) => timed(() => graph.invoke(input(i), { ...config(i), callbacks: [sqlBg] })),
    },
    {
      name: "SQLite, flush awaited each turn",
      samples: [],
      turn: (i) =>
        timed(async () => {
          await graph.invoke(input(i), { ...config(i), callbacks: [sqlFlush] });
          await sqlFlush.flush();
        }),
    },
  ];

  // Between two timed turns, untimed: the loop turns once, every recorder writes what it holds
  // and the young generation is collected, so each turn starts on an idle loop and a clean
  // nursery, and no mode pays for another's background work or its garbage.
  v8.setFlagsFromString("--expose-gc");
  const collect = vm.runInNewContext("gc") as (options?: { type: "minor" | "major" }) => void;
  const settle = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([memBg, memFlush, sqlBg, sqlFlush].map((h) => h.flush()));
    collect({ type: "minor" });
  };
  // Interleave: every round runs each mode once, in an order shuffled per round (seeded), so
  // drift hits all alike and no mode always follows the same other one.
  let seed = 0x5eed;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let round = 0; round < WARMUP + TURNS; round += 1) {
    const order = [...modes];
    for (let i = order.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const [k, mode] of order.entries()) {
      const ms = await mode.turn(round * modes.length + k);
      if (round >= WARMUP) mode.samples.push(ms);
      await settle();
    }
  }
  for (const h of [memBg, memFlush, sqlBg, sqlFlush]) await h.flush();
  const written = [memBg, memFlush, sqlBg, sqlFlush].map((h) => h.stats());

  const hot = hotPathMicrosPerCall();
  const build = buildMicrosPerCall();
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });

  // Ratios are paired: each round ran every mode back to back, so a round's ratio cancels the
  // machine's load at that moment; the median over rounds is reported.
  const pairedRatio = (m: Mode, ref: Mode) => median(m.samples.map((x, i) => x / ref.samples[i]));
  const noopMedian = median(modes[1].samples);
  const rows = modes.map((m) => {
    const med = median(m.samples);
    const overNoop = m === modes[0] ? "" : pairedRatio(m, modes[1]).toFixed(3);
    const addedPerCall = m === modes[0] ? "" : (((med - noopMedian) * 1000) / CALLS_PER_TURN).toFixed(0);
    return `| ${m.name} | ${med.toFixed(2)} | ${pairedRatio(m, modes[0]).toFixed(3)} | ${overNoop} | ${addedPerCall} |`;
  });
  const expectedCalls = (WARMUP + TURNS) * CALLS_PER_TURN;
  const markdown = [
    "## Recording overhead",
    "",
    `One agent turn = 3 scripted model steps, ${CALLS_PER_TURN} tool calls through the real \`ToolNode\` (one tool error, one schema refusal), then an answer. ` +
      `${TURNS} turns per mode after ${WARMUP} warm-up turns, the six modes interleaved round by round in one process (order shuffled each round); ms are medians, ratios are medians of the per-round ratios (which cancel the machine's load at that moment). ` +
      '"Background": `invoke` as the user awaits it; the recorder\'s masking, row building and writing start on the next turn of the event loop, after `invoke` has resolved. ' +
      "After every timed turn of every mode, untimed, the loop turns once, every recorder flushes and the young generation is collected, so each turn starts on an idle loop and no mode pays for another's background work or garbage. " +
      '"Flush awaited": `invoke` + `await handler.flush()` every turn (an upper bound: all masking, hashing and writing charged to the turn).',
    "",
    "| mode | ms/turn (median) | ratio to no handler | ratio to a no-op handler | µs per call over a no-op handler (from medians) |",
    "|---|---:|---:|---:|---:|",
    ...rows,
    "",
    "Any callback handler makes LangChain build run managers and serialize every runnable, tool and model step: " +
      "that cost (the no-op row) is paid by every handler, LangSmith's tracer included, and is not the recorder's. " +
      "The recorder's own share is the difference between its rows and the no-op row.",
    "",
    "Per-call cost of the recorder itself, outside LangGraph:",
    "",
    `- callback hot path (tool start + end, the model step's tool calls, chain start/end), in the run: **${hot.toFixed(1)} µs/call** (median of 7 batches)`,
    `- building the record when the run ends, off the run's path (mask args, keyed fingerprints, mask error and request; a run of one call, no reuse): **${build.toFixed(1)} µs/call** (median of 7 batches)`,
    "",
    `Records written per handler (calls/turns): ${written.map((s) => `${s.written.calls}/${s.written.turns}`).join(", ")} ` +
      `(expected ${expectedCalls}/${WARMUP + TURNS} each); dropped ${written.reduce((n, s) => n + s.dropped, 0)}, ` +
      `failed ${written.reduce((n, s) => n + s.failed, 0)}, recording errors ${errors.length}.`,
    "",
  ].join("\n");
  const ratio = (i: number) => Number(pairedRatio(modes[i], modes[1]).toFixed(3));
  return {
    markdown,
    figures: {
      recorderVsNoop: ratio(2),
      recorderVsNoopFlushAwaited: ratio(3),
      sqliteVsNoop: ratio(4),
      sqliteVsNoopFlushAwaited: ratio(5),
      hotPathMicrosPerCall: Number(hot.toFixed(1)),
      buildMicrosPerCall: Number(build.toFixed(1)),
    },
  };
}

/** Drive the handler's callbacks directly for synthetic runs of 5 calls: µs per call. */
function hotPathMicrosPerCall(): number {
  const handler = new ToolLessonsCallbackHandler({
    ledger: new Ledger(new InMemoryStore()),
    maxBuffer: 1,
    failureSink: () => undefined,
  });
  const serialized = { lc: 1, type: "not_implemented" as const, id: ["tool"] };
  const runs = 1000;
  const callsPerRun = 5;
  // Messages are made once: only the handler's own work is timed. Tool call ids repeat across
  // runs, which is fine: the handler keeps them per run.
  const human = new HumanMessage({ content: "refund ORD-918273", id: "h" });
  const toolCalls = Array.from({ length: callsPerRun }, (_, i) => ({
    id: `c-${i}`,
    name: "lookup_order",
    args: { order_id: `ORD-91827${i}` },
    type: "tool_call" as const,
  }));
  const ai = new AIMessage({
    content: "",
    tool_calls: toolCalls,
    usage_metadata: { input_tokens: 90, output_tokens: 10, total_tokens: 100 },
  });
  const llmResult = { generations: [[{ text: "", message: ai } as never]] };
  const inputs = toolCalls.map((c) => JSON.stringify(c.args));
  const outputs = toolCalls.map((c) => new ToolMessage({ content: "ok", tool_call_id: c.id, status: "success" }));
  const state = { messages: [human] };
  const metadata = { user_id: "bench", thread_id: "t" };
  const once = (r: number) => {
    const root = `root-${r}`;
    const node = `node-${r}`;
    handler.handleChainStart(serialized, state, root, undefined, [], metadata);
    handler.handleChainStart(serialized, state, node, root, [], metadata);
    handler.handleLLMEnd(llmResult, `llm-${r}`, node);
    for (let i = 0; i < callsPerRun; i += 1) {
      const run = `tool-${r}-${i}`;
      handler.handleToolStart(serialized, inputs[i], run, node, [], metadata, "lookup_order", toolCalls[i].id);
      handler.handleToolEnd(outputs[i], run);
    }
    handler.handleChainEnd({ messages: outputs }, node, root);
    handler.handleChainEnd(state, root);
  };
  for (let r = 0; r < 500; r += 1) once(r);
  let next = 500;
  return medianOfBatches(() => {
    for (let r = next; r < next + runs; r += 1) once(r);
    next += runs;
  }, runs * callsPerRun);
}

/** Run a batch 7 times; the median µs per unit (a batch does `units` units). */
function medianOfBatches(batch: () => void, units: number): number {
  const times: number[] = [];
  for (let b = 0; b < 7; b += 1) {
    const t0 = performance.now();
    batch();
    times.push(((performance.now() - t0) * 1000) / units);
  }
  return median(times);
}

/** Masking and fingerprinting of one typical call (the work done when its run ends): µs. */
function buildMicrosPerCall(): number {
  const key = "0".repeat(64);
  const args = { order_id: "ORD-918273", amount: 48.5, to: "sam@example.com", note: "Please hurry, it was a gift" };
  const runValues = [args, { order_id: "918273" }];
  const n = 5_000;
  // Per call: its shapes and fingerprints, its error message; per run (shared by its calls):
  // the masker and the request. One run of one call is the worst case.
  const once = () => {
    maskArgs(args);
    valueFingerprints(args, key);
    const mask = createTextMasker(runValues);
    mask("Refund of 48.5 for ORD-918273 is not allowed: permission denied");
    mask("Refund 48.50 on ORD-918273 and tell sam@example.com");
  };
  for (let i = 0; i < 2000; i += 1) once();
  return medianOfBatches(() => {
    for (let i = 0; i < n; i += 1) once();
  }, n);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchRecording().then(
    ({ markdown, figures }) => console.log(`${markdown}\n${JSON.stringify(figures)}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
