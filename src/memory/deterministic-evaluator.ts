/**
 * The deterministic evaluator: scores a call by code alone, from what the record says: its error
 * class, warnings and "no results" in its (masked) output, empty or truncated output, and latency
 * far above the tool's own norm. No model, no cost: the default.
 *
 * Its summaries and evaluations are written from labels and numbers only, never from the call's
 * text, so they cannot carry anything of it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { definedOnly } from "../internal.js";
import type { ErrorClass, EvaluationSignal } from "../ledger/schema.js";
import type { CallEvaluation, CallEvaluator, EvaluationInput, EvaluationOutcome } from "./types.js";

/** Options of {@link DeterministicEvaluator}. */
export interface DeterministicEvaluatorOptions {
  /**
   * A call counts as slow only when it also took at least this long, in milliseconds, so that
   * tools answering in microseconds are not called slow for a scheduling hiccup.
   * @default 100
   */
  minSlowMs?: number;
}

/** The defaults of {@link DeterministicEvaluatorOptions}. */
export const DEFAULT_DETERMINISTIC_EVALUATOR_OPTIONS: Readonly<Required<DeterministicEvaluatorOptions>> = Object.freeze(
  {
    minSlowMs: 100,
  },
);

/** Output saying nothing was found (checked on the masked text, where words survive). */
const NO_RESULTS =
  /\bno (?:results?|matches|matching \w+|hits|items|records|entries|documents|data|rows)\b|\bnothing (?:was )?found\b|\bfound nothing\b|\bcould ?n[o']t find any(?:thing)?\b|\b(?:did not|didn't) find any(?:thing)?\b|\bnot find any\b|\bno \w+(?: \w+)? (?:were |was )?found\b|\bzero (?:results?|matches|hits)\b|\bempty (?:result|response)\b/i;

/** Output warning about the call (an unsupported value, a fallback, a deprecation). */
const WARNING =
  /\bwarn(?:ing)?s?\b|\bnot supported\b|\bunsupported\b|\bdeprecated\b|\bignored\b|\bfalling back\b|\bfell back\b|\bdefaulted to\b|\bdefaulting to\b|\binvalid\b/i;

/** Why a call failed, by error class. */
const ERROR_WHY: Readonly<Record<ErrorClass, string>> = Object.freeze({
  validation: "its arguments were refused",
  not_found: "what it asked for was not found",
  permission: "it was not allowed",
  rate_limit: "it was rate limited",
  timeout: "it timed out",
  upstream: "a service behind the tool failed",
  unknown: "the tool returned an error",
});

/** What each signal means in a summary. */
const SIGNAL_WHAT: Readonly<Partial<Record<EvaluationSignal, string>>> = Object.freeze({
  no_results: "returned no results",
  empty: "returned empty output",
  truncated: "its output was cut off",
  warning: "its output carries a warning",
  slow: "it took far longer than usual",
});

/** The signals of a successful call, in the order they are reported. */
export function outputSignals(input: EvaluationInput, minSlowMs: number): EvaluationSignal[] {
  const signals: EvaluationSignal[] = [];
  const output = input.output;
  if (output) {
    if (output.empty) signals.push("empty");
    else if (output.zeroCount || NO_RESULTS.test(output.text)) signals.push("no_results");
    if (output.truncated) signals.push("truncated");
    if (WARNING.test(output.text)) signals.push("warning");
  }
  const { latencyMs, latencyNormMs, slowLatencyFactor } = input;
  if (
    latencyMs !== undefined &&
    latencyNormMs !== undefined &&
    latencyMs >= minSlowMs &&
    latencyMs > latencyNormMs * slowLatencyFactor
  ) {
    signals.push("slow");
  }
  return signals;
}

function ms(latency: number | undefined): string {
  if (latency === undefined) return "";
  return latency >= 1000 ? ` in ${(latency / 1000).toFixed(1)} s` : ` in ${Math.round(latency)} ms`;
}

/** One call's evaluation by code. Pure. */
export function evaluateByCode(input: EvaluationInput, options: DeterministicEvaluatorOptions = {}): CallEvaluation {
  const minSlowMs = options.minSlowMs ?? DEFAULT_DETERMINISTIC_EVALUATOR_OPTIONS.minSlowMs;
  if (input.outcome === "error") {
    const errorClass = input.errorClass ?? "unknown";
    return {
      summary: `Failed (${errorClass})${ms(input.latencyMs)}: ${ERROR_WHY[errorClass]}.`,
      evaluation: "The call did not execute: a failure, whatever the request.",
      score: 0,
      signals: ["error"],
    };
  }
  const signals = outputSignals(input, minSlowMs);
  if (signals.length > 0) {
    const what = signals.map((s) => SIGNAL_WHAT[s] ?? s).join(", and ");
    return {
      summary: `Succeeded${ms(input.latencyMs)}, but ${what}.`,
      evaluation: "It executed without error, but the result is poor for the request: a partial success.",
      score: 0.5,
      signals,
    };
  }
  return {
    summary: `Succeeded${ms(input.latencyMs)}.`,
    evaluation: input.output
      ? "It executed without error and its output shows no problem."
      : "It executed without error; its output was not recorded, so only the outcome was judged.",
    score: 1,
    signals: [],
  };
}

/**
 * Evaluates calls by code alone ({@link evaluateByCode}): a failed call scores 0; a call that
 * executed but returned nothing, a warning, truncated output or took far longer than the tool's
 * median scores 0.5; any other 1.
 */
export class DeterministicEvaluator implements CallEvaluator {
  readonly name = "deterministic";
  readonly callsModel = false;
  private readonly options: Required<DeterministicEvaluatorOptions>;

  constructor(options: DeterministicEvaluatorOptions = {}) {
    this.options = { ...DEFAULT_DETERMINISTIC_EVALUATOR_OPTIONS, ...definedOnly(options) };
  }

  async evaluate(inputs: readonly EvaluationInput[], config?: RunnableConfig): Promise<EvaluationOutcome[]> {
    config?.signal?.throwIfAborted();
    return inputs.map((input) => ({ ok: true, evaluation: evaluateByCode(input, this.options) }));
  }
}
