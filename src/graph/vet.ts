/**
 * vet: what synthesize proposed, through the review's vet stage (`learn/review/vet-lessons.ts`):
 * each kept item becomes a proposed revision stored with what was refused and why (the review's
 * own store), applied at once under `autoApply` or left for an operator. The user's edicts of
 * the new turn are vetted as rule text and stored at once as critical rules of the caller's
 * partition, so this very turn's block carries them.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { AUTO_APPROVER } from "../learn/manager.js";
import { applyRevision } from "../learn/review/apply.js";
import { routingRanks } from "../learn/review/evidence.js";
import { buildRevision } from "../learn/review/revision.js";
import { storeReview } from "../learn/review/store.js";
import { keptNothing, valueCheck, vetLessons } from "../learn/review/vet-lessons.js";
import type { Revision } from "../ledger/schema.js";
import { latestHumanTurn } from "../record/request.js";
import { recordEdicts } from "../rules/store.js";
import { finishedTurns } from "./classify.js";
import { DEFAULT_LESSONS_GRAPH, type LessonsRuntime } from "./context.js";
import { emptyReport } from "./state.js";
import { type LearnState, type SynthesizedWork, turnKey } from "./synthesize.js";

/** The vet node. */
export function createVetNode(runtime: LessonsRuntime) {
  const tools = runtime.options.tools.map((t) => t.name);
  const autoApply = runtime.options.autoApply ?? DEFAULT_LESSONS_GRAPH.autoApply;
  return async function vet(state: LearnState, config?: RunnableConfig) {
    const signals = state.lessonSignals ?? [];
    const key = turnKey(state, config);
    const work = runtime.handoff.get(key) as SynthesizedWork | undefined;
    runtime.handoff.delete(key);
    const edicts = signals.some((s) => s.kind === "edict");
    if (!work && !edicts) return {};
    const { ledger, partition } = runtime.context(config);
    if (!ledger) return {};
    const report = { ...(state.lessonsReport ?? emptyReport()) };
    report.refused = [...report.refused];
    try {
      if (edicts) {
        const turn = latestHumanTurn(state.messages);
        // An edict that names no tool ("don't do that again") binds the first tool the thread's last turn ran.
        const calledTools = (finishedTurns(state.messages).at(-1)?.calls ?? []).map((c) => c.tool);
        const recorded = await recordEdicts(ledger, { partition, text: turn?.text ?? "", tools, calledTools }, config);
        report.rules = recorded.stored.map((r) => r.id);
        for (const r of recorded.refused) report.refused.push({ tool: "*", reason: r.refused });
      }
      if (work && work.partition === partition) {
        const revisions = await vetAll(work, runtime.proposer.name, report.refused);
        await storeReview(ledger, partition, revisions.revisions, revisions.marks);
        report.proposed = revisions.revisions.map((r) => r.id);
        if (autoApply) {
          for (const r of revisions.revisions) {
            try {
              const applied = await applyRevision(ledger, runtime.index(ledger), r.id, {
                partition,
                approvedBy: AUTO_APPROVER,
                turns: work.window.turns,
              });
              report.applied.push(applied.id);
            } catch (error) {
              runtime.report("apply", "applying a vetted revision failed; it waits for an operator.", error);
            }
          }
        }
      }
    } catch (error) {
      runtime.report("vet", "vetting or storing this turn's lessons failed; the turn goes on.", error);
      report.ledgerFailed = true;
    }
    return { lessonsReport: report };
  };
}

/** Vet each proposal of the work; the revisions to store and the review marks earned. */
async function vetAll(
  work: SynthesizedWork,
  proposer: string,
  refused: { tool: string; reason: string }[],
): Promise<{ revisions: Revision[]; marks: Map<string, string> }> {
  const containsValue = valueCheck(work.window);
  const revisions: Revision[] = [];
  const marks = new Map<string, string>();
  for (const { evidence, proposed } of work.proposals) {
    if (proposed.reviewedThrough !== undefined) marks.set(evidence.card.name, proposed.reviewedThrough);
    const vetted = vetLessons({ window: work.window, evidence, proposal: proposed.proposal, containsValue });
    for (const r of vetted.refused) refused.push({ tool: evidence.card.name, reason: r.reason });
    if (keptNothing(vetted)) continue;
    const ranks = await routingRanks(
      work.routing,
      evidence,
      vetted.kept.examples.map((e) => e.text),
      vetted.displaced,
    );
    revisions.push(buildRevision({ partition: work.partition, evidence, vetted, ranks, proposer, now: Date.now() }));
  }
  return { revisions, marks };
}
