/**
 * The stages of a review, each a function over plain data, composed once by {@link runReview}
 * (`run.ts`), the run `LessonManager.review()` and the graph's learn node both make:
 *
 * gather ({@link gatherWindow}, the only ledger read) → detect (`learn/detect.ts`) → select
 * ({@link selectDue}) → evidence ({@link reviewRouting}, {@link buildEvidence}: routing "what
 * if" against the index) → propose ({@link proposeLessons}) → vet ({@link vetLessons}) → revision
 * ({@link routingRanks}, {@link buildRevision}) → store ({@link storeReview}) / apply
 * ({@link applyRevision}); before wordings or examples change routing, the guard on the whole
 * ({@link guardWordings}, {@link guardExamples}) replays a held-out slice. {@link EvidenceTally} says when a graph should run one, with no read.
 * After apply: {@link checkEffects} measures applied revisions (reading within the bounds of
 * {@link gatherRecords}) and undoes flagged ones under `undoFlagged` ({@link undoNewest}).
 */
export { applyRevision, type ApplyOptions, DEFAULT_APPLY_OPTIONS } from "./apply.js";
export {
  buildEvidence,
  type CoveredMissRecord,
  type ReviewRouting,
  reviewRouting,
  routingRanks,
  type ToolReviewEvidence,
} from "./evidence.js";
export {
  DEFAULT_GATHER_OPTIONS,
  type GatherOptions,
  gatherRecords,
  gatherWindow,
  type ReviewWindow,
  type WindowRecords,
} from "./gather.js";
export {
  checkEffects,
  DEFAULT_EFFECT_CHECK,
  type EffectCheckOptions,
  type MeasureEffectsOptions,
  measureEffects,
} from "./effect.js";
export { type UndoBy, undoNewest } from "./undo.js";
export {
  cardProbes,
  DEFAULT_GUARD,
  guardExamples,
  type GuardOptions,
  type GuardVerdict,
  guardWordings,
  heldOutSlice,
  judgeSlice,
  storedVerdict,
} from "./guard.js";
export { type Proposed, proposeLessons } from "./propose.js";
export { buildRevision, citedEvidence } from "./revision.js";
export { type DueTool, type SelectInput, type Selection, selectDue, type SkipReason } from "./select.js";
export { storeReview } from "./store.js";
export { keptNothing, valueCheck, type VettedLessons, vetLessons } from "./vet-lessons.js";
export {
  AUTO_APPROVER,
  DEFAULT_RUN_REVIEW_OPTIONS,
  type Review,
  type ReviewDeps,
  type ReviewScope,
  runReview,
  type RunReviewOptions,
} from "./run.js";
export {
  DEFAULT_EVIDENCE_TALLY,
  type DueKind,
  type DueTally,
  EvidenceTally,
  type EvidenceTallyOptions,
  type ToolTally,
} from "./tally.js";
