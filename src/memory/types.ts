/**
 * The shapes tool memory is built from: what an evaluator reads of a call, what it returns, and
 * what a guideline synthesizer reads and returns. Both kinds of evaluator and of synthesizer (a
 * model's and the deterministic one) sit behind these interfaces.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ArgShape,
  ErrorClass,
  EvaluatedCall,
  EvaluationScore,
  EvaluationSignal,
  OutputSummary,
  ToolStats,
} from "../ledger/schema.js";

/**
 * What an evaluator reads of one call. Built from the call record only, so it never holds a raw
 * argument value: argument names and masked shapes, the masked request, the masked error message
 * and the masked output summary.
 */
export interface EvaluationInput {
  /** The call record's id. */
  callId: string;
  tool: string;
  /** The tool's own description (the author's), clipped; "" when the tool has no card. */
  description: string;
  /** Argument names the tool's schema requires; empty when unknown. */
  requiredArgs: readonly string[];
  /** The request (user turn) that led to the call, masked. */
  request?: string;
  /** The arguments' names, JSON kinds and masked shapes. */
  args: readonly ArgShape[];
  /** The execution's own flag. */
  outcome: "success" | "error";
  errorClass?: ErrorClass;
  /** The error message, masked. */
  errorMessage?: string;
  /** A successful call's output, masked and clipped; absent when it was not recorded. */
  output?: OutputSummary;
  latencyMs?: number;
  tokens?: number;
  /** The tool's usual latency: the median of its evaluated calls, when it has enough of them. */
  latencyNormMs?: number;
  /** A call slower than this many times `latencyNormMs` counts as slow (the `slowLatencyFactor` setting). */
  slowLatencyFactor: number;
}

/** One call's evaluation: kept apart from the execution's own success flag. */
export interface CallEvaluation {
  /** One sentence on what happened. */
  summary: string;
  /** Why it scores what it does. */
  evaluation: string;
  /** 1 good, 0.5 executed but poor, 0 failed or badly misused. */
  score: EvaluationScore;
  /** What was wrong, as stable labels. */
  signals: EvaluationSignal[];
}

/** Why a call was left unevaluated (it is tried again by the next evaluation pass, never scored). */
export type UnevaluatedReason =
  /** The model call failed. */
  | "model_error"
  /** No reply within the evaluator's `timeoutMs`. */
  | "timeout"
  /** Still rate limited after every retry. */
  | "rate_limited"
  /** The reply was not JSON. */
  | "reply_not_json"
  /** The reply was JSON of the wrong shape. */
  | "reply_wrong_shape"
  /** The reply holds an argument value of the call. */
  | "contains_value"
  /** The reply holds private data the gate's detectors find (an email, a key …). */
  | "contains_private_data"
  /** The reply holds text aimed at the model. */
  | "aimed_at_model";

/** What an evaluator returns for one call: its evaluation, or why there is none this time. */
export type EvaluationOutcome =
  { ok: true; evaluation: CallEvaluation } | { ok: false; reason: UnevaluatedReason; detail: string };

/**
 * Evaluates calls. One outcome per input, in the inputs' order. Never throws for a bad reply or a
 * failed call (that call's outcome says why); a run aborted through `config.signal` rejects.
 */
export interface CallEvaluator {
  /** Recorded on each evaluated call: `deterministic` or `model:<name>`. */
  readonly name: string;
  /** Whether it calls a model (what a pass costs). */
  readonly callsModel: boolean;
  evaluate(inputs: readonly EvaluationInput[], config?: RunnableConfig): Promise<EvaluationOutcome[]>;
}

/** What a guideline is written from: one tool's recent window and its statistics. */
export interface SynthesisInput {
  tool: string;
  /** The tool's own description; "" when it has none. */
  description: string;
  /** Argument names the tool's schema requires; empty when unknown. */
  requiredArgs: readonly string[];
  /** The recent evaluated calls, oldest first. */
  recent: readonly EvaluatedCall[];
  /** Statistics of the whole window. */
  stats: ToolStats;
  /** Longest line, and longest guideline (its lines together), in characters. */
  limits: { maxLineLength: number; maxGuidelineLength: number };
}

/** A guideline as a synthesizer proposes it, before the vet. */
export interface GuidelineDraft {
  /** What the tool is for and when to use it. */
  coreFunction: string;
  /** Patterns that worked. */
  whatWorks: string[];
  /** Common issues, and why. */
  commonIssues: string[];
  /** Two or three recommendations. */
  bestPractices: string[];
}

/** Why a synthesis gave no draft (the tool keeps its guideline; the next summary tries again). */
export type SynthesisFailure = "model_error" | "timeout" | "reply_not_json" | "reply_wrong_shape";

/** What a synthesizer returns. */
export type SynthesisOutcome =
  { ok: true; draft: GuidelineDraft } | { ok: false; reason: SynthesisFailure; detail: string };

/** Writes guideline drafts. Never throws for a bad reply; a run aborted through `config.signal` rejects. */
export interface GuidelineSynthesizer {
  /** Recorded on each guideline: `deterministic` or `model:<name>`. */
  readonly name: string;
  readonly callsModel: boolean;
  synthesize(input: SynthesisInput, config?: RunnableConfig): Promise<SynthesisOutcome>;
}
