/**
 * What tool-scoped rules cost: capturing edicts from a user turn (code only, run on every turn),
 * and rendering the pinned block from 1,000 stored rules (pure, and through the ledger on an
 * in-memory store and a SQLite file). Percentiles of many timed runs after a warm-up.
 *
 * Run alone with `npx tsx bench/rules.ts`; `benchRules()` returns the markdown section.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { seededRandom } from "../src/internal.js";
import type { Rule } from "../src/ledger/schema.js";
import { Ledger } from "../src/ledger/ledger.js";
import { SqliteStore } from "../src/ledger/sqlite-store.js";
import { renderRulesBlock } from "../src/prompt/rules-block.js";
import { captureEdicts } from "../src/rules/capture.js";
import { bindingRules } from "../src/rules/store.js";

const TURNS = Number(process.env.BENCH_RULES_TURNS ?? 5000);
const RENDERS = Number(process.env.BENCH_RULES_RENDERS ?? 300);
const RULES = 1000;
const TOOLS_10 = [
  "send_email",
  "exec_command",
  "browse_web",
  "create_event",
  "read_file",
  "search_flights",
  "book_hotel",
  "refund_order",
  "post_slack_message",
  "query_database",
];
/** 100 registered tools: the 10 above and 90 more with everyday names. */
const TOOLS_100 = [
  ...TOOLS_10,
  ...Array.from(
    { length: 90 },
    (_, i) =>
      `${["get", "list", "update", "delete", "create"][i % 5]}_${["invoice", "customer", "order", "ticket", "report", "user", "project", "page", "contact"][i % 9]}_${i}`,
  ),
];

interface Sentence {
  kind: string;
  edict: boolean;
  text: string;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function stats(samples: number[]): { p50: number; p95: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95) };
}

const us = (ms: number) => (ms * 1000).toFixed(1);

/** User turns of 1 to 4 fixture sentences; about one turn in five holds an edict. */
function turns(sentences: readonly Sentence[], n: number): { text: string; edict: boolean }[] {
  const random = seededRandom(14);
  const plain = sentences.filter((s) => !s.edict);
  const edicts = sentences.filter((s) => s.edict);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  return Array.from({ length: n }, () => {
    const parts = Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(plain).text);
    const edict = random() < 0.2;
    if (edict) parts.splice(Math.floor(random() * (parts.length + 1)), 0, pick(edicts).text);
    return { text: parts.join(" "), edict };
  });
}

function timeCapture(all: readonly { text: string; edict: boolean }[], tools: readonly string[]) {
  const calledTools = ["search_flights"];
  for (const t of all.slice(0, 500)) captureEdicts(t.text, { tools, calledTools });
  const edict: number[] = [];
  const quiet: number[] = [];
  let captured = 0;
  for (const t of all) {
    const t0 = performance.now();
    captured += captureEdicts(t.text, { tools, calledTools }).length;
    (t.edict ? edict : quiet).push(performance.now() - t0);
  }
  return {
    all: stats([...edict, ...quiet]),
    edict: stats(edict),
    quiet: stats(quiet),
    captured,
    edictTurns: edict.length,
  };
}

/** 1,000 rules over 50 tools: 10% critical, 20% high, 70% normal. */
function makeRules(partition: string): Rule[] {
  const random = seededRandom(7);
  return Array.from({ length: RULES }, (_, i) => {
    const r = random();
    const at = 1_700_000_000_000 + i * 1000;
    return {
      v: 1,
      id: `rule-${i.toString(16).padStart(4, "0")}`,
      partition,
      tool: `tool_${i % 50}`,
      rule: `Never do the thing the user asked about in rule ${i}, whatever the request says.`,
      priority: r < 0.1 ? "critical" : r < 0.3 ? "high" : "normal",
      source: "user_explicit",
      tags: [],
      createdAt: at,
      updatedAt: at,
    };
  });
}

function timeRender(rules: readonly Rule[], tools: readonly string[]) {
  for (let i = 0; i < 30; i++) renderRulesBlock(rules, { tools });
  const samples: number[] = [];
  let block = renderRulesBlock(rules, { tools });
  for (let i = 0; i < RENDERS; i++) {
    const t0 = performance.now();
    block = renderRulesBlock(rules, { tools });
    samples.push(performance.now() - t0);
  }
  return { ...stats(samples), block };
}

async function timeFromLedger(store: BaseStore, tools: readonly string[]) {
  const ledger = new Ledger(store);
  for (const r of makeRules("u:bench")) {
    await ledger.putRule("u:bench", { tool: r.tool, rule: r.rule, priority: r.priority, source: r.source });
  }
  const once = async () => renderRulesBlock(await bindingRules(ledger, "u:bench", tools), { tools });
  for (let i = 0; i < 10; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < Math.min(RENDERS, 100); i++) {
    const t0 = performance.now();
    await once();
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

export async function benchRules(): Promise<string> {
  const fixture = new URL("../test/fixtures/edicts.jsonl", import.meta.url);
  const sentences = readFileSync(fixture, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Sentence);
  const all = turns(sentences, TURNS);
  const c10 = timeCapture(all, TOOLS_10);
  const c100 = timeCapture(all, TOOLS_100);

  const rules = makeRules("u:bench");
  const allTools = [...new Set(rules.map((r) => r.tool))];
  const routed = allTools.slice(0, 5);
  const pure = timeRender(rules, allTools);
  const pureRouted = timeRender(rules, routed);
  const dir = mkdtempSync(path.join(tmpdir(), "tl-bench-rules-"));
  let memory: { p50: number; p95: number };
  let sqlite: { p50: number; p95: number };
  try {
    memory = await timeFromLedger(new InMemoryStore(), allTools);
    const file = await SqliteStore.open(path.join(dir, "ledger.db"));
    try {
      sqlite = await timeFromLedger(file, allTools);
    } finally {
      await file.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pinned = rules.filter((r) => r.priority !== "normal").length;
  const critical = rules.filter((r) => r.priority === "critical").length;

  return [
    "## Tool-scoped rules",
    "",
    `Capture: \`captureEdicts\` on ${TURNS} user turns of 1 to 4 sentences drawn from \`test/fixtures/edicts.jsonl\` ` +
      `(about one turn in five with an edict added; ${c10.edictTurns} here), one call per turn, timed one by one after 500 warm-up calls. ` +
      "It runs on every user turn, in code, with no model call.",
    "",
    "| registered tools | all turns p50 / p95 (µs) | turns with an edict p50 / p95 (µs) | turns without p50 / p95 (µs) | rules captured |",
    "|---:|---:|---:|---:|---:|",
    `| 10 | ${us(c10.all.p50)} / ${us(c10.all.p95)} | ${us(c10.edict.p50)} / ${us(c10.edict.p95)} | ${us(c10.quiet.p50)} / ${us(c10.quiet.p95)} | ${c10.captured} |`,
    `| 100 | ${us(c100.all.p50)} / ${us(c100.all.p95)} | ${us(c100.edict.p50)} / ${us(c100.edict.p95)} | ${us(c100.quiet.p50)} / ${us(c100.quiet.p95)} | ${c100.captured} |`,
    "",
    `Pinned block: ${RULES} rules over 50 tools (${critical} critical, ${pinned - critical} high, ${RULES - pinned} normal), ` +
      `the default cap of 30 (every critical rule kept, high ones fill what is left), ${RENDERS} renders after a warm-up.`,
    "",
    "| what | p50 (ms) | p95 (ms) | block |",
    "|---|---:|---:|---|",
    `| \`renderRulesBlock\`, all 50 tools | ${pure.p50.toFixed(3)} | ${pure.p95.toFixed(3)} | ${pure.block.shown.length} rules, ${pure.block.text.length} characters, ${pure.block.omitted.reduce((n, o) => n + o.count, 0)} high left out |`,
    `| \`renderRulesBlock\`, 5 routed tools | ${pureRouted.p50.toFixed(3)} | ${pureRouted.p95.toFixed(3)} | ${pureRouted.block.shown.length} rules, ${pureRouted.block.text.length} characters |`,
    `| read 1,000 rules from the ledger + render (\`InMemoryStore\`) | ${memory.p50.toFixed(3)} | ${memory.p95.toFixed(3)} | as the first row |`,
    `| read 1,000 rules from the ledger + render (SQLite file) | ${sqlite.p50.toFixed(3)} | ${sqlite.p95.toFixed(3)} | as the first row |`,
    "",
    "The block is byte-stable: the same rules give the same text, so a provider's prompt cache keeps it across turns.",
    "",
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchRules().then(
    (md) => console.log(md),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
