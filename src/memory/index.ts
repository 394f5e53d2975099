/**
 * Tool memory: each call evaluated (a model's rubric or the deterministic evaluator), a sliding
 * window of evaluated calls per tool and partition, statistics by code, and guidelines
 * synthesized from the recent window and vetted. The `tool-lessons/memory` entry point.
 */
export {
  DEFAULT_TOOL_MEMORY_OPTIONS,
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
export {
  DEFAULT_DETERMINISTIC_EVALUATOR_OPTIONS,
  DeterministicEvaluator,
  type DeterministicEvaluatorOptions,
  evaluateByCode,
} from "./deterministic-evaluator.js";
export {
  buildEvaluationMessages,
  DEFAULT_MODEL_EVALUATOR_OPTIONS,
  EVALUATION_RUBRIC,
  EvaluationReplySchema,
  ModelEvaluator,
  type ModelEvaluatorOptions,
} from "./model-evaluator.js";
export { DeterministicSynthesizer, NOT_ENOUGH_DATA, synthesizeByCode } from "./synthesis.js";
export {
  buildSynthesisMessages,
  DEFAULT_MODEL_SYNTHESIZER_OPTIONS,
  GuidelineReplySchema,
  ModelSynthesizer,
  type ModelSynthesizerOptions,
} from "./model-synthesizer.js";
export { checkGuidelineLine, type GuidelineVetContext, vetGuideline } from "./vet-guideline.js";
export { toolStats } from "./stats.js";
export { duplicateKey } from "./window.js";
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
