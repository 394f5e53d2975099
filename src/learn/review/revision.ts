/**
 * Build the revision: one tool's kept lessons as a proposed revision, with the evidence they
 * cite, routing's ranks before and after, and everything refused. Pure.
 */
import { timeOrderedId } from "../../ledger/keys.js";
import type { CallRecord, Evidence, Revision, TurnRecord } from "../../ledger/schema.js";
import { countTarget, effectTargets, storedCounts } from "../effect.js";
import type { Proposal } from "../types.js";
import type { ToolReviewEvidence } from "./evidence.js";
import type { VettedLessons } from "./vet-lessons.js";

/** A proposed revision of one tool from what the vet kept. */
export function buildRevision(input: {
  partition: string;
  evidence: Pick<ToolReviewEvidence, "card" | "detection">;
  vetted: VettedLessons;
  /** For each missed request, the tool's routing rank before and after (see `routingRanks`). */
  ranks: Revision["ranks"];
  /** The review window's turns: with the detection, the baseline its effect is measured against. */
  turns: readonly Pick<TurnRecord, "calls" | "servedBy" | "requestId" | "caller">[];
  /** The review window's call records: their callers, for the baseline's distinct callers. @default [] */
  calls?: readonly Pick<CallRecord, "id" | "tool" | "caller">[];
  /** The proposer's name. */
  proposer: string;
  /** When it is proposed (its id is time-ordered from it). */
  now: number;
}): Revision {
  const { card, detection } = input.evidence;
  const { kept, callExample, displaced, refused } = input.vetted;
  const evidence = citedEvidence(detection, kept);
  return {
    v: 1,
    id: timeOrderedId(input.now),
    partition: input.partition,
    tool: card.name,
    status: "proposed",
    notesAdded: kept.notes.map((n) => n.text),
    queriesAdded: kept.examples.map((e) => e.text),
    avoidAdded: kept.notFor.map((n) => ({ text: n.text, tool: n.tool })),
    callExample,
    queriesWithdrawn: [],
    displaced: [],
    queriesDisplaced: displaced,
    evidence,
    baseline: effectTargets(evidence).map((target) => ({
      target,
      before: storedCounts(countTarget(target, detection, input.turns, input.calls)),
    })),
    ranks: input.ranks,
    refused,
    proposer: input.proposer,
    cardVersionBefore: card.version,
    reviewedThrough: detection.lastCallId,
    createdAt: input.now,
    updatedAt: input.now,
  };
}

/** The evidence the kept items rest on: cited failures, misses and confusions only. */
export function citedEvidence(td: ToolReviewEvidence["detection"], kept: Proposal): Evidence[] {
  const calls = new Set(kept.notes.flatMap((n) => n.cites));
  const missed = new Set(kept.examples.flatMap((e) => e.cites));
  const confused = new Set(kept.notFor.flatMap((n) => n.cites));
  const out: Evidence[] = [];
  for (const f of td.failures) {
    const cited = f.callIds.filter((id) => calls.has(id));
    if (cited.length > 0) {
      out.push({
        kind: "failed_call",
        callIds: cited,
        errorClass: f.errorClass,
        errorMessage: f.errorMessage,
        argNames: f.argNames,
      });
    }
  }
  for (const m of td.misses) {
    if (missed.has(m.requestId))
      out.push({ kind: "missed_request", requestId: m.requestId, request: m.request, how: m.how });
  }
  for (const c of td.confusions) {
    if (confused.has(c.requestId)) {
      out.push({
        kind: "confused_request",
        requestId: c.requestId,
        request: c.request,
        servedBy: c.servedBy,
        how: c.how,
      });
    }
  }
  return out;
}
