/**
 * The stages of a review, each a function over plain data that `LessonManager.review` composes
 * and a graph node can call on one thread's new records:
 *
 * gather ({@link gatherWindow}, the only ledger read) → detect (`learn/detect.ts`) → select
 * ({@link selectDue}) → evidence ({@link reviewRouting}, {@link buildEvidence}: routing "what
 * if" against the index) → propose ({@link proposeLessons}) → vet ({@link vetLessons}) → revision
 * ({@link routingRanks}, {@link buildRevision}) → store ({@link storeReview}) / apply
 * ({@link applyRevision}).
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
export { DEFAULT_GATHER_OPTIONS, type GatherOptions, gatherWindow, type ReviewWindow } from "./gather.js";
export { type Proposed, proposeLessons } from "./propose.js";
export { buildRevision, citedEvidence } from "./revision.js";
export { type DueTool, type SelectInput, type Selection, selectDue, type SkipReason } from "./select.js";
export { storeReview } from "./store.js";
export { keptNothing, valueCheck, type VettedLessons, vetLessons } from "./vet-lessons.js";
