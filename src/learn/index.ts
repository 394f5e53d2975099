/**
 * `tool-lessons/learn`: where a lesson is decided. Registering tools as cards, `LessonManager`
 * (the operator's review, apply, dismiss, undo, history, effects), the proposers (code only, or a chat
 * model) and the shapes they exchange, and what a lesson must satisfy to be kept.
 * `registerTools` and `LessonManager` are at the root too.
 */
export { registerTools, type RegisterResult, type RegisterToolsOptions } from "./register.js";
export {
  LessonManager,
  type LessonManagerOptions,
  type Review,
  type ReviewOptions,
  type SummarizeToolsOptions,
  type ToolMemoryReport,
} from "./manager.js";
export { type EffectVerdict, MIN_EFFECT_OPPORTUNITIES, type RevisionEffect, type TargetEffect } from "./effect.js";
export { type EffectCheckOptions, type MeasureEffectsOptions } from "./review/effect.js";
export { DeterministicProposer, type DeterministicProposerOptions } from "./deterministic-proposer.js";
export { ModelProposer, type ModelProposerOptions } from "./model-proposer.js";
export { ModelReplyRejected } from "../errors.js";
export type {
  NeighbourTool,
  Proposal,
  ProposalRejection,
  ProposalRejectionReason,
  ProposedExample,
  ProposedNote,
  ProposedNotFor,
  Proposer,
  ToolEvidence,
} from "./proposer.js";
export type { AimedPattern, VetOptions } from "./vet.js";
export { type ChosenSet, type ExampleObjective, type ExampleSlots } from "./what-if.js";
