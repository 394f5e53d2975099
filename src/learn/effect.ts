/**
 * Whether an applied lesson helped: the evidence a revision answered (its tool's refused calls of
 * one error class, its misses, its confusions with one neighbour) counted in the window the
 * review read (the baseline, stored on the revision) and again in the records after it was
 * applied, and the two rates compared. The target and count types are the ledger's
 * (`EffectTargetSchema`, stored on the revision as its `baseline`). Pure: the counting and the judgement read records, never a
 * store. Nothing here holds a value or a request text: counts only.
 */
import type { EffectBaseline, EffectCounts, EffectTarget, Evidence, TurnRecord } from "../ledger/schema.js";
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

/** Count a target in one window: the tool's detection there and the window's turns. */
export function countTarget(
  target: EffectTarget,
  detection: Pick<ToolDetection, "tool" | "calls" | "failures" | "misses" | "confusions">,
  turns: readonly Pick<TurnRecord, "calls" | "servedBy">[],
): EffectCounts {
  if (target.kind === "failure") {
    const events = detection.failures
      .filter((f) => f.errorClass === target.errorClass)
      .reduce((n, f) => n + f.callIds.length, 0);
    return { opportunities: detection.calls, events };
  }
  if (target.kind === "miss") {
    const served = turns.filter((t) => t.servedBy === detection.tool).length;
    const events = detection.misses.length;
    return { opportunities: served + events, events };
  }
  const events = detection.confusions.filter((c) => c.servedBy === target.neighbour).length;
  const involved = turns.filter((t) => {
    const tools = turnTools(t);
    return tools.has(detection.tool) || tools.has(target.neighbour);
  }).length;
  return { opportunities: Math.max(involved, events), events };
}

/**
 * Judge one target: a two-proportion z-test of the rate before against the rate after, once each
 * side has {@link MIN_EFFECT_OPPORTUNITIES}. A fall past chance is `helped`, a rise `hurt`.
 */
export function judgeTarget(baseline: EffectBaseline, after: EffectCounts): TargetEffect {
  const { before } = baseline;
  if (before.opportunities < MIN_EFFECT_OPPORTUNITIES || after.opportunities < MIN_EFFECT_OPPORTUNITIES) {
    return { ...baseline, after, change: null, verdict: "not_enough_data" };
  }
  const p1 = before.events / before.opportunities;
  const p2 = after.events / after.opportunities;
  const pooled = (before.events + after.events) / (before.opportunities + after.opportunities);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / before.opportunities + 1 / after.opportunities));
  const z = se === 0 ? 0 : (p1 - p2) / se;
  const verdict: EffectVerdict = z >= Z_CRITICAL ? "helped" : z <= -Z_CRITICAL ? "hurt" : "no_effect";
  return { ...baseline, after, change: p2 - p1, verdict };
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
