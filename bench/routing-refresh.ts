/**
 * A one-card refresh at 100k tools (issue 42): what a running agent pays on its next turn after
 * an operator applied a lesson in another process. Through the public path: made-up-word tools
 * registered into an in-memory ledger, `new ToolIndex({ ledger })`, `reindex`; then, again and
 * again, one card's description is changed and committed to the ledger and
 * `index.upsertCards(partition, [card])` is timed, and a request routed after it (the turn the
 * refresh was for) is timed apart.
 *
 * Part of `npm run bench -- routing-latency`; `TOOL_LESSONS_BENCH_ROUTING_ONLY=refresh` runs this
 * row alone, `TOOL_LESSONS_BENCH_ROUTING_REFRESH_TOOLS` changes the tool count (default 100,000).
 */
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InMemoryStore } from "@langchain/langgraph";
import { seededRandom as rng } from "../src/internal.js";
import { DEFAULT_PARTITION } from "../src/ledger/keys.js";
import { Ledger } from "../src/ledger/ledger.js";
import { registerTools } from "../src/learn/register.js";
import { ToolRouter } from "../src/routing/router.js";
import { ToolIndex } from "../src/routing/tool-index.js";
import { workload, zipfVocabulary } from "./routing-latency.js";

/** The one-card refresh row (figures in milliseconds). */
export interface RefreshRow {
  tools: number;
  /** `reindex` of the whole partition (wall seconds). */
  reindexSeconds: number;
  /** Refreshes timed (after a few untimed ones). */
  refreshes: number;
  /** `upsertCards(partition, [card])` after one card's description changed. */
  refreshMs: { p50: number; p95: number };
  /** CPU milliseconds per refresh (steadier than wall time when other work shares the machine). */
  refreshCpuMs: number;
  /** The machine's load average when the row started (other work inflates wall times). */
  loadAtStart: number;
  /** One `route` right after each refresh: the turn the refresh was for. */
  routeAfterMs: { p50: number; p95: number };
}

const WARMUP = 10;
/** Refreshes timed: fewer on small indexes, to stay under the tenth of the tools whose change refits the weights (a reindex, not a refresh). */
const TIMED = 200;

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Tool count of the refresh row (`TOOL_LESSONS_BENCH_ROUTING_REFRESH_TOOLS`). */
export function refreshTools(): number {
  return Number(process.env.TOOL_LESSONS_BENCH_ROUTING_REFRESH_TOOLS ?? 100_000);
}

/** Builds the index over `n` made-up-word tools and times one-card refreshes (see the module docs). */
export async function refreshRow(n: number): Promise<RefreshRow> {
  const loadAtStart = loadavg()[0];
  const w = workload(n, n);
  const sources = w.texts.map((text, i) => ({ name: `tool_${i}`, description: text.slice(text.indexOf(":") + 2) }));
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, sources);
  const partition = DEFAULT_PARTITION;
  const index = new ToolIndex({ ledger });
  const router = new ToolRouter({ index, failureSink: () => undefined });
  let t = performance.now();
  await index.reindex(partition);
  const reindexSeconds = (performance.now() - t) / 1000;
  // The first searches after a build sort what it left apart: done before timing, as a running agent has.
  for (const q of w.queries.slice(0, 20)) await router.route(q, { partition });
  const random = rng(n + 42);
  const word = zipfVocabulary(20_000, rng(n));
  const refresh: number[] = [];
  const routeAfter: number[] = [];
  let cpu = 0;
  const timed = Math.min(TIMED, Math.floor(n / 20));
  for (let i = 0; i < WARMUP + timed; i++) {
    const name = sources[Math.floor(random() * n)].name;
    const card = (await ledger.getCard(partition, name))!;
    // A lesson applied elsewhere: the description gains a few words, committed to the ledger.
    const description = `${card.author.description} ${Array.from({ length: 3 }, word).join(" ")}`;
    const [saved] = await ledger.commit(partition, { cards: [{ ...card, author: { ...card.author, description } }] });
    const c = cpuMs();
    t = performance.now();
    await index.upsertCards(partition, [saved]);
    const took = performance.now() - t;
    const tookCpu = cpuMs() - c;
    t = performance.now();
    await router.route(w.queries[i % w.queries.length], { partition });
    const routed = performance.now() - t;
    if (i < WARMUP) continue;
    refresh.push(took);
    routeAfter.push(routed);
    cpu += tookCpu;
  }
  refresh.sort((a, b) => a - b);
  routeAfter.sort((a, b) => a - b);
  return {
    tools: n,
    reindexSeconds,
    loadAtStart,
    refreshes: timed,
    refreshMs: { p50: percentile(refresh, 0.5), p95: percentile(refresh, 0.95) },
    refreshCpuMs: cpu / timed,
    routeAfterMs: { p50: percentile(routeAfter, 0.5), p95: percentile(routeAfter, 0.95) },
  };
}

/** `TOOL_LESSONS_BENCH_ROUTING_ONLY=refresh`: the routing section runs this row alone. */
export function refreshOnly(): boolean {
  return process.env.TOOL_LESSONS_BENCH_ROUTING_ONLY === "refresh";
}

const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

/** The row's subsection of the routing section, as lines. */
export function refreshMarkdown(r: RefreshRow, load = loadavg()[0].toFixed(1)): string[] {
  return [
    REFRESH_HEADING,
    "",
    `${r.tools.toLocaleString("en-US")} made-up-word tools registered into an in-memory ledger, \`new ToolIndex({ ledger })\`, ` +
      `\`reindex\` (${r.reindexSeconds.toFixed(1)} s); then, ${r.refreshes} times (after ${WARMUP} untimed), one card's description ` +
      "gains three words, committed to the ledger, and `index.upsertCards(partition, [card])` is timed; a route right after it " +
      "(the turn the refresh was for) is timed apart. " +
      `Refresh p50 ${fmt(r.refreshMs.p50)} ms, p95 ${fmt(r.refreshMs.p95)} ms, ${fmt(r.refreshCpuMs)} ms CPU on average; ` +
      `route after it p50 ${fmt(r.routeAfterMs.p50)} ms, p95 ${fmt(r.routeAfterMs.p95)} ms. ` +
      `Target (issue 42): refresh p50 <= 10 ms: ${r.refreshMs.p50 <= 10 ? "met" : "not met"}. Load average ${r.loadAtStart.toFixed(1)} at the start, ${load} at the end. ` +
      "Alone: `TOOL_LESSONS_BENCH_ROUTING_ONLY=refresh npm run bench -- routing-latency --json`.",
    "",
  ];
}

const REFRESH_HEADING = "### A one-card refresh";

/** The row's figures for `--json`. */
export function refreshFigures(r: RefreshRow): Record<string, unknown> {
  return {
    oneCardRefreshMs: { p50: r.refreshMs.p50, p95: r.refreshMs.p95 },
    oneCardRefreshCpuMs: r.refreshCpuMs,
    routeAfterRefreshMs: r.routeAfterMs,
    oneCardRefreshTools: r.tools,
  };
}

const BENCHMARKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../docs/benchmarks.md");
const SECTION_HEADING = "## Routing latency and indexing throughput";

/**
 * The routing section as docs/benchmarks.md holds it, with only this row's subsection measured
 * again (`bench/run.ts` replaces the whole section with what it is given, and the rows not run
 * keep their last measured text).
 */
export async function refreshOnlySection(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const row = await refreshRow(refreshTools());
  // A blank line before the subsection that follows it.
  const fresh = `${refreshMarkdown(row).join("\n")}\n`;
  const text = existsSync(BENCHMARKS) ? readFileSync(BENCHMARKS, "utf8") : "";
  const start = text.indexOf(`\n${SECTION_HEADING}\n`);
  if (start < 0) return { markdown: `${SECTION_HEADING}\n\n${fresh}`, figures: refreshFigures(row) };
  const end = text.indexOf("\n## ", start + 1);
  let section = text.slice(start + 1, end < 0 ? text.length : end).trimEnd();
  const at = section.indexOf(`\n${REFRESH_HEADING}\n`);
  if (at >= 0) {
    const next = section.indexOf("\n### ", at + 1);
    section = `${section.slice(0, at + 1)}${fresh}${next < 0 ? "" : section.slice(next + 1)}`;
  } else {
    const before = section.indexOf("\n### The stores alone\n");
    section =
      before < 0 ? `${section}\n\n${fresh}` : `${section.slice(0, before + 1)}${fresh}${section.slice(before + 1)}`;
  }
  return { markdown: section.trimEnd(), figures: refreshFigures(row) };
}
