/**
 * A tool's memory window, as pure decisions: which new call records need an evaluation, which are
 * duplicates of what the window holds (same masked input and output: dropped), how far the
 * evaluation watermark moves, what an evaluator reads of a call, and the row an evaluation becomes.
 */
import { createHash } from "node:crypto";
import type { CallRecord, EvaluatedCall, ToolCard } from "../ledger/schema.js";
import { OutputSummarySchema } from "../ledger/schema.js";
import { clip, isRecord } from "../internal.js";
import type { CallEvaluation, EvaluationInput } from "./types.js";

/** Longest tool description an evaluator or synthesizer is given, in characters. */
export const MAX_DESCRIPTION_LENGTH = 400;

/** What an evaluator reads in place of output or error text the recorder found aimed at the model. */
export const WITHHELD_AIMED = "(withheld: text aimed at the model)";

/** Latencies the window must hold before a tool has a norm to be slow against. */
export const MIN_LATENCY_SAMPLES = 5;

/**
 * The duplicate key of a call: a hash of its masked input (tool, masked request, argument names,
 * kinds and shapes) and of its result (outcome, error class, masked error message, masked output
 * and its flags). Two calls with one key tell the window nothing new; the later one is dropped.
 */
export function duplicateKey(call: CallRecord): string {
  const output = outputOf(call);
  const parts = [
    call.tool,
    call.request ?? "",
    call.args.map((a) => [a.name, a.kind, a.shape]),
    call.outcome,
    call.errorClass ?? "",
    call.errorMessage ?? "",
    output ? [output.text, output.empty, output.truncated, output.zeroCount] : null,
  ];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}

/** What one evaluation pass does with a tool's new call records. */
export interface EvaluationPlan {
  /** Calls to evaluate, oldest first. */
  pending: CallRecord[];
  /** Calls dropped as duplicates of the window or of an earlier pending call. */
  duplicates: CallRecord[];
  /** Calls already in the window (evaluated by an earlier pass). */
  known: number;
}

/** Split a tool's new call records (oldest first) into pending, duplicates and known ones. */
export function planEvaluation(calls: readonly CallRecord[], window: readonly EvaluatedCall[]): EvaluationPlan {
  const inWindow = new Set(window.map((r) => r.id));
  const keys = new Set(window.map((r) => r.key));
  const plan: EvaluationPlan = { pending: [], duplicates: [], known: 0 };
  for (const call of calls) {
    if (inWindow.has(call.id)) {
      plan.known += 1;
      continue;
    }
    const key = duplicateKey(call);
    if (keys.has(key)) {
      plan.duplicates.push(call);
      continue;
    }
    keys.add(key);
    plan.pending.push(call);
  }
  return plan;
}

/**
 * The new evaluation watermark: the id of the last call (oldest first) before the first one left
 * unevaluated, so that call is read again by the next pass; `previous` when the first call is.
 */
export function settledThrough(
  calls: readonly CallRecord[],
  unevaluated: ReadonlySet<string>,
  previous: string | undefined,
): string | undefined {
  let through = previous;
  for (const call of calls) {
    if (unevaluated.has(call.id)) break;
    through = call.id;
  }
  return through;
}

/**
 * The tool's usual latency: the median latency of its successful calls (the window's and those
 * about to be evaluated), once there are at least {@link MIN_LATENCY_SAMPLES} of them.
 */
export function latencyNorm(window: readonly EvaluatedCall[], pending: readonly CallRecord[] = []): number | undefined {
  const latencies = [
    ...window.flatMap((r) => (r.success && r.latencyMs !== undefined ? [r.latencyMs] : [])),
    ...pending.flatMap((c) => (c.outcome === "success" && c.latencyMs !== undefined ? [c.latencyMs] : [])),
  ].sort((a, b) => a - b);
  if (latencies.length < MIN_LATENCY_SAMPLES) return undefined;
  const mid = Math.floor(latencies.length / 2);
  return latencies.length % 2 === 1 ? latencies[mid] : (latencies[mid - 1] + latencies[mid]) / 2;
}

/** Argument names a card's JSON schema requires. */
export function requiredArgs(card: ToolCard | null | undefined): string[] {
  const required = card?.author.schema?.required;
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [];
}

/** The description an evaluator is given: the author's, else the augmented one, clipped. */
export function descriptionOf(card: ToolCard | null | undefined): string {
  if (!card) return "";
  const authored = card.author.description.trim();
  return clip(authored !== "" ? authored : (card.augmented?.description ?? ""), MAX_DESCRIPTION_LENGTH);
}

/** What an evaluator reads of one call: the call record's masked fields, the card's description and the tool's norm. */
export function evaluationInput(
  call: CallRecord,
  context: { card?: ToolCard | null; latencyNormMs?: number; slowLatencyFactor: number },
): EvaluationInput {
  const kept = outputOf(call);
  // Text the recorder found aimed at the model is data: an evaluator (a model's prompt) never reads it.
  const output = kept?.aimed !== undefined ? { ...kept, text: WITHHELD_AIMED } : kept;
  const errorMessage = call.errorAimed !== undefined ? WITHHELD_AIMED : call.errorMessage;
  return {
    callId: call.id,
    tool: call.tool,
    description: descriptionOf(context.card),
    requiredArgs: requiredArgs(context.card),
    ...(call.request !== undefined ? { request: call.request } : {}),
    args: call.args,
    outcome: call.outcome,
    ...(call.errorClass !== undefined ? { errorClass: call.errorClass } : {}),
    ...(errorMessage !== undefined ? { errorMessage } : {}),
    ...(output ? { output } : {}),
    ...(call.latencyMs !== undefined ? { latencyMs: call.latencyMs } : {}),
    ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
    ...(context.latencyNormMs !== undefined ? { latencyNormMs: context.latencyNormMs } : {}),
    slowLatencyFactor: context.slowLatencyFactor,
  };
}

/** The window row of an evaluated call. */
export function evaluatedRow(
  call: CallRecord,
  evaluation: CallEvaluation,
  evaluator: string,
  evaluatedAt: number,
): EvaluatedCall {
  return {
    v: 1,
    id: call.id,
    partition: call.partition,
    tool: call.tool,
    at: call.at,
    success: call.outcome === "success",
    ...(call.errorClass !== undefined ? { errorClass: call.errorClass } : {}),
    ...(call.latencyMs !== undefined ? { latencyMs: call.latencyMs } : {}),
    ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
    args: call.args,
    fingerprints: call.fingerprints,
    summary: evaluation.summary,
    evaluation: evaluation.evaluation,
    score: evaluation.score,
    signals: [...new Set(evaluation.signals)],
    evaluator,
    key: duplicateKey(call),
    evaluatedAt,
  };
}

/**
 * A call record's output summary, when it has a well-formed one. The ledger's fast read of call
 * records checks only the fields every version writes, so this one is checked here.
 */
function outputOf(call: CallRecord): CallRecord["output"] {
  if (!isRecord(call.output)) return undefined;
  const parsed = OutputSummarySchema.safeParse(call.output);
  return parsed.success ? parsed.data : undefined;
}
