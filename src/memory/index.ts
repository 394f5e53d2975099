/**
 * Tool memory: each call evaluated (a model's rubric or the deterministic evaluator), a sliding
 * window of evaluated calls per tool and partition, statistics by code, and guidelines
 * synthesized from the recent window and vetted. The `tool-lessons/memory` entry point.
 */
export {
  type EvaluationReport,
  type MemoryPassOptions,
  type SummarizeOptions,
  type SummaryReport,
  type SummaryStatus,
  type ToolEvaluationReport,
  ToolMemory,
  type ToolMemoryOptions,
  type ToolMemoryView,
  type ToolSummaryReport,
} from "./tool-memory.js";
export { DeterministicEvaluator, type DeterministicEvaluatorOptions } from "./deterministic-evaluator.js";
export { ModelEvaluator, type ModelEvaluatorOptions } from "./model-evaluator.js";
export { DeterministicSynthesizer } from "./synthesis.js";
export { ModelSynthesizer, type ModelSynthesizerOptions } from "./model-synthesizer.js";
export { type GuidelineVetContext, vetGuideline } from "./vet-guideline.js";
export { toolStats } from "./stats.js";
export type {
  CallEvaluation,
  CallEvaluator,
  EvaluationInput,
  EvaluationOutcome,
  GuidelineDraft,
  GuidelineSynthesizer,
  SynthesisFailure,
  SynthesisInput,
  SynthesisOutcome,
  UnevaluatedReason,
} from "./types.js";
export type {
  EvaluatedCall,
  EvaluationScore,
  EvaluationSignal,
  Guideline,
  GuidelineRefusal,
  GuidelineRefusalReason,
  ToolMemoryState,
  ToolStats,
} from "../ledger/schema.js";
