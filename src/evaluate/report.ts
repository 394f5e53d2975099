/**
 * The report to look at: one self-contained HTML file (inline CSS, no script to run, no network:
 * its Content-Security-Policy forbids loading anything) with the confusion matrix as a heatmap,
 * accuracy before and after, per-tool recall bars, the diagnoses, the linter's findings, and what
 * the ledger holds: pending revisions with their evidence, the measured effect of the applied
 * ones (flagged when nil or negative), rules and usage flags.
 *
 * Pure: {@link reportData} picks what the page shows, {@link renderReport} writes it. Tool names,
 * request texts, error messages and every other string come from files, models and users: all
 * are HTML-escaped, and the data embedded for machines (`<script type="application/json">`) has
 * its `<` escaped so no text can close the element.
 */
import type { UsageFlag } from "../routing/usage-flags.js";
import { definedOnly } from "../internal.js";
import type { Revision, Rule } from "../ledger/schema.js";
import { MIN_EFFECT_OPPORTUNITIES, type RevisionEffect, targetKey } from "../learn/effect.js";
import type { Comparison } from "./compare.js";
import type { Diagnosis } from "./diagnose.js";
import type { SelectionReport } from "./harness.js";
import { LINT_RULE_SUMMARIES, LINT_RULES, type LintReport } from "./lint-descriptions.js";
import type { GuardVerdict } from "../learn/review/guard.js";

/** What the ledger adds to a report, or why there is none. */
export type LedgerSection =
  | {
      partition: string;
      revisions: Revision[];
      rules: Rule[];
      flags: UsageFlag[];
      /** The measured effect of each applied revision (`LessonManager.effects`): counts only. */
      effects?: RevisionEffect[];
      /** What the last review's guard let into routing and held back, and why (`ledger.wordingsGate`). */
      guard?: GuardVerdict;
    }
  | { missing: string };

/** Everything a report shows. */
export interface ReportInput {
  /** The run the heatmap shows (with the ledger's lessons, when there is a before). */
  run: SelectionReport;
  /** The run to compare with (the tools as written, or a saved run). */
  before?: SelectionReport;
  /** `compareRuns(before, run)`, when there is a before. */
  comparison?: Comparison;
  lint?: LintReport;
  ledger?: LedgerSection;
  /** When it was made, as shown (given, so the same input renders the same bytes). */
  generatedAt: string;
  /** @default "Tool selection report" */
  title?: string;
}

/** Options of {@link reportData} and {@link renderReport}. */
export interface ReportOptions {
  /**
   * Most labels (tools, plus "no tool") the heatmap shows; with more, the tools with the most
   * errors in their row or column are kept (the JSON keeps the whole matrix).
   * @default 40
   */
  maxHeatmapLabels?: number;
}

/** The defaults of {@link ReportOptions}. */
export const DEFAULT_REPORT_OPTIONS: Readonly<Required<ReportOptions>> = Object.freeze({
  maxHeatmapLabels: 40,
});

/** Most disagreeing cases and errors listed. */
const MAX_LISTED = 50;

/** A run as the report shows and embeds it: its figures, not its per-case outcomes. */
export type ReportRun = Omit<SelectionReport, "cases"> & { cases: number };

/** The data of a report, as embedded in the page and printed by `tool-lessons report --json`. */
export interface ReportData {
  title: string;
  generatedAt: string;
  run: ReportRun;
  before?: ReportRun;
  comparison?: Comparison;
  lint?: LintReport;
  ledger?: LedgerSection;
  /** The matrix labels the heatmap shows, as indexes into `run.matrix.labels`, in order. */
  heatmap: { labels: number[]; of: number };
}

function compact(run: SelectionReport, maxListed: number): ReportRun {
  return {
    ...run,
    cases: run.cases.length,
    agreement: { ...run.agreement, disagreements: run.agreement.disagreements.slice(0, maxListed) },
    errors: run.errors.slice(0, maxListed),
  };
}

/** Labels kept in the heatmap: all when few, else those with most errors (plus "no tool"), in matrix order. */
export function heatmapLabels(run: SelectionReport, max: number): number[] {
  const { labels, counts } = run.matrix;
  const all = labels.map((_, i) => i);
  if (labels.length <= max) return all;
  const errors = all.map(
    (i) =>
      counts[i].reduce((s, c, j) => s + (i === j ? 0 : c), 0) +
      counts.reduce((s, row, j) => s + (i === j ? 0 : row[i]), 0),
  );
  const nullIndex = labels.indexOf(null);
  const keep = new Set(
    all
      .filter((i) => i !== nullIndex)
      .sort((a, b) => errors[b] - errors[a] || a - b)
      .slice(0, max - 1),
  );
  keep.add(nullIndex);
  return all.filter((i) => keep.has(i));
}

/** What the page shows (pure). */
export function reportData(input: ReportInput, options: ReportOptions = {}): ReportData {
  const o = { ...DEFAULT_REPORT_OPTIONS, ...definedOnly(options) };
  return {
    title: input.title ?? "Tool selection report",
    generatedAt: input.generatedAt,
    run: compact(input.run, MAX_LISTED),
    ...(input.before ? { before: compact(input.before, MAX_LISTED) } : {}),
    ...(input.comparison ? { comparison: input.comparison } : {}),
    ...(input.lint ? { lint: input.lint } : {}),
    ...(input.ledger ? { ledger: input.ledger } : {}),
    heatmap: { labels: heatmapLabels(input.run, o.maxHeatmapLabels), of: input.run.matrix.labels.length },
  };
}

// ------------------------------------------------------------------ HTML

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const esc = (value: unknown): string => escapeHtml(String(value));
const label = (tool: string | null): string => (tool === null ? "no tool" : tool);
const pct = (x: number | null): string => (x === null ? "–" : `${(x * 100).toFixed(1)}%`);
const points = (x: number | null): string => (x === null ? "–" : `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`);

/** JSON safe inside a `<script>` element: no `<` (so no `</script>`), no line separators. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const STYLE = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #d8dce4; --good: 22, 128, 72; --bad: 196, 52, 40; --bar: #2f6fd0; --bar0: #a9b3c4; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0; padding: 24px 32px 64px; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
p.meta, .muted { color: var(--muted); } nav a { margin-right: 14px; }
table { border-collapse: collapse; } th, td { padding: 3px 8px; text-align: left; vertical-align: top; }
table.list td, table.list th { border-bottom: 1px solid var(--line); }
.figures { display: flex; gap: 28px; flex-wrap: wrap; } .figure { min-width: 160px; }
.figure .value { font-size: 28px; font-weight: 600; } .figure .what { color: var(--muted); }
.heatmap { overflow: auto; max-height: 80vh; border: 1px solid var(--line); }
.heatmap table { font-size: 11px; } .heatmap th { position: sticky; background: #fff; white-space: nowrap; }
.heatmap thead th { top: 0; writing-mode: vertical-rl; transform: rotate(180deg); height: 150px; vertical-align: bottom; z-index: 1; }
.heatmap tbody th { left: 0; text-align: right; z-index: 1; }
.heatmap td.cell { width: 26px; min-width: 26px; height: 22px; text-align: center; border: 1px solid #eef0f4; font-variant-numeric: tabular-nums; }
.heatmap td.diag { outline: 1px solid rgba(var(--good), .35); }
.bars td { padding: 2px 8px; } .track { width: 320px; background: #f1f3f7; height: 9px; margin: 2px 0; border-radius: 2px; }
.fill { height: 9px; background: var(--bar); border-radius: 2px; } .fill.before { background: var(--bar0); }
.verdict-better { color: rgb(var(--good)); } .verdict-worse { color: rgb(var(--bad)); }
code, .turn { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.diagnosis { margin: 8px 0; padding: 8px 12px; border-left: 4px solid rgb(var(--bad)); background: #fbf6f5; }
.diagnosis .kind { font-weight: 600; text-transform: uppercase; font-size: 11px; letter-spacing: .04em; color: var(--muted); }
tr.flagged td { color: rgb(var(--bad)); font-weight: 600; }
.revision { border: 1px solid var(--line); border-radius: 4px; padding: 8px 12px; margin: 8px 0; }
ul.tight { margin: 4px 0; padding-left: 20px; }
`;

const DIAGNOSIS_TITLES: Record<Diagnosis["kind"], string> = {
  duplicate_tools: "duplicate tools",
  dense_pair: "dense pair",
  scattered_row: "scattered row",
  null_column: "errors in the no-tool column",
  null_row: "errors in the no-tool row",
};

function figures(data: ReportData): string {
  const run = data.run;
  const cmp = data.comparison;
  const items: [string, string][] = [];
  if (data.before && cmp) {
    items.push([pct(cmp.accuracy.before), `accuracy before (${data.before.label})`]);
    items.push([pct(cmp.accuracy.after), `accuracy now (${run.label})`]);
    items.push([
      points(cmp.accuracy.change),
      `change in points; repeats' noise ${points(cmp.accuracy.noise).replace("+", "±")} (${cmp.accuracy.verdict.replace(/_/g, " ")})`,
    ]);
  } else {
    items.push([pct(run.accuracy.accuracy), `accuracy (${run.label})`]);
  }
  for (const { k, recall } of run.ranking?.recallAtK ?? [])
    items.push([pct(recall), `recall@${k}: a right tool among routing's first ${k} (cases needing a tool)`]);
  if (run.noTool && Number.isFinite(run.noTool.auroc))
    items.push([run.noTool.auroc.toFixed(3), `"no tool" AUROC of routing's best score`]);
  items.push(
    run.agreement.cases > 0
      ? [pct(run.agreement.share), `of cases agree across ${run.runs} runs`]
      : ["–", "agreement not measured (one run per case)"],
  );
  items.push([String(run.accuracy.errored), "case runs errored (not counted)"]);
  return `<div class="figures">${items
    .map(
      ([value, what]) =>
        `<div class="figure"><div class="value">${esc(value)}</div><div class="what">${esc(what)}</div></div>`,
    )
    .join("")}</div>
<p class="muted">${esc(run.cases)} cases × ${esc(run.runs)} runs over ${esc(run.tools.length)} tools; ${esc(run.accuracy.counted)} outcomes counted, ${esc(run.accuracy.correct)} right. Accuracy per run: ${run.accuracy.perRun.map((x) => esc(pct(x))).join(", ")}.</p>`;
}

function diagnoses(run: ReportRun): string {
  if (run.diagnoses.length === 0) return `<p>No pattern in the off-diagonal crosses the diagnosis thresholds.</p>`;
  return run.diagnoses
    .map(
      (d) => `<div class="diagnosis" data-kind="${esc(d.kind)}"><div class="kind">${esc(DIAGNOSIS_TITLES[d.kind])}</div>
<div>${esc(d.finding)}</div><div><strong>Fix:</strong> ${esc(d.fix)}</div></div>`,
    )
    .join("\n");
}

function heatmap(data: ReportData): string {
  const { labels, counts } = data.run.matrix;
  const shown = data.heatmap.labels;
  const rowTotals = counts.map((row) => row.reduce((a, b) => a + b, 0));
  const head = shown
    .map((j) => `<th scope="col" title="picked: ${esc(label(labels[j]))}">${esc(label(labels[j]))}</th>`)
    .join("");
  const body = shown
    .map((i) => {
      const cells = shown
        .map((j) => {
          const n = counts[i][j];
          const share = rowTotals[i] > 0 ? n / rowTotals[i] : 0;
          const colour =
            n === 0
              ? ""
              : ` style="background: rgba(var(--${i === j ? "good" : "bad"}), ${(0.12 + 0.78 * share).toFixed(3)})"`;
          const title = `${label(labels[i])} → ${label(labels[j])}: ${n}`;
          return `<td class="cell${i === j ? " diag" : ""}" data-row="${i}" data-col="${j}" data-count="${n}" title="${esc(title)}"${colour}>${n === 0 ? "" : n}</td>`;
        })
        .join("");
      return `<tr><th scope="row" title="expected: ${esc(label(labels[i]))}">${esc(label(labels[i]))}</th>${cells}</tr>`;
    })
    .join("\n");
  const note =
    shown.length < data.heatmap.of
      ? `<p class="muted">Showing ${shown.length} of ${data.heatmap.of} labels: the tools with the most errors in their row or column, and "no tool". The embedded JSON has the whole matrix.</p>`
      : "";
  return `<p class="muted">Rows: the tool the case expected; columns: the tool picked; "no tool" last. Green: right; red: wrong, darker for a larger share of the row.</p>${note}
<div class="heatmap"><table id="heatmap"><thead><tr><th></th>${head}</tr></thead><tbody>
${body}
</tbody></table></div>`;
}

function recallBars(data: ReportData): string {
  const before = new Map((data.before?.perTool ?? []).map((t) => [t.tool, t]));
  const verdicts = new Map((data.comparison?.perTool ?? []).map((t) => [t.tool, t]));
  const tools = data.run.perTool
    .filter((t) => t.expected > 0)
    .sort((a, b) => (a.recall ?? 0) - (b.recall ?? 0) || label(a.tool).localeCompare(label(b.tool)));
  if (tools.length === 0) return "<p>No tool was expected by any counted case.</p>";
  const bar = (x: number | null, cls: string): string =>
    `<div class="track"><div class="fill${cls}" style="width: ${((x ?? 0) * 100).toFixed(1)}%"></div></div>`;
  const rows = tools
    .map((t) => {
      const b = before.get(t.tool);
      const v = verdicts.get(t.tool);
      const change = v
        ? `<td class="verdict-${esc(v.verdict)}">${esc(points(v.change))} <span class="muted">(${esc(v.verdict.replace(/_/g, " "))})</span></td>`
        : "";
      return `<tr data-tool="${esc(label(t.tool))}"><td>${esc(label(t.tool))}</td><td>${b ? bar(b.recall, " before") : ""}${bar(t.recall, "")}</td><td>${esc(pct(t.recall))}${b ? ` <span class="muted">(was ${esc(pct(b.recall))})</span>` : ""}</td><td class="muted">${esc(t.cases)} cases, precision ${esc(pct(t.precision))}</td>${change}</tr>`;
    })
    .join("\n");
  const legend = data.before
    ? `<p class="muted">Grey: before; blue: now. A change is judged only for tools with at least 10 cases, and only when it is larger than the repeats' spread.</p>`
    : "";
  return `${legend}<table class="bars">${rows}</table>`;
}

function lintSection(lint: LintReport | undefined): string {
  if (!lint) return "<p>The linter was not run.</p>";
  const counts = LINT_RULES.map(
    (r) =>
      `<tr><td><code>${esc(r)}</code></td><td>${esc(lint.counts[r])}</td><td class="muted">${esc(LINT_RULE_SUMMARIES[r])}</td></tr>`,
  ).join("");
  const rows = lint.findings
    .map(
      (f) =>
        `<tr><td>${esc(f.tool)}</td><td><code>${esc(f.rule)}</code>${f.source === "model" ? ' <span class="muted">(model)</span>' : ""}</td><td>${esc(f.where)}</td><td>${esc(f.problem)}</td><td>${esc(f.fix)}</td></tr>`,
    )
    .join("\n");
  return `<p>${esc(lint.failing)} of ${esc(lint.tools)} tools fail at least one rule.</p>
<table class="list"><tr><th>rule</th><th>tools failing</th><th>what it asks</th></tr>${counts}</table>
${lint.findings.length > 0 ? `<h3>Findings</h3><table class="list" id="lint-findings"><tr><th>tool</th><th>rule</th><th>where</th><th>problem</th><th>fix</th></tr>${rows}</table>` : ""}
${lint.modelNotes.length > 0 ? `<ul class="tight">${lint.modelNotes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : ""}`;
}

function revisionHtml(r: Revision): string {
  const list = (title: string, items: readonly string[]): string =>
    items.length === 0
      ? ""
      : `<div>${esc(title)}:<ul class="tight">${items.map((i) => `<li>${esc(i)}</li>`).join("")}</ul></div>`;
  const evidence = r.evidence.map((e) => {
    if (e.kind === "failed_call")
      return `${e.errorClass} ×${e.callIds.length}${e.errorMessage ? `: “${e.errorMessage}”` : ""}${e.argNames.length ? ` (args: ${e.argNames.join(", ")})` : ""}`;
    if (e.kind === "missed_request") return `missed (${e.how.replace(/_/g, " ")}): “${e.request}”`;
    return `went here, served by ${e.servedBy} (${e.how.replace(/_/g, " ")}): “${e.request}”`;
  });
  const ranks = r.ranks.map(
    (x) =>
      `${x.before === null ? "not offered" : `#${x.before}`} → ${x.after === null ? "not offered" : `#${x.after}`}: “${x.request}”`,
  );
  return `<div class="revision" data-revision="${esc(r.id)}"><strong>${esc(r.tool)}</strong> <code>${esc(r.id)}</code> <span class="muted">proposed by ${esc(r.proposer)}</span>
${list("examples added", r.queriesAdded)}${list("notes added", r.notesAdded)}${list(
    '"Not for" lines',
    r.avoidAdded.map((a) => `${a.text} (→ ${a.tool})`),
  )}
${r.callExample ? `<div>example call: <code>${esc(r.callExample)}</code></div>` : ""}${list("evidence", evidence)}${list("routing rank of missed requests", ranks)}
${list(
  "refused",
  r.refused.map((x) => `${x.kind.replace(/_/g, " ")} “${x.text}”: ${x.reason}${x.detail ? ` (${x.detail})` : ""}`),
)}</div>`;
}

/** Each applied revision's measured effect: verdict (FLAGGED when nil or negative) and counts before and after. */
function effectsHtml(effects: readonly RevisionEffect[]): string {
  const rows = effects
    .map((e) => {
      const counts = e.targets
        .map(
          (t) =>
            `${targetKey(t.target)} ${t.before.events}/${t.before.opportunities} → ${t.after.events}/${t.after.opportunities}`,
        )
        .join("; ");
      const verdict = `${e.flag !== undefined ? "FLAGGED " : ""}${e.verdict.replace(/_/g, " ")}${e.undone ? " (undone)" : ""}`;
      return `<tr data-revision="${esc(e.id)}" data-verdict="${esc(e.verdict)}"${e.flag !== undefined ? ' class="flagged"' : ""}><td>${esc(e.tool)}</td><td><code>${esc(e.id)}</code></td><td>${esc(verdict)}</td><td>${esc(counts)}</td></tr>`;
    })
    .join("");
  return `<h2 id="effects">Applied lessons: measured effect</h2>
${
  effects.length === 0
    ? "<p>No applied revision to measure.</p>"
    : `<p class="muted">What each applied revision answered, before it and since (events/opportunities); "not enough data" until each side has ${MIN_EFFECT_OPPORTUNITIES} opportunities.</p><table class="list" id="effects-table"><tr><th>tool</th><th>revision</th><th>effect</th><th>before → since</th></tr>${rows}</table>`
}`;
}

/** The last review's guard: its held-out slice, what it let in, what it held back and why. */
function guardHtml(g: GuardVerdict): string {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const head =
    g.trials === 0
      ? `<p>Nothing new for routing to learn from${g.refused ? ` (${esc(g.refused)})` : ""}.</p>`
      : g.refused
        ? `<p>New wordings refused, not applied: ${esc(g.refused)}.</p>`
        : `<p>New wordings of ${esc(g.kept.length)} tools let in: top-1 on ${esc(g.slice)} held-out requests ${pct(g.top1.before)} → ${pct(g.top1.after)} (with every new wording ${pct(g.tried)}).</p>`;
  const held = [
    ...g.held.map((h) => [
      h.tool,
      "wordings",
      h.reason === "near_duplicate"
        ? `took held-out requests of its near-duplicate ${h.from ?? ""}`
        : `pulled ${h.requests} held-out requests of other tools`,
    ]),
    ...(g.examples ?? []).map((e) => [e.tool, "examples", e.reason]),
  ];
  const table =
    held.length === 0
      ? ""
      : `<table class="list"><tr><th>tool</th><th>held back</th><th>why</th></tr>${held
          .map(([tool, what, why]) => `<tr><td>${esc(tool)}</td><td>${esc(what)}</td><td>${esc(why)}</td></tr>`)
          .join("")}</table>`;
  return `<h2 id="guard">Guard on the whole (last review)</h2>${head}${table}`;
}

function ledgerSections(ledger: LedgerSection | undefined): string {
  if (!ledger) return "";
  if ("missing" in ledger) return `<h2 id="ledger">Ledger</h2><p>${esc(ledger.missing)}</p>`;
  const rules =
    ledger.rules.length === 0
      ? "<p>No rules.</p>"
      : `<table class="list"><tr><th>tool</th><th>priority</th><th>rule</th><th>source</th></tr>${ledger.rules
          .map(
            (r) =>
              `<tr><td>${esc(r.tool || "(unscoped)")}</td><td>${esc(r.priority)}</td><td>${esc(r.rule)}</td><td>${esc(r.source.replace(/_/g, " "))}</td></tr>`,
          )
          .join("")}</table>`;
  const flags =
    ledger.flags.length === 0
      ? "<p>No usage flags.</p>"
      : `<table class="list"><tr><th>tool</th><th>flag</th><th>offered</th><th>calls</th><th>routed turns</th></tr>${ledger.flags
          .map(
            (f) =>
              `<tr><td>${esc(f.tool)}</td><td>${esc(f.flag.replace(/_/g, " "))}</td><td>${esc(f.offeredTurns)}</td><td>${esc(f.calls)}</td><td>${esc(f.routedTurns)}</td></tr>`,
          )
          .join("")}</table>`;
  return `<h2 id="revisions">Pending revisions (partition ${esc(ledger.partition)})</h2>
${ledger.revisions.length === 0 ? "<p>No revision is waiting.</p>" : ledger.revisions.map(revisionHtml).join("\n")}
${ledger.effects ? effectsHtml(ledger.effects) : ""}
${ledger.guard ? guardHtml(ledger.guard) : ""}
<h2 id="rules">Rules</h2>${rules}
<h2 id="flags">Usage flags</h2>${flags}`;
}

function listed(run: ReportRun): string {
  const parts: string[] = [];
  if (run.agreement.disagreements.length > 0) {
    parts.push(
      `<h3>Cases whose runs disagree</h3><table class="list" id="disagreements"><tr><th>case</th><th>turn</th><th>expected</th><th>picks by run</th></tr>${run.agreement.disagreements
        .map(
          (d) =>
            `<tr><td>${esc(d.id)}</td><td class="turn">${esc(d.turn)}</td><td>${esc(d.expect.length ? d.expect.join(", ") : "no tool")}</td><td>${d.picks.map((p) => esc(label(p))).join(" · ")}</td></tr>`,
        )
        .join("")}</table>`,
    );
  }
  if (run.errors.length > 0) {
    parts.push(
      `<h3>Case runs that errored</h3><table class="list" id="errors"><tr><th>case</th><th>run</th><th>turn</th><th>error</th></tr>${run.errors
        .map(
          (e) =>
            `<tr><td>${esc(e.id)}</td><td>${esc(e.run)}</td><td class="turn">${esc(e.turn)}</td><td>${esc(e.error)}</td></tr>`,
        )
        .join("")}</table>`,
    );
  }
  return parts.join("\n");
}

/** The whole page. Byte-stable: the same input gives the same string. */
export function renderReport(input: ReportInput, options: ReportOptions = {}): string {
  const data = reportData(input, options);
  const warnings = [...data.run.warnings, ...(data.before?.warnings ?? []).map((w) => `before: ${w}`)];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(data.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${esc(data.title)}</h1><p class="meta">Made by tool-lessons on ${esc(data.generatedAt)}. ${esc(data.run.label)}.</p></header>
<nav><a href="#accuracy">accuracy</a><a href="#matrix">matrix</a><a href="#diagnoses">diagnoses</a><a href="#recall">recall</a><a href="#lint">linter</a>${data.ledger && !("missing" in data.ledger) ? `<a href="#revisions">revisions</a>${data.ledger.effects ? `<a href="#effects">effects</a>` : ""}<a href="#rules">rules</a><a href="#flags">flags</a>` : ""}</nav>
${warnings.length > 0 ? `<ul class="tight" id="warnings">${warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>` : ""}
<h2 id="accuracy">Accuracy</h2>
${figures(data)}
${listed(data.run)}
<h2 id="matrix">Confusion matrix</h2>
${heatmap(data)}
<h2 id="diagnoses">What the errors say</h2>
${diagnoses(data.run)}
<h2 id="recall">Recall per tool</h2>
${recallBars(data)}
<h2 id="lint">Description linter</h2>
${lintSection(data.lint)}
${ledgerSections(data.ledger)}
<script type="application/json" id="tool-lessons-report">${scriptJson(data)}</script>
</body>
</html>
`;
}
