/**
 * Human output of the CLI: pure functions from results to lines, so they are tested without a
 * ledger and `--json` never goes through them.
 */
import type { RoutingScores, SimulationReport } from "../evaluate/simulate.js";
import type { NoToolFigures } from "../evaluate/metrics.js";
import type { UsageFlag } from "../routing/usage-flags.js";
import type { Review } from "../learn/manager.js";
import { type RevisionEffect, targetKey } from "../learn/effect.js";
import type { GuardVerdict } from "../learn/review/guard.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Evidence, Refusal, Revision, ToolCard } from "../ledger/schema.js";
import type { Settings } from "../settings.js";

/** Lay out rows in columns, two spaces apart; the header row is underlined by nothing, just first. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: readonly number[] = [],
): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  const right = new Set(rightAligned);
  return all.map((row) =>
    row
      .map((cell, c) =>
        right.has(c) ? cell.padStart(widths[c]) : c === row.length - 1 ? cell : cell.padEnd(widths[c]),
      )
      .join("  ")
      .trimEnd(),
  );
}

/** A date as `YYYY-MM-DD HH:MM` UTC. */
export function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const quote = (text: string): string => JSON.stringify(text);
const rank = (r: number | null): string => (r === null ? "not offered" : `#${r}`);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A refusal on one line: what was refused and why. */
export function refusalLine(r: Refusal): string {
  const what = r.text ? `${r.kind.replace("_", " ")} ${quote(r.text)}` : r.kind.replace("_", " ");
  return `${what}: ${r.reason}${r.detail ? ` (${r.detail})` : ""}`;
}

/** Evidence counts: failed calls by error class, missed and confused requests. */
export function evidenceSummary(evidence: readonly Evidence[]): string {
  let failed = 0;
  let missed = 0;
  let confused = 0;
  for (const e of evidence) {
    if (e.kind === "failed_call") failed += e.callIds.length;
    else if (e.kind === "missed_request") missed += 1;
    else confused += 1;
  }
  return `${plural(failed, "failed call")}, ${plural(missed, "missed request")}, ${plural(confused, "confused request")}`;
}

/** An applied revision's measured effect in one line: the verdict and each target's counts before and after. */
export function effectLine(e: RevisionEffect): string {
  const counts = e.targets
    .map(
      (t) =>
        `${targetKey(t.target)} ${t.before.events}/${t.before.opportunities} -> ${t.after.events}/${t.after.opportunities}`,
    )
    .join("; ");
  const verdict = e.verdict.replace(/_/g, " ");
  return `${e.flag !== undefined ? "FLAGGED " : ""}${verdict}${counts ? ` (${counts})` : ""}`;
}

/** Everything a person needs to judge one revision (with its measured effect, when applied and measured). */
export function renderRevision(r: Revision, effect?: RevisionEffect): string[] {
  const out = [`revision ${r.id}  ${r.tool}  [${r.status}]`];
  const field = (label: string, value: string): void => {
    out.push(`  ${`${label}:`.padEnd(16)}${value}`);
  };
  const list = (label: string, items: readonly string[]): void => {
    if (items.length === 0) return;
    out.push(`  ${label}:`);
    for (const item of items) out.push(`    + ${item}`);
  };
  list("examples added", r.queriesAdded.map(quote));
  list("notes added", r.notesAdded.map(quote));
  list(
    "Not for added",
    r.avoidAdded.map((n) => `${quote(n.text)} (-> ${n.tool})`),
  );
  if (r.callExample !== null) field("example call", r.callExample.replace(/^Example call:\s*/i, ""));
  if (r.queriesDisplaced.length > 0) list("examples giving way", r.queriesDisplaced.map(quote));
  if (r.queriesWithdrawn.length > 0) {
    out.push("  withdrawn on apply:");
    for (const d of r.displaced)
      out.push(`    - ${quote(d.query)} would push ${d.servedBy} out for ${quote(d.request)}`);
    for (const q of r.queriesWithdrawn) if (!r.displaced.some((d) => d.query === q)) out.push(`    - ${quote(q)}`);
  }
  field("evidence", evidenceSummary(r.evidence));
  for (const e of r.evidence) {
    if (e.kind === "failed_call") {
      out.push(
        `    ${e.errorClass} x${e.callIds.length}${e.errorMessage ? `: ${quote(e.errorMessage)}` : ""}${e.argNames.length ? ` (args: ${e.argNames.join(", ")})` : ""}`,
      );
    }
  }
  if (r.ranks.length > 0) {
    out.push("  routing rank of missed requests (before -> after):");
    const rows = r.ranks.map((x) => [`    ${rank(x.before)}`, "->", rank(x.after), quote(x.request)]);
    out.push(...table(["", "", "", ""], rows).slice(1));
  }
  if (r.refused.length > 0) {
    out.push("  refused:");
    for (const x of r.refused) out.push(`    - ${refusalLine(x)}`);
  }
  field("proposed by", `${r.proposer}, ${when(r.createdAt)}`);
  if (r.approvedBy) field("approved by", r.approvedBy);
  if (effect) field("effect", effectLine(effect));
  if (r.closedBy) field(r.status === "undone" ? "undone by" : "closed by", r.closedBy);
  if (r.undoneBecause) field("undone because", r.undoneBecause);
  if (r.status !== "proposed") field("updated", when(r.updatedAt));
  const versions =
    r.cardVersionAfter !== undefined ? `${r.cardVersionBefore} -> ${r.cardVersionAfter}` : `${r.cardVersionBefore}`;
  field("card version", versions);
  return out;
}

/**
 * The measured effect of each applied revision, one line each (tool, revision, verdict or FLAGGED,
 * counts only), for `review` and the demo.
 */
export function renderEffects(effects: readonly RevisionEffect[]): string[] {
  if (effects.length === 0) return ["no applied revision to measure"];
  return table(
    ["tool", "revision", "effect"],
    effects.map((e) => [e.tool, e.id, `${effectLine(e)}${e.undone ? "  (undone)" : ""}`]),
  );
}

/**
 * When an applied or undone revision reaches the model. Serving reads the partition's version once a
 * turn and, when another process changed it, reads the cards again and catches its routing up
 * (`ledger/versions.ts`), so an agent already running over the same ledger needs no restart.
 */
export function servedFromNextTurn(what = "it"): string {
  return `running agents serve ${what} from their next turn.`;
}

/** The `--partition` a follow-up command needs, or "" for the default partition. */
export function partitionArg(partition: string): string {
  if (partition === DEFAULT_PARTITION) return "";
  return ` --partition ${/^[\w:.@/+-]+$/.test(partition) ? partition : quote(partition)}`;
}

/** What `apply` says first: which revision went on which tool's card, where, and when agents serve it. */
export function appliedLine(revision: Revision, partition: string): string {
  return `applied revision ${revision.id} to ${revision.tool} (partition ${quote(partition)}); ${servedFromNextTurn()}`;
}

/** What `undo` says first: which revision was taken back, where, by whom, and when agents serve the card without it. */
export function undoneLine(revision: Revision, partition: string, by: string): string {
  return (
    `undid revision ${revision.id} of ${revision.tool} (partition ${quote(partition)}, by ${by}); the card is ` +
    `back to what it learned before, and ${servedFromNextTurn()}`
  );
}

/**
 * The revisions of a partition that wait for `apply` or `dismiss`, each tool with the revision ID
 * those commands take (one per tool at most: a tool with one waiting is not proposed another), and
 * the command with the partition it needs. Those a review before this one proposed are marked.
 */
export function renderWaiting(
  waiting: readonly Pick<Revision, "id" | "tool">[],
  partition: string,
  proposedNow: ReadonlySet<string> = new Set(),
): string[] {
  if (waiting.length === 0) return [];
  const where = partitionArg(partition);
  const rows = waiting.map((r) => [`  ${r.tool}`, r.id, proposedNow.has(r.id) ? "" : "(from an earlier review)"]);
  return [
    `waiting for apply: tool-lessons apply ID${where} --by NAME   (or dismiss ID${where})`,
    ...table(["  tool", "revision ID", ""], rows).slice(1),
  ];
}

/**
 * The result of `review`: revisions, refusals of tools without one, skipped tools, flags, the
 * measured effect of the applied revisions (when given), and every revision waiting for apply in
 * the partition with its ID (`waiting`: those stored, this review's and earlier ones).
 */
export function renderReview(
  review: Review,
  options: {
    dryRun: boolean;
    autoApply: boolean;
    effects?: readonly RevisionEffect[];
    waiting?: readonly Pick<Revision, "id" | "tool">[];
  },
): string[] {
  const verb = options.dryRun
    ? "would be proposed (dry run: nothing stored)"
    : options.autoApply
      ? "applied"
      : "proposed";
  const n = review.revisions.length;
  const served =
    options.autoApply && !options.dryRun && n > 0 ? `; ${servedFromNextTurn(n === 1 ? "it" : "them")}` : "";
  const out = [`partition ${quote(review.partition)}: ${plural(n, "revision")} ${verb}${served}`];
  for (const r of review.revisions) out.push("", ...renderRevision(r));
  const withRevision = new Set(review.revisions.map((r) => r.tool));
  const orphan = review.refused.filter((x) => !withRevision.has(x.tool));
  if (orphan.length > 0) {
    out.push("", "refused (no revision):");
    for (const x of orphan) out.push(`  ${x.tool}: ${refusalLine(x.refusal)}`);
  }
  if (review.guard) out.push("", ...renderGuard(review.guard));
  if (review.skipped.length > 0) {
    out.push("", "skipped:");
    out.push(
      ...table(
        ["  tool", "reason"],
        review.skipped.map((s) => [`  ${s.tool}`, s.reason.replace(/_/g, " ")]),
      ).slice(1),
    );
  }
  if (review.flags.length > 0) out.push("", "usage flags:", ...renderFlags(review.flags).map((l) => `  ${l}`));
  if (options.effects && options.effects.length > 0)
    out.push("", "applied lessons, measured effect:", ...renderEffects(options.effects).map((l) => `  ${l}`));
  const waiting = renderWaiting(
    options.waiting ?? [],
    review.partition,
    new Set(review.revisions.filter((r) => r.status === "proposed").map((r) => r.id)),
  );
  if (waiting.length > 0) out.push("", ...waiting);
  return out;
}

/**
 * What the guard on the whole let into routing and held back (`learn/review/guard.ts`): the
 * held-out slice's top-1 before and after, each tool held back and why, and the reason when
 * nothing new was let in.
 */
export function renderGuard(g: GuardVerdict): string[] {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const out: string[] = [];
  if (g.trials === 0) out.push(`guard: nothing new for routing to learn from${g.refused ? ` (${g.refused})` : ""}`);
  else if (g.refused) out.push(`guard: new wordings refused, not applied: ${g.refused}`);
  else
    out.push(
      `guard: new wordings of ${plural(g.kept.length, "tool")} let in (top-1 on ${plural(g.slice, "held-out request")}: ${pct(g.top1.before)} → ${pct(g.top1.after)}; with every new wording ${pct(g.tried)})`,
    );
  for (const h of g.held) {
    const why =
      h.reason === "near_duplicate"
        ? `took held-out requests of its near-duplicate ${quote(h.from ?? "")}`
        : `pulled ${plural(h.requests, "held-out request")} of other tools`;
    out.push(`  held back: ${h.tool} (${why})`);
  }
  for (const e of g.examples ?? []) out.push(`  examples held back: ${e.tool} (${e.reason})`);
  return out;
}

/** Usage flags as a table. */
export function renderFlags(flags: readonly UsageFlag[]): string[] {
  if (flags.length === 0) return ["no usage flags"];
  return table(
    ["tool", "flag", "offered", "calls", "routed turns"],
    flags.map((f) => [f.tool, f.flag, String(f.offeredTurns), String(f.calls), String(f.routedTurns)]),
    [2, 3, 4],
  );
}

/** Counts of a card's learned parts. */
export interface CardSummary {
  name: string;
  version: number;
  examples: { synthetic: number; learned: number; unknown: number };
  notes: number;
  notFor: number;
  exampleCall: boolean;
  /** Revisions waiting for apply or dismiss. */
  proposed: number;
  updatedAt: number;
}

/** Summarise a card for `cards`. */
export function summariseCard(card: ToolCard, proposed: number): CardSummary {
  const count = (source: string): number => card.learned.examples.filter((e) => e.source === source).length;
  return {
    name: card.name,
    version: card.version,
    examples: { synthetic: count("synthetic"), learned: count("learned"), unknown: count("unknown") },
    notes: card.learned.notes.length,
    notFor: card.learned.notFor.length,
    exampleCall: card.learned.exampleCall !== null,
    proposed,
    updatedAt: card.updatedAt,
  };
}

/** Cards as a table with learned counts. */
export function renderCards(partition: string, cards: readonly CardSummary[]): string[] {
  if (cards.length === 0) return [`no tools registered in partition ${quote(partition)}`];
  return [
    ...table(
      ["tool", "version", "learned examples", "synthetic", "notes", "not for", "example call", "proposed"],
      cards.map((c) => [
        c.name,
        String(c.version),
        String(c.examples.learned),
        String(c.examples.synthetic + c.examples.unknown),
        String(c.notes),
        String(c.notFor),
        c.exampleCall ? "yes" : "-",
        c.proposed > 0 ? String(c.proposed) : "-",
      ]),
      [1, 2, 3, 4, 5, 7],
    ),
    `${plural(cards.length, "tool")} in partition ${quote(partition)}`,
  ];
}

/** A card's learned parts in full (after apply or undo). */
export function renderLearned(card: ToolCard): string[] {
  const out = [`card ${card.name} (version ${card.version})`];
  const l = card.learned;
  const learned = l.examples.filter((e) => e.source === "learned");
  out.push(`  learned examples: ${learned.length ? "" : "none"}`);
  for (const e of learned) out.push(`    ${quote(e.text)}`);
  out.push(`  notes: ${l.notes.length ? "" : "none"}`);
  for (const n of l.notes) out.push(`    ${quote(n.text)}`);
  if (l.notFor.length > 0) {
    out.push("  Not for:");
    for (const n of l.notFor) out.push(`    ${quote(n.text)}`);
  }
  if (l.exampleCall) out.push(`  example call: ${l.exampleCall.text.replace(/^Example call:\s*/i, "")}`);
  return out.map((line) => line.trimEnd());
}

/** Settings, marking those that differ from the defaults. */
export function renderSettings(partition: string, settings: Settings, defaults: Settings): string[] {
  const rows = (Object.keys(settings) as (keyof Settings)[]).map((key) => [
    key,
    String(settings[key]),
    settings[key] === defaults[key] ? "" : `(default ${String(defaults[key])})`,
  ]);
  return [
    `settings of partition ${quote(partition)}:`,
    ...table(["setting", "value", ""], rows)
      .slice(1)
      .map((l) => `  ${l}`),
  ];
}

/** Tools with at least 10 eval requests whose recall@5 fell by more than `points` points. */
export function regressedTools(report: SimulationReport, points = 5): SimulationReport["perTool"] {
  return report.perTool.filter((t) => (t.before - t.after) * 100 > points);
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const delta = (x: number): string => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;

/** The short human table of `simulate`. */
export function renderSimulation(report: SimulationReport, seconds: number): string[] {
  const row = (label: string, s: RoutingScores): string[] => [
    label,
    pct(s.top1),
    pct(s["recall@5"]),
    pct(s["ndcg@5"]),
    String(s.n),
  ];
  const b = report.before;
  const a = report.after;
  const lines = table(
    ["", "top1", "recall@5", "ndcg@5", "n"],
    [
      row("before", b),
      row("after", a),
      [
        "change (points)",
        delta(a.top1 - b.top1),
        delta(a["recall@5"] - b["recall@5"]),
        delta(a["ndcg@5"] - b["ndcg@5"]),
        "",
      ],
    ],
    [1, 2, 3, 4],
  );
  const l = report.lessons;
  lines.push(
    "",
    `lessons: ${plural(l.examplesAdded, "example")} added (at most ${report.maxExamplesPerTool} on one tool), ` +
      `${plural(l.notForAdded, '"Not for" line')}, ${plural(l.withdrawn, "example")} withdrawn on apply`,
  );
  const fell = regressedTools(report);
  const names = fell.map((t) => `${t.tool} ${pct(t.before)} -> ${pct(t.after)}`);
  lines.push(
    `tools (>= 10 eval requests) whose recall@5 fell by more than 5 points: ${fell.length} of ${report.perTool.length}` +
      (names.length > 0 ? ` (${names.slice(0, 10).join(", ")}${names.length > 10 ? ", ..." : ""})` : ""),
    `k ${report.k}, ${plural(report.cycles, "cycle")}, ${seconds.toFixed(1)} s`,
  );
  return [...lines, ...renderNoToolLines(report)];
}

/** "No tool": the best score's and the fitted model's AUROC, precision and recall, and per kind. */
export function renderNoToolLines(
  report: Pick<SimulationReport, "noTool" | "abstainModel" | "noToolByKind">,
): string[] {
  const f = (x: NoToolFigures | undefined) =>
    x === undefined
      ? "not fitted (too few of either kind in the traffic)"
      : `AUROC ${Number.isNaN(x.auroc) ? "n/a" : x.auroc.toFixed(3)}, precision ${x.precision.toFixed(3)}, recall ${x.recall.toFixed(3)}`;
  // Without eval requests of both kinds there is nothing to separate: no lines.
  if (Number.isNaN(report.noTool.after.auroc)) return [];
  const lines = [
    `no tool, best score: before ${f(report.noTool.before)}; after ${f(report.noTool.after)}`,
    `no tool, fitted model: before ${f(report.abstainModel.before)}; after ${f(report.abstainModel.after)}`,
  ];
  for (const k of report.noToolByKind ?? []) {
    lines.push(`  kind ${k.kind} (${k.n}): best score ${f(k.score)}; model ${f(k.model)}`);
  }
  return lines;
}
