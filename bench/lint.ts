/**
 * The measuring kit on MetaTool: the description linter over its 199 tools (a count per rule),
 * and the selection harness in router mode on folds 1-4 (accuracy, agreement, the no-tool row
 * and column, the densest pairs). Run alone with `npx tsx bench/lint.ts`; `npx tsx bench/run.ts
 * lint` rewrites its section of docs/benchmarks.md.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type EvalCase, parseCases, parseToolLines, toolSourceOf } from "../src/evaluate/cases.js";
import { evaluateSelection, routerSelector, type SelectionReport } from "../src/evaluate/harness.js";
import { LINT_RULES, lintDescriptions } from "../src/evaluate/lint-descriptions.js";

const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../shared/data/metatool");
const read = (file: string): string => readFileSync(path.join(dataDir, file), "utf8");

const pct = (x: number | null): string => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);
const seconds = (t0: number): string => ((performance.now() - t0) / 1000).toFixed(1);

/** Thresholds tried for the router's no-tool path, on folds 2-4 only. */
const MIN_SCORES = [0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2];

async function run(
  tools: ReturnType<typeof parseToolLines>,
  cases: EvalCase[],
  runs: number,
  minScore?: number,
): Promise<SelectionReport> {
  return evaluateSelection({ cases, selector: await routerSelector({ tools, minScore }), runs });
}

/** Markdown section: linter counts and harness figures. */
export async function benchLint(): Promise<string> {
  const tools = parseToolLines(read("tools.jsonl"), "tools.jsonl");
  const rows = read("queries.jsonl")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const folds = rows.map((l) => (JSON.parse(l) as { fold: number }).fold);
  const all = parseCases(rows.join("\n"), "queries.jsonl");
  const inFolds = (wanted: number[]) => all.filter((_, i) => wanted.includes(folds[i]));

  // ---------------------------------------------------------------- linter
  let t0 = performance.now();
  const lint = await lintDescriptions(tools.map(toolSourceOf));
  const lintSeconds = seconds(t0);
  const example = (rule: string): string => {
    const f = lint.findings.find((x) => x.rule === rule);
    return f ? `${f.tool}: ${f.problem.replace(/\|/g, "\\|")}` : "-";
  };
  const lintRows = LINT_RULES.map((r) => `| \`${r}\` | ${lint.counts[r]} | ${example(r)} |`);

  // ---------------------------------------------------------------- harness
  t0 = performance.now();
  const plain = await run(tools, all, 3);
  const plainSeconds = seconds(t0);
  const train = inFolds([2, 3, 4]);
  const grid: { minScore: number; accuracy: number }[] = [];
  for (const minScore of MIN_SCORES)
    grid.push({ minScore, accuracy: (await run(tools, train, 1, minScore)).accuracy.accuracy ?? 0 });
  const best = grid.reduce((a, b) => (b.accuracy > a.accuracy ? b : a));
  t0 = performance.now();
  const tuned = await run(tools, all, 3, best.minScore);
  const tunedSeconds = seconds(t0);
  const heldOut = await run(tools, inFolds([1]), 1, best.minScore);
  const heldOutPlain = await run(tools, inFolds([1]), 1);

  const noTool = (r: SelectionReport) => r.perTool.find((t) => t.tool === null)!;
  const nullColumn = (r: SelectionReport): number => {
    const j = r.matrix.labels.indexOf(null);
    return r.matrix.counts.reduce((s, row, i) => s + (i === j ? 0 : row[j]), 0);
  };
  const harnessRow = (label: string, r: SelectionReport, secs: string): string =>
    `| ${label} | ${r.cases.length} × ${r.runs} | ${pct(r.accuracy.accuracy)} | ${pct(r.agreement.share)} | ${pct(noTool(r).recall)} of ${noTool(r).cases} | ${nullColumn(r)} | ${r.diagnoses.filter((d) => d.kind === "dense_pair").length} / ${r.diagnoses.filter((d) => d.kind === "scattered_row").length} | ${secs} |`;

  const pairs = plain.diagnoses.filter((d) => d.kind === "dense_pair");
  const flagged = pairs.filter((d) => {
    const [a, b] = d.tools;
    return (lint.neighbours[a] ?? []).some((n) => n.tool === b) || (lint.neighbours[b] ?? []).some((n) => n.tool === a);
  });
  const pairRows = pairs.map((d) => {
    const [ab, ba] = d.cells;
    const [a, b] = d.tools;
    const near =
      (lint.neighbours[a] ?? []).find((n) => n.tool === b) ?? (lint.neighbours[b] ?? []).find((n) => n.tool === a);
    return `| ${a} → ${b} | ${ab.count / plain.runs} | ${ba.count / plain.runs} | ${pct(d.share)} | ${near ? `yes (${near.similarity.toFixed(2)})` : "no"} |`;
  });
  const nullRow = tuned.diagnoses.find((d) => d.kind === "null_row");
  const nullCol = tuned.diagnoses.find((d) => d.kind === "null_column");

  return [
    "## Measuring kit: description linter and selection harness (MetaTool)",
    "",
    `Linter: \`npx tool-lessons lint --tools ../shared/data/metatool/tools.jsonl --json\` (deterministic; near neighbours by the router's own similarity at the default 0.3) over the ${lint.tools} tools: ${lint.findings.length} findings, ${lint.failing} tools failing at least one rule, ${lintSeconds} s. MetaTool has no argument schemas, so \`vague-parameter\` and \`mode-switch\` have no parameter to read (\`constraints-in-prose\` reads the prose too, and finds nothing there); its descriptions are a sentence or two of product copy, which almost never says what comes back.`,
    "",
    "| rule | tools failing | first finding |",
    "|---|---:|---|",
    ...lintRows,
    "",
    `Harness: \`npx tool-lessons eval --tools ../shared/data/metatool/tools.jsonl --cases ../shared/data/metatool/queries.jsonl [--min-score X]\`, router mode (offline lexical routing, the tools as written, no learning), every case of folds 1-4 (single- and multi-tool requests, and ${noTool(plain).cases} "negative" ones that need no tool), 3 runs each. minScore ${best.minScore} is the threshold of {${MIN_SCORES.join(", ")}} with the best accuracy on folds 2-4 (${pct(best.accuracy)}; the others: ${grid.map((g) => `${g.minScore} ${pct(g.accuracy)}`).join(", ")}); on fold 1, held out from that choice, it gives ${pct(heldOut.accuracy.accuracy)} against ${pct(heldOutPlain.accuracy.accuracy)} without.`,
    "",
    "| run | cases × runs | accuracy | cases agreeing across runs | no-tool recall | tool turns given no tool (null column) | dense pairs / scattered rows diagnosed | seconds |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    harnessRow("no minScore (always a tool)", plain, plainSeconds),
    harnessRow(`minScore ${best.minScore}`, tuned, tunedSeconds),
    "",
    `The router is deterministic, so its runs always agree; a chat model's do not (the scripted-model tests exercise that). Without minScore the no-tool row is all errors by construction, and the diagnosis says so. With minScore ${best.minScore} the harness says: ${nullRow ? `"${nullRow.finding}"` : "(no null-row diagnosis)"}${nullCol ? ` and "${nullCol.finding}"` : ""}`,
    "",
    `The densest pairs the harness names (no minScore; counts in cases, over ${plain.runs} runs), and whether the linter's boundary rule had flagged the two as near neighbours (${flagged.length} of ${pairs.length}):`,
    "",
    "| pair (the larger direction first) | cases a → b | cases b → a | share of the two rows | linter's near neighbours |",
    "|---|---:|---:|---:|---|",
    ...pairRows,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchLint());
}
