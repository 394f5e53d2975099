/**
 * Measure applied revisions: read the records written since each was applied (until the tool's
 * next applied revision, at most `window` of each kind), detect there as a review does, count
 * what the revision answered, and judge it against the baseline its review stored
 * (`learn/effect.ts`). With `undo`, a revision whose effect is nil or negative is undone, the
 * reason recorded on it.
 */
import { idFloorAt } from "../../ledger/keys.js";
import type { Ledger } from "../../ledger/ledger.js";
import type { Revision } from "../../ledger/schema.js";
import { detect } from "../detect.js";
import { countTarget, judgeRevision, judgeTarget, type RevisionEffect } from "../effect.js";

/** Options of {@link measureEffects}. */
export interface MeasureEffectsOptions {
  /**
   * Only these tools' revisions.
   * @default every tool with an applied revision
   */
  tools?: readonly string[];
  /**
   * Most records of each kind (calls of the tool, turns, routes) read after a revision was applied.
   * @default 500
   */
  window?: number;
}

/** The defaults of {@link MeasureEffectsOptions}. */
export const DEFAULT_MEASURE_EFFECTS_OPTIONS: Readonly<Required<Omit<MeasureEffectsOptions, "tools">>> = Object.freeze({
  window: 500,
});

/**
 * The measured effect of every applied revision of a partition that carries a baseline (revisions
 * stored before baselines existed are skipped), newest first. Reads records only; writes nothing.
 */
export async function measureEffects(
  ledger: Ledger,
  partition: string,
  options: MeasureEffectsOptions = {},
): Promise<RevisionEffect[]> {
  const window = options.window ?? DEFAULT_MEASURE_EFFECTS_OPTIONS.window;
  const [cards, revisions] = await Promise.all([ledger.listCards(partition), ledger.listRevisions(partition)]);
  const names = cards.map((c) => c.name);
  const wanted = options.tools ? new Set(options.tools) : undefined;
  const applied = revisions.filter((r) => r.status === "applied" && (!wanted || wanted.has(r.tool)));
  const out: RevisionEffect[] = [];
  for (const revision of applied) {
    if (!revision.baseline || revision.baseline.length === 0) continue;
    const until = nextAppliedAt(revisions, revision);
    const after = { after: idFloorAt(revision.updatedAt), limit: window };
    const inSpan = (r: { at: number }) => r.at >= revision.updatedAt && r.at < until;
    const neighbours = revision.baseline.flatMap((b) => (b.target.kind === "confusion" ? [b.target.neighbour] : []));
    const [turns, routes, ...calls] = await Promise.all([
      ledger.listTurns(partition, after),
      ledger.listRoutes(partition, after),
      ...[revision.tool, ...neighbours].map((tool) => ledger.listCalls(partition, { ...after, tool })),
    ]);
    const inWindow = { turns: turns.filter(inSpan), routes: routes.filter(inSpan), calls: calls.flat().filter(inSpan) };
    // Every call read after it counts, not only detection's usual newest `maxCallsPerTool`.
    const detection = detect({ ...inWindow, tools: names, settings: { maxCallsPerTool: window } }).tools.get(
      revision.tool,
    );
    if (!detection) continue;
    const targets = revision.baseline.map((b) => judgeTarget(b, countTarget(b.target, detection, inWindow.turns)));
    out.push(judgeRevision(revision, targets));
  }
  return out;
}

/** When the tool's next applied revision (on the card this one left, or later) was applied, or never. */
function nextAppliedAt(revisions: readonly Revision[], revision: Revision): number {
  let next = Number.POSITIVE_INFINITY;
  for (const r of revisions) {
    if (r.tool !== revision.tool || r.id === revision.id || r.status !== "applied") continue;
    if (r.cardVersionBefore >= (revision.cardVersionAfter ?? Number.POSITIVE_INFINITY))
      next = Math.min(next, r.updatedAt);
  }
  return next;
}
