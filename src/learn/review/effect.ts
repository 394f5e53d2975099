/**
 * The effect check: measure applied revisions and, under `undoFlagged`, undo those whose effect is
 * nil or negative. For each applied revision it reads the records written since it was applied
 * (until the tool's next applied revision), within the bounds the review's gathering reads
 * (`gatherRecords`: the newest `reviewTurns` turns and routes, the tool's calls since the oldest
 * of them), detects there as a review does, counts what the revision answered, and judges it
 * against the baseline its review stored (`learn/effect.ts`). The operator's
 * `LessonManager.effects()` and the graph's learn node (`graph/learn.ts`) both run it.
 */
import type { Ledger } from "../../ledger/ledger.js";
import { idFloorAt } from "../../ledger/keys.js";
import type { Revision } from "../../ledger/schema.js";
import type { ToolIndex } from "../../routing/tool-index.js";
import { parseSettings, type SettingsInput } from "../../settings.js";
import { detect } from "../detect.js";
import { countTarget, judgeRevision, judgeTarget, type RevisionEffect } from "../effect.js";
import { gatherRecords } from "./gather.js";
import { undoNewest } from "./undo.js";

/** Options of {@link measureEffects}. */
export interface MeasureEffectsOptions {
  /**
   * Only these tools' revisions.
   * @default every tool with an applied revision
   */
  tools?: readonly string[];
  /**
   * Settings for this check only, over the partition's stored ones: `reviewTurns` and
   * `maxCallsPerTool` bound what is read after each revision, as they bound a review's window.
   * @default {} (the stored settings)
   */
  config?: SettingsInput;
}

/** Options of {@link checkEffects}: what to measure, and whether to undo what is flagged. */
export interface EffectCheckOptions extends MeasureEffectsOptions {
  /**
   * Undo each flagged revision (no effect, or a negative one) that is its tool's newest applied
   * one, the flag recorded as its `undoneBecause`. The graph, `createToolLessonsAgent` and
   * `LessonManager.effects` take it under this one name.
   * @default false (flagged for the operator only)
   */
  undoFlagged?: boolean;
  /**
   * Who an automatic undo is recorded as (`closedBy`).
   * @default "tool-lessons"
   */
  by?: string;
}

/** The defaults of {@link EffectCheckOptions} (`tools` has none: every tool). */
export const DEFAULT_EFFECT_CHECK: Readonly<Required<Omit<EffectCheckOptions, "tools">>> = Object.freeze({
  config: Object.freeze({}),
  undoFlagged: false,
  by: "tool-lessons",
});

/**
 * The measured effect of every applied revision of a partition that carries a baseline (revisions
 * stored before baselines existed are skipped), newest first. Reads records only; writes nothing.
 * @throws InvalidInput when `config` holds an unknown or bad setting.
 */
export async function measureEffects(
  ledger: Ledger,
  partition: string,
  options: MeasureEffectsOptions = {},
): Promise<RevisionEffect[]> {
  const [cards, revisions, stored] = await Promise.all([
    ledger.listCards(partition),
    ledger.listRevisions(partition),
    ledger.getSettings(partition),
  ]);
  const settings = parseSettings(options.config ?? DEFAULT_EFFECT_CHECK.config, stored);
  const names = cards.map((c) => c.name);
  const wanted = options.tools ? new Set(options.tools) : undefined;
  const applied = revisions.filter((r) => r.status === "applied" && (!wanted || wanted.has(r.tool)));
  const out: RevisionEffect[] = [];
  for (const revision of applied) {
    if (!revision.baseline || revision.baseline.length === 0) continue;
    const until = nextAppliedAt(revisions, revision);
    const inSpan = (r: { at: number }) => r.at >= revision.updatedAt && r.at < until;
    const neighbours = revision.baseline.flatMap((b) => (b.target.kind === "confusion" ? [b.target.neighbour] : []));
    const read = await gatherRecords(ledger, partition, settings, {
      after: idFloorAt(revision.updatedAt),
      tools: [...new Set([revision.tool, ...neighbours])],
    });
    const since = {
      turns: read.turns.filter(inSpan),
      routes: read.routes.filter(inSpan),
      calls: read.calls.filter(inSpan),
    };
    // Every call read after it counts, not only detection's usual newest `maxCallsPerTool`.
    const maxCallsPerTool = Math.max(1, since.calls.length);
    const detection = detect({ ...since, tools: names, settings: { ...settings, maxCallsPerTool } }).tools.get(
      revision.tool,
    );
    if (!detection) continue;
    const targets = revision.baseline.map((b) =>
      judgeTarget(b, countTarget(b.target, detection, since.turns, since.calls)),
    );
    out.push(judgeRevision(revision, targets));
  }
  return out;
}

/**
 * Measure (see {@link measureEffects}) and, under `undoFlagged`, undo each flagged revision that
 * is its tool's newest applied one (`review/undo.ts`), the flag recorded as `undoneBecause` and
 * `closedBy` set to `by`; such an effect comes back with `undone: true`.
 * @throws NotFound, RevisionConflict from an undo (the card was edited since the revision)
 */
export async function checkEffects(
  deps: { ledger: Ledger; index: Pick<ToolIndex, "upsertCards"> },
  partition: string,
  options: EffectCheckOptions = {},
): Promise<RevisionEffect[]> {
  const effects = await measureEffects(deps.ledger, partition, options);
  if (!(options.undoFlagged ?? DEFAULT_EFFECT_CHECK.undoFlagged)) return effects;
  const by = options.by ?? DEFAULT_EFFECT_CHECK.by;
  const out: RevisionEffect[] = [];
  const undone = new Set<string>();
  for (const effect of effects) {
    if (effect.flag === undefined || undone.has(effect.tool)) {
      out.push(effect);
      continue;
    }
    const [newest] = await deps.ledger.listRevisions(partition, { tool: effect.tool, status: "applied" });
    if (newest?.id !== effect.id) {
      out.push(effect);
      continue;
    }
    await undoNewest(deps.ledger, deps.index, partition, effect.tool, { by, because: effect.flag });
    undone.add(effect.tool);
    out.push({ ...effect, undone: true });
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
