/**
 * Masking cost by input size: the gate's text masker (normalize, detectors, the run's values,
 * digits) and its aimed-at-model check, on 10 KB, 100 KB and 1 MB inputs of one token without a
 * space and of many tokens. Linear time shows as a ratio of about 10 between sizes ten times
 * apart; the quadratic masker this replaced took 3.5 s on a 30 KB token.
 *
 * Run alone with `npx tsx bench/masking.ts`; `benchMasking()` returns the markdown section.
 *
 * Before and after: with `MASKING_BEFORE=<a worktree of an older commit, this file copied into its
 * bench/>`, each huge run is also recorded by that tree's code, each measurement in a fresh
 * process (`npx tsx bench/masking.ts --huge <i>`), the two trees interleaved round by round.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../src/internal.js";
import { findPrivateData } from "../src/text/detectors.js";
import { gateText } from "../src/text/gate.js";
import { findAimedAtModel } from "../src/text/injection.js";
import { createMasker } from "../src/text/mask.js";
import os from "node:os";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { Ledger } from "../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";

const SIZES = [10_000, 100_000, 1_000_000];
const RUNS = 5;

const VALUES = [
  { recipient: "Margaret Whitfield", order_id: "ORD-918273", api_key: "sk-proj-QvTbLmNvRxsWpYzKdHaHcJfyUiOpAsDf" },
  { amount: 4821.77, to: "margaret.whitfield@example.com", nested: { a: { b: { c: { d: { e: "Castellanos" } } } } } },
];

function randomText(size: number, alphabet: string, seed: number): string {
  const rand = seededRandom(seed);
  let out = "";
  while (out.length < size) out += alphabet[Math.floor(rand() * alphabet.length)];
  return out;
}

const WORDS = [
  "refund",
  "the",
  "order",
  "ORD-918273",
  "for",
  "Margaret",
  "Whitfield",
  "at",
  "ann@example.org",
  "4821.77",
  "please",
  "sk-proj-QvTbLmNvRxsWpYzKdHaHcJf",
  "+44 20 7946 0958",
  "status",
  "v2.3.1",
  "today",
];

function manyTokens(size: number, seed: number): string {
  const rand = seededRandom(seed);
  let out = "";
  while (out.length < size) out += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
  return out.slice(0, size);
}

const INPUTS: readonly { name: string; make: (size: number) => string }[] = [
  {
    name: "one token, letters and digits",
    make: (n) => randomText(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 1),
  },
  { name: "one token, lower-case letters", make: (n) => randomText(n, "abcdefghijklmnopqrstuvwxyz", 2) },
  { name: "one token, `a@` repeated", make: (n) => "a@".repeat(n / 2) },
  { name: "many tokens (words, ids, emails, keys, phones)", make: (n) => manyTokens(n, 3) },
];

function medianMs(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

/** Median µs of `fn` over `n` runs in batches. */
function microsPer(fn: () => void, n: number): number {
  for (let i = 0; i < n / 4; i++) fn();
  const batches: number[] = [];
  for (let b = 0; b < 5; b++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    batches.push(((performance.now() - t0) * 1000) / n);
  }
  batches.sort((a, b) => a - b);
  return batches[2];
}

/**
 * The longest event-loop stall while the recorder records one call holding `text` (as an
 * argument and in the tool's error): a 1 ms interval timer's largest lateness, from the call's
 * start to the flush's end. The masking runs at the flush.
 */
async function flushStallMs(text: string): Promise<{ stall: number; flush: number }> {
  return recordStallMs({ q: text }, `lookup failed for ${text.slice(0, 2000)}`);
}

/**
 * The longest event-loop stall and the time of recording one call whose arguments are `args` and
 * whose error is `error` (the callbacks, then the flush), and the size of the stored call row.
 */
export async function recordStallMs(
  args: Record<string, unknown>,
  error: string,
): Promise<{ stall: number; flush: number; rowBytes: number }> {
  const store = new InMemoryStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
  const failing = tool(
    async () => {
      throw new Error(error);
    },
    { name: "lookup", description: "Look something up.", schema: z.object({}).passthrough() },
  );
  let stall = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 1);
    last = now;
  }, 1);
  const t0 = performance.now();
  await failing.invoke(args, { callbacks: [handler] }).catch(() => undefined);
  await handler.flush();
  const flush = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(timer);
  const calls = await ledger.listCalls("default");
  return { stall: Math.max(0, stall), flush, rowBytes: calls.reduce((n, c) => n + JSON.stringify(c).length, 0) };
}

/**
 * A probe of the event loop: a 1 ms timer whose largest lateness is the longest block (wall
 * time), and the process's CPU time over that same gap (user + system), which a loaded machine
 * does not inflate by descheduling the process (GC helper threads add to it).
 */
function stallProbe(): { stop: () => { wall: number; cpu: number } } {
  let wall = 0;
  let cpu = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const tick = (): void => {
    const now = performance.now();
    const used = process.cpuUsage(lastCpu);
    const between = now - last;
    wall = Math.max(wall, between - 1);
    // CPU time of this gap, never more than its wall time (GC helper threads run beside it).
    cpu = Math.max(cpu, Math.min(between, (used.user + used.system) / 1000) - 1);
    last = now;
    lastCpu = process.cpuUsage();
  };
  const timer = setInterval(tick, 1);
  return {
    stop: () => {
      clearInterval(timer);
      // The block still running when the probe stops: counted too.
      tick();
      return { wall: Math.max(0, wall), cpu: Math.max(0, cpu) };
    },
  };
}

/** One huge input of issue 29: a run with one tool call, as the recorder's callbacks see it. */
export interface HugeRun {
  name: string;
  /** The call's arguments. */
  args: () => Record<string, unknown>;
  /** The tool's error message. */
  error: (args: Record<string, unknown>) => string;
  /** The user's request of the run (a turn row is written), when it has one. */
  request?: () => string;
  /** The arguments come from the model's tool call (a ToolNode run), not from the tool's JSON input. */
  requested?: boolean;
}

export const HUGE: readonly HugeRun[] = [
  {
    name: "one argument of 1,000,000 numbers (the tool's JSON input)",
    args: () => ({ values: Array.from({ length: 1_000_000 }, (_, i) => i * 7.31) }),
    error: () => "lookup failed: too many values",
  },
  {
    name: "one argument of 1,000,000 numbers (the model's tool call)",
    args: () => ({ values: Array.from({ length: 1_000_000 }, (_, i) => i * 7.31) }),
    error: () => "lookup failed: too many values",
    request: () => "look these up",
    requested: true,
  },
  {
    name: "one argument of 200,000 strings",
    args: () => ({ names: Array.from({ length: 200_000 }, (_, i) => `Customer ${i} Whitfield-${i}`) }),
    error: () => "lookup failed: too many names",
  },
  {
    name: "a 1 MB text argument, its error repeating it whole",
    args: () => ({ q: manyTokens(1_000_000, 4) }),
    error: (args) => `lookup failed for ${String(args.q)}`,
  },
  {
    name: "a 1 MB request text",
    args: () => ({ q: "ORD-918273" }),
    error: () => "lookup failed for ORD-918273",
    request: () => manyTokens(1_000_000, 5),
  },
];

/** What recording one huge run cost. */
export interface HugeCost {
  /** Longest event-loop block (ms; wall, and CPU) while LangChain hands the input to a no-op handler (`tool.invoke`). */
  langchainStall: number;
  langchainCpu: number;
  langchainMs: number;
  /** Longest event-loop block (ms; wall, and CPU) from the recorder's first callback to its flush's end. */
  stall: number;
  stallCpu: number;
  ms: number;
  /** The largest stored row (JSON characters), and the rows stored. */
  rowChars: number;
  rows: number;
}

/** A handler that does nothing: what any handler costs the run (LangChain's share). */
class NoopHandler extends BaseCallbackHandler {
  name = "noop";
  override handleToolStart(): void {}
  override handleToolError(): void {}
}

/**
 * The cost of one huge run: LangChain's share (the tool invoked with a no-op handler: it turns the
 * input into JSON for callbacks), then the recorder's alone: its callbacks called as LangChain
 * calls them, with the JSON input LangChain made, then `flush()`; the stall probe runs throughout.
 */
export async function recordHuge(huge: HugeRun): Promise<HugeCost> {
  const args = huge.args();
  const error = huge.error(args);
  const request = huge.request?.();
  const failing = tool(
    async () => {
      throw new Error(error);
    },
    { name: "lookup", description: "Look something up.", schema: z.object({}).passthrough() },
  );
  let probe = stallProbe();
  let t0 = performance.now();
  await failing.invoke(args, { callbacks: [new NoopHandler()] }).catch(() => undefined);
  const langchainMs = performance.now() - t0;
  const langchain = probe.stop();

  const input = JSON.stringify(args);
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
  const serialized: Serialized = { lc: 1, type: "not_implemented", id: ["bench"] };
  await new Promise((resolve) => setTimeout(resolve, 5));
  probe = stallProbe();
  t0 = performance.now();
  const root = "run-root";
  const toolRun = "run-tool";
  if (request !== undefined) {
    handler.handleChainStart(serialized, { messages: [new HumanMessage(request)] }, root, undefined, [], {});
    if (huge.requested) {
      const message = new AIMessage({
        content: "",
        tool_calls: [{ id: "call_1", name: "lookup", args, type: "tool_call" }],
      });
      handler.handleLLMEnd({ generations: [[{ text: "", message } as never]] }, "run-model", root);
    }
  }
  handler.handleToolStart(
    serialized,
    input,
    toolRun,
    request !== undefined ? root : undefined,
    [],
    {},
    "lookup",
    huge.requested ? "call_1" : undefined,
  );
  await handler.handleToolError(new Error(error), toolRun, request !== undefined ? root : undefined);
  if (request !== undefined) await handler.handleChainEnd({}, root);
  await handler.flush();
  const ms = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const recorder = probe.stop();
  const rows = [...(await ledger.listCalls("default")), ...(await ledger.listTurns("default"))];
  return {
    langchainStall: langchain.wall,
    langchainCpu: langchain.cpu,
    langchainMs,
    stall: recorder.wall,
    stallCpu: recorder.cpu,
    ms,
    rowChars: Math.max(0, ...rows.map((r) => JSON.stringify(r).length)),
    rows: rows.length,
  };
}

export async function benchMasking(): Promise<string> {
  const mask = createMasker(VALUES);
  const stages: readonly { name: string; run: (text: string) => void }[] = [
    { name: "mask (values + detectors)", run: (t) => mask(t) },
    { name: "detectors alone", run: (t) => findPrivateData(t) },
    { name: "aimed-at-model check", run: (t) => findAimedAtModel(t) },
    { name: "gateText, kind stored", run: (t) => gateText(t, { kind: "stored", masker: mask }) },
  ];
  const rows: string[] = [];
  for (const input of INPUTS) {
    const texts = SIZES.map((size) => input.make(size));
    for (const stage of stages) {
      stage.run(texts[0]);
      const ms = texts.map((text) => medianMs(() => stage.run(text)));
      rows.push(
        `| ${input.name} | ${stage.name} | ${ms.map(fmt).join(" | ")} | ${(ms[1] / ms[0]).toFixed(1)} | ${(ms[2] / ms[1]).toFixed(1)} |`,
      );
    }
  }
  const stallRows: string[] = [];
  for (const input of [INPUTS[0], INPUTS[3]]) {
    const cells: string[] = [];
    for (const size of SIZES) {
      await flushStallMs(input.make(10_000));
      const { stall, flush } = await flushStallMs(input.make(size));
      cells.push(`${fmt(stall)} / ${fmt(flush)}`);
    }
    stallRows.push(`| ${input.name} | ${cells.join(" | ")} |`);
  }
  const before = process.env.MASKING_BEFORE;
  const hugeRows: string[] = [];
  const cell = (c: HugeCost): string[] => [
    `${fmt(c.langchainStall)} (${fmt(c.langchainCpu)}) / ${fmt(c.langchainMs)}`,
    `${fmt(c.stall)} (${fmt(c.stallCpu)}) / ${fmt(c.ms)}`,
    (c.rowChars / 1024).toFixed(1),
    String(c.rows),
  ];
  for (const [i, huge] of HUGE.entries()) {
    if (before === undefined) {
      await recordHuge(HUGE[HUGE.length - 1]);
      hugeRows.push(`| ${huge.name} | ${cell(await recordHuge(huge)).join(" | ")} |`);
      continue;
    }
    const runs: Record<"before" | "after", HugeCost[]> = { before: [], after: [] };
    for (let round = 0; round < HUGE_ROUNDS; round++) {
      const order = round % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
      for (const tree of order) runs[tree].push(hugeInChild(tree === "before" ? before : ROOT, i));
    }
    for (const tree of ["before", "after"] as const)
      hugeRows.push(`| ${huge.name} | ${tree} | ${cell(medianCost(runs[tree])).join(" | ")} |`);
  }
  const error = "Refund of 4821.77 for ORD-918273 to margaret.whitfield@example.com is not allowed: permission denied";
  const perText = microsPer(() => mask(error), 2000);
  const perRun = microsPer(() => createMasker(VALUES), 500);
  return [
    "## Masking cost by input size",
    "",
    `Median of ${RUNS} runs, ms, in one process. The masker is prepared once for two calls' arguments (a name, an order id, a key, an amount, an email, a value nested five levels deep). A ratio near 10 between inputs ten times apart is linear time; the masker this replaced was quadratic on a long token (3.5 s for 30 KB).`,
    "",
    "| input | stage | 10 KB | 100 KB | 1 MB | 100 KB / 10 KB | 1 MB / 100 KB |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    "Longest event-loop stall while the recorder flushes one call whose argument is such an input (its error repeats the first 2,000 characters), ms (stall / whole flush), after one warm-up flush; a 1 ms timer measures the stall:",
    "",
    "| argument | 10 KB | 100 KB | 1 MB |",
    "|---|---:|---:|---:|",
    ...stallRows,
    "",
    `Recording one run with a huge input (MASK_BUDGET in src/text/budget.ts bounds it). "LangChain's share": \`tool.invoke\` with a no-op callback handler, which turns the arguments into JSON for every handler (any handler pays it, the recorder cannot avoid it). "Recorder": its callbacks called as LangChain calls them, with that JSON input (and, for the model's tool call, the arguments object of the AIMessage), then \`flush()\`: the longest event-loop block (a 1 ms timer's largest lateness; in brackets the process's CPU time over that gap, which a loaded machine's descheduling does not inflate) and the whole time, ms; then the largest stored row (JSON, KB) and the rows stored (a call, and a turn when the run has a request). After one warm-up run. Load average (1 min) at the start: ${os.loadavg()[0].toFixed(1)}.`,
    "",
    ...(before === undefined
      ? [
          "| input | LangChain's share: stall (CPU) / ms | recorder: stall (CPU) / ms | largest row KB | rows |",
          "|---|---:|---:|---:|---:|",
        ]
      : [
          `Before: the code of ${treeCommit(before)}; after: ${treeCommit(ROOT)}. Each figure the median of ${HUGE_ROUNDS} runs, each in a fresh process, the two trees interleaved.`,
          "",
          "| input | code | LangChain's share: stall (CPU) / ms | recorder: stall (CPU) / ms | largest row KB | rows |",
          "|---|---|---:|---:|---:|---:|",
        ]),
    ...hugeRows,
    "",
    `A typical error message (${error.length} characters) through the prepared masker: **${perText.toFixed(1)} µs**; preparing the masker for those two calls' arguments: **${perRun.toFixed(1)} µs** (median of 5 batches).`,
  ].join("\n");
}

/** Rounds of the before/after comparison of huge runs. */
const HUGE_ROUNDS = 3;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** One huge run recorded by the code of the worktree `root`, in a fresh process (after a warm-up run). */
function hugeInChild(root: string, index: number): HugeCost {
  const child = spawnSync("npx", ["tsx", path.join(root, "bench", "masking.ts"), "--huge", String(index)], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`bench child in ${root} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as HugeCost;
}

/** Each figure's median over runs. */
function medianCost(runs: readonly HugeCost[]): HugeCost {
  const median = (pick: (c: HugeCost) => number): number => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  return {
    langchainStall: median((c) => c.langchainStall),
    langchainCpu: median((c) => c.langchainCpu),
    langchainMs: median((c) => c.langchainMs),
    stall: median((c) => c.stall),
    stallCpu: median((c) => c.stallCpu),
    ms: median((c) => c.ms),
    rowChars: median((c) => c.rowChars),
    rows: median((c) => c.rows),
  };
}

function treeCommit(root: string): string {
  const out = spawnSync("git", ["-C", root, "log", "-1", "--format=%h"], { encoding: "utf8" });
  return out.status === 0 ? out.stdout.trim() : root;
}

const hugeArg = process.argv.indexOf("--huge");
if (hugeArg > 0 && process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const huge = HUGE[Number(process.argv[hugeArg + 1])];
  await recordHuge(HUGE[HUGE.length - 1]);
  console.log(JSON.stringify(await recordHuge(huge)));
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchMasking().then(
    (md) => console.log(md),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
