/**
 * Human output of the measuring commands (`eval`, `lint`, `report`): pure functions from results
 * to lines; `--json` never goes through them.
 */
import type { Breakdown, RankingFigures } from "../evaluate/breakdown.js";
import type { Comparison } from "../evaluate/compare.js";
import type { SelectionReport } from "../evaluate/harness.js";
import type { NoToolFigures } from "../evaluate/metrics.js";
import { findingLine, LINT_RULES, type LintReport } from "../evaluate/lint-descriptions.js";
import { table } from "./format.js";

const pct = (x: number | null): string => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);
const points = (x: number | null): string => (x === null ? "-" : `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`);
const label = (tool: string | null): string => (tool === null ? "(no tool)" : tool);
const auroc = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : "-");

/** `recall@1 46.1%, recall@3 …` */
const recalls = (r: RankingFigures): string => r.recallAtK.map((x) => `recall@${x.k} ${pct(x.recall)}`).join(", ");

/** The "no tool" line: AUROC, and precision and recall at the threshold when there is one. */
function noToolLine(n: NoToolFigures): string {
  return (
    `no tool: AUROC ${auroc(n.auroc)} (the best score, cases needing a tool against cases needing none)` +
    (n.threshold !== undefined
      ? `; below minScore ${n.threshold}: precision ${pct(n.precision)}, recall ${pct(n.recall)}`
      : "; no minScore, so nothing abstains")
  );
}

/** The fitted model's "no tool" line (cross-fitted on the cases). */
function abstainModelLine(n: NoToolFigures): string {
  return `no tool, fitted model (score gap, the top tool's own calibration, request features; cross-fitted on these cases): AUROC ${auroc(n.auroc)}, precision ${pct(n.precision)}, recall ${pct(n.recall)}`;
}

/** One table per field of `--by`. */
function breakdownLines(b: Breakdown, ks: readonly number[]): string[] {
  const scored = b.values.some((v) => v.noTool !== undefined);
  const modelled = b.values.some((v) => v.abstainModel !== undefined);
  const header = [
    `  ${b.field}`,
    "cases",
    "no tool",
    "accuracy",
    ...ks.map((k) => `recall@${k}`),
    ...(scored ? ["AUROC", "abst. prec.", "abst. recall"] : []),
    ...(modelled ? ["model AUROC", "prec.", "recall"] : []),
  ];
  const rows = b.values.map((v) => [
    `  ${v.value}`,
    String(v.cases),
    String(v.noToolCases),
    pct(v.accuracy),
    ...ks.map((k) => pct(v.ranking?.recallAtK.find((x) => x.k === k)?.recall ?? null)),
    ...(scored
      ? [
          v.noTool ? auroc(v.noTool.auroc) : "-",
          v.noTool?.threshold !== undefined ? pct(v.noTool.precision) : "-",
          v.noTool?.threshold !== undefined ? pct(v.noTool.recall) : "-",
        ]
      : []),
    ...(modelled
      ? [
          v.abstainModel ? auroc(v.abstainModel.auroc) : "-",
          v.abstainModel ? pct(v.abstainModel.precision) : "-",
          v.abstainModel ? pct(v.abstainModel.recall) : "-",
        ]
      : []),
  ]);
  return [
    "",
    `by ${b.field}:`,
    ...table(
      header,
      rows,
      header.map((_, i) => i).filter((i) => i > 0),
    ),
  ];
}

/** Options of {@link renderSelection}. */
export interface RenderSelectionOptions {
  /** Most off-diagonal cells listed. */
  maxCells: number;
  /** Most tools in the per-tool table (the lowest recall first). */
  maxTools: number;
}

/** The short human view of `eval`: accuracy, agreement, the worst tools, the largest confusions, the diagnoses. */
export function renderSelection(
  report: SelectionReport,
  options: RenderSelectionOptions = { maxCells: 15, maxTools: 25 },
): string[] {
  const a = report.accuracy;
  const ag = report.agreement;
  const out = [
    `${report.label}: ${report.cases.length} cases x ${report.runs} runs over ${report.tools.length} tools, ${report.seconds.toFixed(1)} s`,
    `accuracy ${pct(a.accuracy)} (${a.correct} of ${a.counted} outcomes right; ${a.errored} errored, not counted); per run ${a.perRun.map(pct).join(", ")}`,
    ...(report.ranking
      ? [`ranking: ${recalls(report.ranking)} (${report.ranking.cases} cases that need a tool; minScore aside)`]
      : []),
    ...(report.noTool ? [noToolLine(report.noTool)] : []),
    ...(report.abstainModel ? [abstainModelLine(report.abstainModel)] : []),
    ...(report.amongCandidates
      ? [`candidates: ${report.amongCandidates} of ${report.cases.length} cases routed among their own candidates`]
      : []),
    report.mode === "router" && ag.cases === 0
      ? "agreement: not measured (the router repeats exactly: one run per case)"
      : ag.cases === 0
        ? "agreement: not measured (one counted run per case; --runs 2 or more measures it)"
        : `agreement: ${ag.unanimous} of ${ag.cases} cases picked the same in every run (${pct(ag.share)})`,
  ];
  for (const b of report.breakdowns ?? [])
    out.push(...breakdownLines(b, report.ranking?.recallAtK.map((x) => x.k) ?? []));
  const tools = report.perTool
    .filter((t) => t.expected > 0)
    .sort((x, y) => (x.recall ?? 0) - (y.recall ?? 0) || label(x.tool).localeCompare(label(y.tool)));
  if (tools.length > 0) {
    out.push(
      "",
      `recall per tool${tools.length > options.maxTools ? ` (the ${options.maxTools} lowest of ${tools.length})` : ""}:`,
    );
    out.push(
      ...table(
        ["  tool", "cases", "recall", "precision"],
        tools
          .slice(0, options.maxTools)
          .map((t) => [`  ${label(t.tool)}`, String(t.cases), pct(t.recall), pct(t.precision)]),
        [1, 2, 3],
      ),
    );
  }
  const { labels, counts } = report.matrix;
  const cells: { row: string | null; column: string | null; count: number }[] = [];
  counts.forEach((row, i) =>
    row.forEach((count, j) =>
      i !== j && count > 0 ? cells.push({ row: labels[i], column: labels[j], count }) : undefined,
    ),
  );
  cells.sort(
    (x, y) =>
      y.count - x.count || label(x.row).localeCompare(label(y.row)) || label(x.column).localeCompare(label(y.column)),
  );
  if (cells.length > 0) {
    out.push(
      "",
      `largest confusions (expected -> picked, outcomes)${cells.length > options.maxCells ? `, ${options.maxCells} of ${cells.length}` : ""}:`,
    );
    out.push(
      ...table(
        ["  expected", "", "picked", "n"],
        cells.slice(0, options.maxCells).map((c) => [`  ${label(c.row)}`, "->", label(c.column), String(c.count)]),
        [3],
      ).slice(1),
    );
  }
  if (report.diagnoses.length > 0) {
    out.push("", "diagnoses:");
    for (const d of report.diagnoses) out.push(`  ${d.kind.replace(/_/g, " ")}: ${d.finding}`, `    fix: ${d.fix}`);
  }
  if (report.errors.length > 0) {
    out.push("", `errored case runs (${report.errors.length}, not counted):`);
    for (const e of report.errors.slice(0, 10)) out.push(`  ${e.id} run ${e.run}: ${e.error}`);
    if (report.errors.length > 10) out.push("  ...");
  }
  for (const w of report.warnings) out.push(`note: ${w}`);
  return out;
}

/** Two runs side by side: accuracy, cases fixed and broken, every judged tool. */
export function renderComparison(c: Comparison, maxTools = 30): string[] {
  const verdict = (v: string): string => v.replace(/_/g, " ");
  const out = [
    `before: ${c.before.label} (${c.before.cases} cases x ${c.before.runs} runs)`,
    `after:  ${c.after.label} (${c.after.cases} cases x ${c.after.runs} runs)`,
    `accuracy ${pct(c.accuracy.before)} -> ${pct(c.accuracy.after)} (${points(c.accuracy.change)} points; repeats' noise ${(c.accuracy.noise * 100).toFixed(1)}): ${verdict(c.accuracy.verdict)}`,
    ...c.recallAtK.map(
      (r) => `recall@${r.k} ${pct(r.before)} -> ${pct(r.after)} (${points(r.change)} points): ${verdict(r.verdict)}`,
    ),
    ...(c.noToolAuroc
      ? [`"no tool" AUROC ${c.noToolAuroc.before.toFixed(3)} -> ${c.noToolAuroc.after.toFixed(3)}`]
      : []),
    `cases: ${c.cases.matched} matched by turn, ${c.cases.fixed} fixed, ${c.cases.broken} broken` +
      (c.cases.onlyBefore + c.cases.onlyAfter > 0
        ? ` (${c.cases.onlyBefore} only before, ${c.cases.onlyAfter} only after)`
        : ""),
  ];
  const judged = c.perTool.filter((t) => t.verdict !== "too_few_cases");
  const changed = judged.filter((t) => t.verdict !== "within_noise");
  out.push("", `tools with >= 10 cases: ${judged.length}; changed beyond the noise: ${changed.length}`);
  if (judged.length > 0) {
    out.push(
      ...table(
        ["  tool", "cases", "before", "after", "change", "noise", "verdict"],
        judged
          .slice(0, maxTools)
          .map((t) => [
            `  ${label(t.tool)}`,
            String(t.cases),
            pct(t.before),
            pct(t.after),
            points(t.change),
            (t.noise * 100).toFixed(1),
            verdict(t.verdict),
          ]),
        [1, 2, 3, 4, 5],
      ),
    );
  }
  return out;
}

/** `lint`: one line per finding, then the count per rule. */
export function renderLint(report: LintReport): { lines: string[]; summary: string } {
  const counts = LINT_RULES.filter((r) => report.counts[r] > 0).map((r) => `${r} ${report.counts[r]}`);
  const summary =
    report.findings.length === 0
      ? `lint: ${report.tools} tools, every rule holds`
      : `lint: ${report.findings.length} findings on ${report.failing} of ${report.tools} tools (tools failing each rule: ${counts.join(", ")})`;
  return { lines: [...report.findings.map(findingLine), ...report.modelNotes.map((n) => `note: ${n}`)], summary };
}
