/**
 * Whether an applied lesson helped: the evidence a revision answered (its tool's refused calls of
 * one error class, its misses, its confusions with one neighbour) counted in the window the
 * review read (the baseline, stored on the revision) and again in the records after it was
 * applied, and the two rates compared. The target and count types are the ledger's
 * (`EffectTargetSchema`, stored on the revision as its `baseline`). Pure: the counting and the judgement read records, never a
 * store. Nothing here holds a value or a request text: counts only.
 */
import type { CallRecord, EffectBaseline, EffectCounts, EffectTarget, Evidence, TurnRecord } from "../ledger/schema.js";
import type { ToolDetection } from "./detect.js";

/** The judgement of one target, or of a whole revision. */
export type EffectVerdict = "helped" | "no_effect" | "hurt" | "not_enough_data";

/** One target judged. */
export interface TargetEffect extends EffectBaseline {
  after: EffectCounts;
  /** The rate after less the rate before (negative: fewer failures, misses or confusions); null without data. */
  change: number | null;
  verdict: EffectVerdict;
}

/** An applied revision's measured effect. */
export interface RevisionEffect {
  id: string;
  tool: string;
  partition: string;
  /** `helped` when some target fell and none rose; `hurt` when one rose; `no_effect` when none moved past chance. */
  verdict: EffectVerdict;
  targets: TargetEffect[];
  /** Set for `no_effect` and `hurt`: what the operator is told, and the reason an automatic undo records. */
  flag?: string;
  /** Set when the effect check undid it (`undoFlagged`). */
  undone?: true;
}

/**
 * Least opportunities on each side before a target is judged: fewer, and one request more or less
 * moves the rate past any threshold.
 */
export const MIN_EFFECT_OPPORTUNITIES = 20;

/** The z-score past which a change of rate is more than chance (two-sided, about 95%). */
const Z_CRITICAL = 1.96;

/**
 * Least distinct callers on each side before a target is judged, in a partition several callers
 * share (records of more than one caller): fewer, and one caller's crafted calls could decide it.
 */
export const MIN_EFFECT_CALLERS = 3;

/** Counts with each caller's share (records with no caller are one caller, `""`); never stored. */
export interface CallerCounts extends EffectCounts {
  byCaller?: EffectCounts[];
}

/** Per caller: what a record counts for. Records of no known caller are one caller. */
class ByCaller {
  private readonly map = new Map<string, { opportunities: number; events: number }>();
  add(caller: string | undefined, opportunities: number, events: number): void {
    const key = caller ?? "";
    const c = this.map.get(key) ?? { opportunities: 0, events: 0 };
    c.opportunities += opportunities;
    c.events += events;
    this.map.set(key, c);
  }
  /** The totals (given), with distinct callers, the heaviest caller and every caller's counts. */
  counts(total: EffectCounts): CallerCounts {
    const byCaller = [...this.map.values()];
    const heaviest = heaviestOf(total, byCaller);
    return { ...total, callers: byCaller.length, ...(heaviest ? { heaviest } : {}), byCaller };
  }
}

/** The caller whose records, taken out, move the rate most (ties: most events). */
function heaviestOf(total: EffectCounts, byCaller: readonly EffectCounts[]): EffectCounts | undefined {
  let best: { c: EffectCounts; moved: number } | undefined;
  for (const c of byCaller) {
    const moved = Math.abs(rateOf(total) - rateOf(minus(total, c)));
    if (!best || moved > best.moved || (moved === best.moved && c.events > best.c.events)) best = { c, moved };
  }
  return best ? { opportunities: best.c.opportunities, events: best.c.events } : undefined;
}

function rateOf(c: EffectCounts): number {
  return c.opportunities > 0 ? c.events / c.opportunities : 0;
}

function minus(a: EffectCounts, b: EffectCounts): EffectCounts {
  return {
    opportunities: Math.max(0, a.opportunities - b.opportunities),
    events: Math.max(0, Math.min(a.events - b.events, a.opportunities - b.opportunities)),
  };
}

/** What a stored baseline keeps of the counts: no per-caller list. */
export function storedCounts(c: CallerCounts): EffectCounts {
  const { byCaller: _, ...kept } = c;
  return kept;
}

/** The targets a revision's evidence answers, once each, in the evidence's order. */
export function effectTargets(evidence: readonly Evidence[]): EffectTarget[] {
  const out = new Map<string, EffectTarget>();
  for (const e of evidence) {
    const target: EffectTarget =
      e.kind === "failed_call"
        ? { kind: "failure", errorClass: e.errorClass }
        : e.kind === "missed_request"
          ? { kind: "miss" }
          : { kind: "confusion", neighbour: e.servedBy };
    out.set(targetKey(target), target);
  }
  return [...out.values()];
}

/** A target as a short label (`failure:validation`, `miss`, `confusion:lookup_order`). */
export function targetKey(target: EffectTarget): string {
  if (target.kind === "failure") return `failure:${target.errorClass}`;
  if (target.kind === "confusion") return `confusion:${target.neighbour}`;
  return "miss";
}

/** The tools that took part in a turn: those it called and the one that served it. */
function turnTools(turn: Pick<TurnRecord, "calls" | "servedBy">): Set<string> {
  const tools = new Set(turn.calls.map((c) => c.tool));
  if (turn.servedBy !== undefined) tools.add(turn.servedBy);
  return tools;
}

/**
 * Count a target in one window: the tool's detection there and the window's turns (and, to tell
 * callers apart, its call records: the callers are read from them and from the turns).
 */
export function countTarget(
  target: EffectTarget,
  detection: Pick<ToolDetection, "tool" | "calls" | "failures" | "misses" | "confusions">,
  turns: readonly Pick<TurnRecord, "calls" | "servedBy" | "requestId" | "caller">[],
  calls: readonly Pick<CallRecord, "id" | "tool" | "caller">[] = [],
): CallerCounts {
  const by = new ByCaller();
  const turnCaller = new Map(turns.map((t) => [t.requestId, t.caller]));
  if (target.kind === "failure") {
    const failed = detection.failures.filter((f) => f.errorClass === target.errorClass).flatMap((f) => f.callIds);
    const events = failed.length;
    const failedSet = new Set(failed);
    for (const c of calls) if (c.tool === detection.tool) by.add(c.caller, 1, Number(failedSet.has(c.id)));
    return by.counts({ opportunities: detection.calls, events });
  }
  if (target.kind === "miss") {
    const servedTurns = turns.filter((t) => t.servedBy === detection.tool);
    const events = detection.misses.length;
    for (const t of servedTurns) by.add(t.caller, 1, 0);
    for (const m of detection.misses) by.add(turnCaller.get(m.requestId), 1, 1);
    return by.counts({ opportunities: servedTurns.length + events, events });
  }
  const confused = detection.confusions.filter((c) => c.servedBy === target.neighbour);
  const events = confused.length;
  const involvedTurns = turns.filter((t) => {
    const tools = turnTools(t);
    return tools.has(detection.tool) || tools.has(target.neighbour);
  });
  for (const t of involvedTurns) by.add(t.caller, 1, 0);
  for (const c of confused) by.add(turnCaller.get(c.requestId), 0, 1);
  return by.counts({ opportunities: Math.max(involvedTurns.length, events), events });
}

/**
 * Judge one target: a two-proportion z-test of the rate before against the rate after, once each
 * side has {@link MIN_EFFECT_OPPORTUNITIES}. A fall past chance is `helped`, a rise `hurt`. Where
 * the records come from more than one caller (a shared partition), each side also needs
 * {@link MIN_EFFECT_CALLERS} distinct callers, and the verdict must stay the same with any one
 * caller's records after (and the heaviest caller's before) taken out: one caller never decides it.
 */
export function judgeTarget(baseline: EffectBaseline, after: CallerCounts): TargetEffect {
  const { before } = baseline;
  const kept = storedCounts(after);
  const notEnough = (): TargetEffect => ({ ...baseline, after: kept, change: null, verdict: "not_enough_data" });
  if (before.opportunities < MIN_EFFECT_OPPORTUNITIES || after.opportunities < MIN_EFFECT_OPPORTUNITIES)
    return notEnough();
  const verdict = zVerdict(before, after);
  const shared = (before.callers ?? 1) > 1 || (after.callers ?? 1) > 1;
  if (shared) {
    if ((before.callers ?? MIN_EFFECT_CALLERS) < MIN_EFFECT_CALLERS || (after.callers ?? 0) < MIN_EFFECT_CALLERS)
      return notEnough();
    for (const one of after.byCaller ?? []) if (zVerdict(before, minus(after, one)) !== verdict) return notEnough();
    if (before.heaviest && zVerdict(minus(before, before.heaviest), after) !== verdict) return notEnough();
  }
  return { ...baseline, after: kept, change: rateOf(after) - rateOf(before), verdict };
}

/** The z-test's verdict of two counts (see {@link judgeTarget}). */
function zVerdict(before: EffectCounts, after: EffectCounts): EffectVerdict {
  if (before.opportunities === 0 || after.opportunities === 0) return "not_enough_data";
  const p1 = before.events / before.opportunities;
  const p2 = after.events / after.opportunities;
  const pooled = (before.events + after.events) / (before.opportunities + after.opportunities);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / before.opportunities + 1 / after.opportunities));
  const z = se === 0 ? 0 : (p1 - p2) / se;
  return z >= Z_CRITICAL ? "helped" : z <= -Z_CRITICAL ? "hurt" : "no_effect";
}

/** A revision's verdict from its targets' (see {@link RevisionEffect.verdict}), and the flag it raises. */
export function judgeRevision(
  revision: { id: string; tool: string; partition: string },
  targets: TargetEffect[],
): RevisionEffect {
  const judged = targets.filter((t) => t.verdict !== "not_enough_data");
  const verdict: EffectVerdict =
    judged.length === 0
      ? "not_enough_data"
      : judged.some((t) => t.verdict === "hurt")
        ? "hurt"
        : judged.some((t) => t.verdict === "helped")
          ? "helped"
          : "no_effect";
  const rates = judged.map((t) => `${targetKey(t.target)} ${rate(t.before)} → ${rate(t.after)}`).join("; ");
  const flag =
    verdict === "hurt"
      ? `what it answered got worse after it was applied (${rates})`
      : verdict === "no_effect"
        ? `no measured effect on what it answered (${rates})`
        : undefined;
  return {
    id: revision.id,
    tool: revision.tool,
    partition: revision.partition,
    verdict,
    targets,
    ...(flag ? { flag } : {}),
  };
}

function rate(c: EffectCounts): string {
  return `${c.events}/${c.opportunities}`;
}
