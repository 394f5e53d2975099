/**
 * What `toolLessonsMiddleware` adds to a `createAgent` turn: the same agent (the support desk's 8
 * tools, its scripted model, a checkpointer) with and without the middleware, turns interleaved so
 * both see the same machine. A quiet turn (a new request, nothing learned, no rule) and a turn with
 * lessons (a learned card and pinned rules to read and render). The first model call of a request
 * pays for routing and the reads; later calls of the same request reuse them.
 *
 * Run alone with `npx tsx bench/middleware.ts`; `benchMiddleware()` returns the markdown section
 * and its figures (`quietTurnVsNoMiddleware`: the p50 ratio of a quiet turn with and without).
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { ScriptedSupportModel, supportDeskTools } from "../examples/support-desk.js";
import { ToolRouter } from "../src/routing/router.js";
import { ToolIndex } from "../src/routing/tool-index.js";
import { Ledger } from "../src/ledger/ledger.js";
import { toolLessonsMiddleware } from "../src/middleware/index.js";
import { putRule } from "../src/rules/store.js";
import { SHARED_STORES, sharedStore } from "./shared-store.js";

const TURNS = Number(process.env.BENCH_MIDDLEWARE_TURNS ?? 400);
const WARMUP = 50;
const REQUESTS = [
  "Track the parcel for ORD-590114 please.",
  "Where is order ORD-482913?",
  "Reset the password for someone@example.test",
  "How do I download my invoices?",
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function stats(samples: number[]): { p50: number; p95: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95) };
}

async function agents(lessons: boolean, store: BaseStore = new InMemoryStore()) {
  const tools = supportDeskTools();
  const ledger = new Ledger(store);
  const router = new ToolRouter({ index: new ToolIndex({ ledger }) });
  const bare = createAgent({ model: new ScriptedSupportModel(), tools, checkpointer: new MemorySaver() });
  const routed = createAgent({
    model: new ScriptedSupportModel(),
    tools,
    middleware: [toolLessonsMiddleware({ ledger, router, maxTools: 4, failureSink: () => undefined })],
    checkpointer: new MemorySaver(),
  });
  // One turn registers the tools in the partition and fits the index.
  await routed.invoke({ messages: [new HumanMessage(REQUESTS[0])] }, { configurable: { thread_id: "setup" } });
  if (lessons) {
    for (const tool of ["lookup_order", "track_shipment"]) {
      const card = (await ledger.getCard("default", tool))!;
      await ledger.putCard({
        ...card,
        learned: {
          ...card.learned,
          notes: [{ text: "order_id must look like ORD-######.", revisionId: "rev_bench" }],
        },
      });
      await putRule(
        ledger,
        {
          tool,
          rule: `Never call ${tool} for an order older than a year.`,
          priority: "critical",
          source: "programmatic",
          tags: [],
        },
        { partition: "default" },
      );
    }
  }
  return { bare, routed };
}

/** What a turn needs of an agent (the two agents' types differ in their middleware). */
interface Agent {
  invoke(input: { messages: HumanMessage[] }, config: { configurable: { thread_id: string } }): Promise<unknown>;
}

async function timeTurn(agent: Agent, thread: string, text: string): Promise<number> {
  const t0 = performance.now();
  await agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread } });
  return performance.now() - t0;
}

async function measure(lessons: boolean, store?: BaseStore) {
  const { bare, routed } = await agents(lessons, store);
  const base: number[] = [];
  const withMw: number[] = [];
  for (let i = 0; i < WARMUP + TURNS; i += 1) {
    const text = REQUESTS[i % REQUESTS.length];
    // Alternate which goes first, so neither always runs on a warmer machine.
    const pair =
      i % 2 === 0
        ? [await timeTurn(bare, `b-${i}`, text), await timeTurn(routed, `m-${i}`, text)]
        : [await timeTurn(routed, `m-${i}`, text), await timeTurn(bare, `b-${i}`, text)].reverse();
    if (i < WARMUP) continue;
    base.push(pair[0]);
    withMw.push(pair[1]);
  }
  return { base: stats(base), withMw: stats(withMw) };
}

export async function benchMiddleware(): Promise<{ markdown: string; figures: Record<string, number> }> {
  // A first pass warms the process (module JIT, the lexical index's first fits) for both rows.
  await measure(false);
  const quiet = await measure(false);
  const lessons = await measure(true);
  const ms = (v: number) => v.toFixed(2);
  const row = (name: string, r: typeof quiet) =>
    `| ${name} | ${ms(r.base.p50)} / ${ms(r.base.p95)} | ${ms(r.withMw.p50)} / ${ms(r.withMw.p95)} | ${(r.withMw.p50 / r.base.p50).toFixed(2)} | ${(r.withMw.p50 - r.base.p50).toFixed(2)} |`;
  const ratio = (r: typeof quiet) => Math.round((r.withMw.p50 / r.base.p50) * 1000) / 1000;
  const figures: Record<string, number> = {
    quietTurnVsNoMiddleware: ratio(quiet),
    lessonsTurnVsNoMiddleware: ratio(lessons),
  };
  // The same quiet turn with the ledger over a store other processes share: the freshness read included.
  const storeRows: string[] = [];
  for (const kind of SHARED_STORES) {
    const got = await sharedStore(kind, "middleware");
    if (typeof got === "string") {
      storeRows.push(`| quiet, ${kind} | not run: ${got} | | | |`);
      continue;
    }
    try {
      const r = await measure(false, got.store);
      figures[kind === "sqlite" ? "quietTurnVsNoMiddlewareSqlite" : "quietTurnVsNoMiddlewarePostgres"] = ratio(r);
      storeRows.push(row(kind === "sqlite" ? "quiet, SQLite file" : "quiet, Postgres", r));
    } finally {
      await got.close();
    }
  }
  const markdown = [
    "## createAgent middleware",
    "",
    "`npm run bench -- middleware` (`bench/middleware.ts`): one `createAgent` turn (new thread, the support desk's 8",
    "tools and scripted model, MemorySaver) with and without `toolLessonsMiddleware` (in-memory ledger and index,",
    `lexical embeddings, 4 of 8 tools routed), ${TURNS} turns each after ${WARMUP} warm-up turns, interleaved. No recorder`,
    "in either, so the figures are the middleware's own: partition, routing, route record, edict capture, cards,",
    "rules and guidelines read and rendered. Lessons: two learned cards and two pinned critical rules.",
    `Load average (1 min) when measured: ${os.loadavg()[0].toFixed(1)}; on a shared machine compare the two columns`,
    "of one row (measured interleaved), not rows across runs.",
    "",
    "| turn | without, ms p50 / p95 | with, ms p50 / p95 | ratio (p50) | added, ms (p50) |",
    "| ---- | --------------------- | ------------------ | ----------- | --------------- |",
    row("quiet", quiet),
    row("with lessons", lessons),
    ...storeRows,
    "",
    "The last rows put the ledger over a store other processes share (a fresh SQLite file, a Postgres schema): each",
    "turn reads the partition's and the shared scope's versions in one store batch, and nothing else while they",
    "are unchanged (`--json`: `middleware.quietTurnVsNoMiddlewareSqlite`, `middleware.quietTurnVsNoMiddlewarePostgres`).",
  ].join("\n");
  return { markdown, figures };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { markdown, figures } = await benchMiddleware();
  console.log(`${markdown}\n\n${JSON.stringify(figures)}`);
}
