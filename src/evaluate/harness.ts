/**
 * The selection-accuracy harness: "how accurately does my model pick tools today, and where does
 * it go wrong?" Each labelled case is run against a {@link Selector} (selectors.ts): the router
 * alone (deterministic: one run by default) or a real chat model with the tools bound (its
 * judgement varies: three runs by default). A case with `candidates` is routed among them only.
 * Runs are concurrency-limited; rate-limit errors are retried with backoff; a case run that still
 * fails is reported as an error and never counted as a miss.
 *
 * The result ({@link SelectionReport}) holds every outcome and what they add up to: accuracy,
 * recall@k of the router's ranking, the confusion matrix with its "no tool" row and column,
 * per-tool precision and recall, agreement across repeats, the "no tool" decision's AUROC,
 * precision and recall, figures per value of any case field, and the diagnoses of the
 * off-diagonal.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { clip, definedOnly, errorMessage, oneLine } from "../internal.js";
import { type Breakdown, breakdownBy, noToolOfCases, type RankingFigures, rankingOf } from "./breakdown.js";
import type { EvalCase } from "./cases.js";
import {
  type AccuracyFigures,
  accuracyOf,
  type Agreement,
  agreementOf,
  type CaseResult,
  type ConfusionMatrix,
  confusionMatrix,
  type Outcome,
  runCount,
  type ToolScore,
  toolScores,
} from "./confusion.js";
import { backoffDelay, isRateLimitError, retryAfterMs } from "../memory/limit.js";
import { type Diagnosis, diagnose, type SelectionMode } from "./diagnose.js";
import type { NoToolFigures } from "./metrics.js";
import { crossFittedMargins } from "./abstain-eval.js";
import type { Selection, Selector } from "./selectors.js";

export {
  chatModelSelector,
  type ChatModelSelectorOptions,
  DEFAULT_CHAT_MODEL_SELECTOR_OPTIONS,
  DEFAULT_ROUTER_SELECTOR_OPTIONS,
  type EvalTool,
  routerSelector,
  type RouterSelectorOptions,
  type Selection,
  type SelectionMode,
  type SelectionRequest,
  type Selector,
  toolSource,
} from "./selectors.js";

// ------------------------------------------------------------------ running

/** Progress of a run: case runs finished out of all. */
export interface SelectionProgress {
  done: number;
  total: number;
  errors: number;
}

/** Options of {@link evaluateSelection}. */
export interface EvaluateSelectionOptions {
  cases: readonly EvalCase[];
  selector: Selector;
  /**
   * Runs of each case.
   * @default 1 for a deterministic selector (the router), else 3 (see DEFAULT_SELECTION_RUNS)
   */
  runs?: number;
  /**
   * The k of recall@k, for a selector that ranks (the router): each a positive integer.
   * @default [1, 3, 5]
   */
  k?: readonly number[];
  /**
   * Route every case among all the selector's tools, even one that carries its own `candidates`.
   * @default false (a case with candidates is routed among them only)
   */
  ignoreCandidates?: boolean;
  /**
   * Case fields to break the figures down by (accuracy, recall@k, "no tool" per value).
   * @default [] (none)
   */
  by?: readonly string[];
  /**
   * Case runs in flight at once.
   * @default 4
   */
  concurrency?: number;
  /**
   * Retries of a case run that hit a rate limit.
   * @default 4
   */
  retries?: number;
  /**
   * First backoff after a rate limit, in ms; doubled at each retry (with jitter), unless the
   * provider says how long to wait.
   * @default 1000
   */
  backoffMs?: number;
  /**
   * Longest one selection may take, in ms (passed to the model call as `timeout`).
   * @default 60000
   */
  timeoutMs?: number;
  /**
   * Waits between retries (tests pass a fake).
   * @default setTimeout
   */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Jitter source in [0, 1).
   * @default Math.random
   */
  random?: () => number;
  /** Called after each case run. */
  onProgress?: (progress: SelectionProgress) => void;
  /**
   * Clock, for `seconds`.
   * @default performance.now
   */
  now?: () => number;
}

/**
 * Runs of each case when none is asked for: one for a selector whose answers repeat exactly (the
 * router: repeats cannot disagree), three for one whose judgement varies (a chat model, even at
 * temperature 0).
 */
export const DEFAULT_SELECTION_RUNS: Readonly<{ deterministic: number; varying: number }> = Object.freeze({
  deterministic: 1,
  varying: 3,
});

/** The defaults of {@link EvaluateSelectionOptions} (`runs`: {@link DEFAULT_SELECTION_RUNS}). */
export const DEFAULT_EVALUATE_SELECTION_OPTIONS: Readonly<
  Required<Omit<EvaluateSelectionOptions, "cases" | "selector" | "onProgress" | "runs">>
> = Object.freeze({
  k: Object.freeze([1, 3, 5]),
  ignoreCandidates: false,
  by: Object.freeze([]),
  concurrency: 4,
  retries: 4,
  backoffMs: 1000,
  timeoutMs: 60_000,
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  now: () => performance.now(),
});

/** Every outcome of a run, as `--json` writes it and {@link SelectionRunSchema} reads it back. */
export interface SelectionRun {
  mode: SelectionMode;
  label: string;
  /** Runs per case. */
  runs: number;
  /** The tools chosen among. */
  tools: string[];
  minScore?: number;
  warnings: string[];
  /** Wall time, in seconds. */
  seconds: number;
  cases: CaseResult[];
  /** The selector's best score of each case, in case order, when it has scores (the router). */
  scores?: number[];
  /** The selector's second-best score of each case, in case order, when it ranks (the router). */
  second?: number[];
  /** The k of recall@k. */
  k?: number[];
  /** Cases routed among their own candidates (0 or absent: every case among all the tools). */
  amongCandidates?: number;
  /** Groups of tools with the same description and argument schema. */
  duplicates?: string[][];
}

/** A run and what it adds up to. */
export interface SelectionReport extends SelectionRun {
  accuracy: AccuracyFigures;
  matrix: ConfusionMatrix;
  perTool: ToolScore[];
  agreement: Agreement;
  diagnoses: Diagnosis[];
  /** Case runs that ended in an error (never counted), in case order. */
  errors: { id: string; turn: string; run: number; error: string }[];
  /**
   * "No tool" from the selector's scores, when it has them and the cases hold both kinds: AUROC
   * of the best score (cases with a tool against cases with none), and precision and recall of
   * abstaining below `minScore` (0 without one). Compare a run with lessons and one without for
   * before and after learning.
   */
  noTool?: NoToolFigures;
  /**
   * "No tool" by the fitted model (`fitAbstainModel`: score gap, the score against the top tool's
   * own calibration, request features), cross-fitted on the cases (`crossFittedMargins`): AUROC,
   * and precision and recall of abstaining where it would. Absent without scores or with too few
   * cases of either kind to fit.
   */
  abstainModel?: NoToolFigures;
  /** Recall@k of the selector's ranking (the router's; ignores minScore), over the cases that need a tool. */
  ranking?: RankingFigures;
  /** The figures per value of each field asked for (`by`). */
  breakdowns?: Breakdown[];
}

/** The longest error message kept per case run. */
const MAX_ERROR_LENGTH = 300;

/** Longest single wait after a rate limit, in ms, whatever the provider asks. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Run every case `runs` times against the selector and add up the outcomes. A case with
 * `candidates` is routed among them only (unless `ignoreCandidates`). Case runs go run-major
 * (every case once, then again), at most `concurrency` at a time. A run aborted through
 * `config.signal` stops the whole evaluation (rethrown); any other failure is that case run's
 * error outcome.
 * @throws InvalidInput for no cases, runs / concurrency / k that are not positive integers, or a
 *   case whose candidates name a tool the selector does not have or leave out a tool it expects.
 */
export async function evaluateSelection(
  options: EvaluateSelectionOptions,
  config?: RunnableConfig,
): Promise<SelectionReport> {
  const selector = options.selector;
  const runsDefault = selector.deterministic ? DEFAULT_SELECTION_RUNS.deterministic : DEFAULT_SELECTION_RUNS.varying;
  const o = { ...DEFAULT_EVALUATE_SELECTION_OPTIONS, runs: runsDefault, ...definedOnly(options) };
  for (const [key, min] of [
    ["runs", 1],
    ["concurrency", 1],
    ["retries", 0],
  ] as const) {
    if (!Number.isInteger(o[key]) || o[key] < min)
      throw new InvalidInput(`evaluateSelection: ${key} must be an integer >= ${min}; got ${o[key]}.`);
  }
  const ks = [...new Set(o.k)].sort((a, b) => a - b);
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1))
    throw new InvalidInput(`evaluateSelection: k must be positive integers; got ${JSON.stringify(o.k)}.`);
  if (options.cases.length === 0) throw new InvalidInput("evaluateSelection: there are no cases to run.");
  const among = (c: EvalCase): readonly string[] | undefined => (o.ignoreCandidates ? undefined : c.candidates);
  checkCandidates(
    options.cases.filter((c) => among(c) !== undefined),
    selector.tools,
  );
  const started = o.now();
  const outcomes: Outcome[][] = options.cases.map(() => new Array<Outcome>(o.runs));
  const first: (Selection | undefined)[] = options.cases.map(() => undefined);
  const tasks: { c: number; r: number }[] = [];
  for (let r = 0; r < o.runs; r++) for (let c = 0; c < options.cases.length; c++) tasks.push({ c, r });
  let done = 0;
  let errors = 0;

  const attempt = async (c: EvalCase): Promise<Selection | { error: string }> => {
    const request = { turn: c.turn, depth: ks.at(-1)!, ...(among(c) ? { candidates: among(c) } : {}) };
    for (let retry = 0; ; retry++) {
      config?.signal?.throwIfAborted();
      try {
        return await selector.select(request, { ...config, timeout: o.timeoutMs });
      } catch (error) {
        if (config?.signal?.aborted) throw error;
        if (!isRateLimitError(error)) return { error: clip(oneLine(errorMessage(error)), MAX_ERROR_LENGTH) };
        if (retry >= o.retries) {
          return {
            error: clip(`rate limited after ${o.retries} retries: ${oneLine(errorMessage(error))}`, MAX_ERROR_LENGTH),
          };
        }
        const backoff = { initialDelayMs: o.backoffMs, maxDelayMs: MAX_BACKOFF_MS };
        await o.sleep(backoffDelay(retry, backoff, o.random, retryAfterMs(error)));
      }
    }
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const { c, r } = tasks[next++];
      const answer = await attempt(options.cases[c]);
      if ("error" in answer) {
        outcomes[c][r] = answer;
        errors += 1;
      } else {
        outcomes[c][r] = { tool: answer.tool };
        // Rankings and scores are the router's, which repeats exactly: the first answered run's.
        first[c] ??= answer;
      }
      done += 1;
      options.onProgress?.({ done, total: tasks.length, errors });
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, tasks.length) }, worker));

  const scored = first.every((a) => a?.score !== undefined);
  const amongCandidates = options.cases.filter((c) => among(c) !== undefined).length;
  const run: SelectionRun = {
    mode: selector.mode,
    label: selector.label,
    runs: o.runs,
    tools: [...selector.tools],
    ...(selector.minScore !== undefined ? { minScore: selector.minScore } : {}),
    warnings: [...selector.warnings],
    seconds: Math.round((o.now() - started) / 100) / 10,
    cases: options.cases.map((c, i) => caseResult(c, outcomes[i], first[i]?.ranked, among(c))),
    ...(scored ? { scores: first.map((a) => a!.score!) } : {}),
    ...(scored && first.every((a) => a?.second !== undefined) ? { second: first.map((a) => a!.second!) } : {}),
    k: ks,
    ...(amongCandidates > 0 ? { amongCandidates } : {}),
    ...(selector.duplicates && selector.duplicates.length > 0
      ? { duplicates: selector.duplicates.map((g) => [...g]) }
      : {}),
  };
  return summarizeSelection(run, { by: o.by });
}

/** A case and its outcomes, with what breakdowns and recall@k read. */
function caseResult(
  c: EvalCase,
  outcomes: Outcome[],
  ranked: string[] | undefined,
  candidates: readonly string[] | undefined,
): CaseResult {
  return {
    id: c.id,
    turn: c.turn,
    expect: [...c.expect],
    ...(c.line !== undefined ? { line: c.line } : {}),
    outcomes,
    ...(candidates ? { candidates: [...candidates] } : {}),
    ...(c.fold !== undefined ? { fold: c.fold } : {}),
    ...(c.fields ? { fields: { ...c.fields } } : {}),
    ...(ranked ? { ranked } : {}),
  };
}

/**
 * Every candidate of every case is one of the selector's tools, and holds the case's expected tools.
 * @throws InvalidInput naming the first case that does not.
 */
function checkCandidates(cases: readonly EvalCase[], tools: readonly string[]): void {
  const known = new Set(tools);
  for (const c of cases) {
    const unknown = c.candidates!.find((t) => !known.has(t));
    if (unknown !== undefined)
      throw new InvalidInput(
        `evaluateSelection: case ${c.id} names candidate ${JSON.stringify(unknown)}, which is not one of the tools.`,
      );
    const outside = c.expect.find((t) => !c.candidates!.includes(t));
    if (outside !== undefined)
      throw new InvalidInput(
        `evaluateSelection: case ${c.id} expects ${JSON.stringify(outside)}, which is not among its candidates.`,
      );
  }
}

/** Options of {@link summarizeSelection}. */
export interface SummarizeOptions {
  /**
   * Case fields to break the figures down by.
   * @default [] (none)
   */
  by?: readonly string[];
}

/** Add up a run's outcomes (pure): what {@link evaluateSelection} returns, also for a run read back from JSON. */
export function summarizeSelection(run: SelectionRun, options: SummarizeOptions = {}): SelectionReport {
  const matrix = confusionMatrix(run.cases);
  const runs = Math.max(run.runs, runCount(run.cases));
  const warnings = new Set(run.warnings);
  if (!run.cases.some((c) => c.expect.length === 0)) {
    warnings.add(
      'no case expects no tool ("expect": null): add turns where no tool should fire, or the null row says nothing.',
    );
  }
  if (run.mode === "router" && run.minScore === undefined && run.cases.some((c) => c.expect.length === 0)) {
    warnings.add(
      "router without minScore: it always picks a tool, so every turn that needs none is an error (set a minScore for the no-tool path).",
    );
  }
  const errors = run.cases.flatMap((c) =>
    c.outcomes.flatMap((o, r) => ("error" in o ? [{ id: c.id, turn: c.turn, run: r + 1, error: o.error }] : [])),
  );
  const ks = run.k ?? [...DEFAULT_EVALUATE_SELECTION_OPTIONS.k];
  const noTool = noToolOfCases(run.cases, run.scores, run.minScore);
  const margins = run.mode === "router" ? crossFittedMargins(run.cases, run.scores, run.second) : undefined;
  const abstainModel = noToolOfCases(run.cases, margins, 0);
  const ranking = rankingOf(run.cases, ks);
  const by = options.by ?? [];
  return {
    ...run,
    ...(noTool ? { noTool } : {}),
    ...(abstainModel ? { abstainModel } : {}),
    ...(ranking ? { ranking } : {}),
    ...(by.length > 0
      ? {
          breakdowns: by.map((field) =>
            breakdownBy(run.cases, field, { ks, scores: run.scores, threshold: run.minScore, margins }),
          ),
        }
      : {}),
    warnings: [...warnings],
    accuracy: accuracyOf(run.cases),
    matrix,
    perTool: toolScores(run.cases, matrix),
    agreement: agreementOf(run.cases),
    diagnoses: diagnose({ matrix, runs, mode: run.mode, minScore: run.minScore, duplicates: run.duplicates }),
    errors,
  };
}

const OutcomeSchema = z.union([z.object({ tool: z.string().nullable() }), z.object({ error: z.string() })]);

/** A saved run (the `--json` of `tool-lessons eval`), checked when read back for a comparison. */
export const SelectionRunSchema = z.object({
  mode: z.enum(["router", "chat-model"]),
  label: z.string(),
  runs: z.number().int().min(1),
  tools: z.array(z.string()),
  minScore: z.number().optional(),
  warnings: z.array(z.string()).default([]),
  seconds: z.number().default(0),
  cases: z.array(
    z.object({
      id: z.string(),
      turn: z.string(),
      expect: z.array(z.string()),
      line: z.number().int().optional(),
      outcomes: z.array(OutcomeSchema),
      candidates: z.array(z.string()).optional(),
      fold: z.number().int().optional(),
      fields: z.record(z.string(), z.string()).optional(),
      ranked: z.array(z.string()).optional(),
    }),
  ),
  scores: z.array(z.number()).optional(),
  second: z.array(z.number()).optional(),
  k: z.array(z.number().int().min(1)).optional(),
  amongCandidates: z.number().int().min(0).optional(),
  duplicates: z.array(z.array(z.string())).optional(),
});

/**
 * A saved run read back and summed up again (the saved figures are not trusted; the outcomes are).
 * @throws InvalidInput naming the first field that does not fit.
 */
export function parseSelectionRun(value: unknown, source: string, options: SummarizeOptions = {}): SelectionReport {
  const parsed = SelectionRunSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidInput(
      `${source}: not a saved run of \`tool-lessons eval --json\` (${issue.path.join(".") || "(root)"}: ${issue.message}).`,
      { context: { file: source } },
    );
  }
  return summarizeSelection(parsed.data, options);
}
