/**
 * What the served requests' wordings cost the routing index, by embeddings: MetaTool's 199 tools,
 * the labelled requests of folds 2-4 stored as served turns (one thread each), the index built
 * from the ledger (cards and wordings), then 200 fold-1 requests routed (top 5). Lexical (the default, held sparse)
 * and the word-vector preset (held dense: every wording a row as wide as the blend), each in a
 * fresh child process so its memory is its own. The sentence-encoder preset is left out: it
 * encodes each new text (~23 ms a text) and would take minutes here.
 * Run alone with `npx tsx bench/wordings.ts`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InMemoryStore } from "@langchain/langgraph";
import { Ledger } from "../src/ledger/ledger.js";
import { registerTools } from "../src/learn/register.js";
import { routingPreset, type RoutingPresetName } from "../src/routing/presets.js";
import { ToolIndex } from "../src/routing/tool-index.js";
import { readJsonl } from "./jsonl.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dataDir = path.resolve(repoRoot, "../shared/data/metatool");
/** Set in a child: the preset it measures. */
const CHILD_ENV = "TOOL_LESSONS_BENCH_WORDINGS_PRESET";
const PRESETS: RoutingPresetName[] = ["lexical", "word-vectors"];
const ROUTED = 200;

interface Row {
  preset: string;
  wordings: number;
  refreshSeconds: number;
  rssMb: number;
  heapMb: number;
  p50Ms: number;
  p95Ms: number;
}

/** In a child: one preset's figures. */
async function measure(preset: RoutingPresetName): Promise<Row> {
  const tools = readJsonl<{ name: string; description: string; parameters?: object | null }>(
    path.join(dataDir, "tools.jsonl"),
  );
  const queries = readJsonl<{ query: string; expect: string[]; fold: number }>(path.join(dataDir, "queries.jsonl"));
  const ledger = new Ledger(new InMemoryStore());
  await ledger.configure("p", { reviewTurns: 20_000, retainTurns: 20_000, maxTools: tools.length });
  await registerTools(
    ledger,
    tools.map((t) => ({ name: t.name, description: t.description, schema: t.parameters ?? undefined })),
    { partition: "p" },
  );
  const index = new ToolIndex({ ledger, ...routingPreset(preset) });
  const served = queries.filter((q) => q.fold !== 1 && q.expect.length > 0);
  for (let i = 0; i < served.length; i += 1000) {
    await ledger.appendTurns(
      served.slice(i, i + 1000).map((q, j) => ({
        partition: "p",
        threadId: `t${i + j}`,
        requestId: `r${i + j}`,
        request: q.query,
        calls: [],
        servedBy: q.expect[0],
      })),
    );
  }
  // The partition's first build: its cards and every wording read from the ledger and embedded.
  const t0 = performance.now();
  await index.reindex("p");
  const refreshSeconds = (performance.now() - t0) / 1000;
  const wordings = await index.refreshWordings("p");
  const requests = queries.filter((q) => q.fold === 1).slice(0, ROUTED + 20);
  for (const q of requests.slice(0, 20)) await index.route("p", q.query, { k: 5 });
  const times: number[] = [];
  for (const q of requests.slice(20)) {
    const start = performance.now();
    await index.route("p", q.query, { k: 5 });
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const memory = process.memoryUsage();
  return {
    preset,
    wordings,
    refreshSeconds,
    rssMb: memory.rss / 2 ** 20,
    heapMb: (memory.heapUsed + memory.arrayBuffers) / 2 ** 20,
    p50Ms: times[Math.floor(times.length / 2)],
    p95Ms: times[Math.floor(times.length * 0.95)],
  };
}

/** Markdown section and figures: each preset's wordings, refresh time, memory and route latency. */
export async function benchWordings(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const lines = ["## Wordings by embeddings (MetaTool)", ""];
  if (!existsSync(path.join(dataDir, "tools.jsonl"))) {
    lines.push("Skipped: MetaTool data not found beside the repository (`../shared/data/metatool`).");
    return { markdown: lines.join("\n"), figures: {} };
  }
  const load = os.loadavg()[0];
  const rows: Row[] = [];
  for (const preset of PRESETS) {
    const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD_ENV]: preset },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 1 << 20,
    });
    if (run.status !== 0) throw new Error(`wordings child (${preset}) failed (exit ${run.status ?? run.signal})`);
    rows.push(JSON.parse(run.stdout) as Row);
  }
  const f = (x: number, d = 1) => x.toFixed(d);
  lines.push(
    "`npm run bench -- wordings` (`bench/wordings.ts`): MetaTool's 199 tools, folds 2-4's labelled requests stored as",
    "served turns (one thread each), the index built from the ledger (cards and wordings), then 200 fold-1 requests routed, top 5, in-memory index,",
    "each preset in a fresh process (memory after routing: RSS, and heap + array buffers).",
    `Machine: ${os.platform()} ${os.arch()}, ${os.cpus().length} cores, Node ${process.version}; load average (1 min) ${f(load)} at the start, ${f(os.loadavg()[0])} at the end.`,
    "",
    "| embeddings | wordings | build, s | RSS, MB | heap + buffers, MB | route p50 / p95, ms |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map(
      (r) =>
        `| ${r.preset} | ${r.wordings} | ${f(r.refreshSeconds)} | ${f(r.rssMb, 0)} | ${f(r.heapMb, 0)} | ${f(r.p50Ms, 2)} / ${f(r.p95Ms, 2)} |`,
    ),
  );
  const figures = Object.fromEntries(rows.map((r) => [r.preset, r]));
  return { markdown: lines.join("\n"), figures };
}

const preset = process.env[CHILD_ENV];
if (preset !== undefined) {
  process.stdout.write(JSON.stringify(await measure(preset as RoutingPresetName)));
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { markdown } = await benchWordings();
  console.log(markdown);
}
