/**
 * The selection-accuracy harness: "how accurately does my model pick tools today, and where does
 * it go wrong?" Each labelled case is run several times (temperature 0 is not deterministic)
 * against a {@link Selector}: the router alone ({@link routerSelector}: the package's own routing,
 * offline) or a real chat model with the tools bound ({@link chatModelSelector}: the first tool
 * call of its reply). Runs are concurrency-limited; rate-limit errors are retried with backoff; a
 * case run that still fails is reported as an error and never counted as a miss.
 *
 * The result ({@link SelectionReport}) holds every outcome and what they add up to: accuracy, the
 * confusion matrix with its "no tool" row and column, per-tool precision and recall, agreement
 * across repeats, and the diagnoses of the off-diagonal.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { isLangChainTool, type StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { ToolIndex, type ToolIndexOptions } from "../routing/tool-index.js";
import { clip, definedOnly, errorMessage, oneLine } from "../internal.js";
import { registerTools } from "../learn/register.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import { modelDescription } from "../prompt/describe.js";
import type { EvalCase, ToolLine } from "./cases.js";
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
import { type DiagnoseOptions, type Diagnosis, diagnose, type SelectionMode } from "./diagnose.js";
import { type NoToolFigures, noToolFigures } from "./metrics.js";

export type { SelectionMode } from "./diagnose.js";

/** A tool the harness can score: a JSONL tool line, or any LangChain tool (`tool()`, `StructuredTool`, MCP tools). */
export type EvalTool = ToolLine | StructuredToolInterface;

/** Picks the first tool for a user turn, or `null` for none. */
export interface Selector {
  readonly mode: SelectionMode;
  /** What picked, for reports: "router (lexical embeddings)", "chat model gpt-4o-mini". */
  readonly label: string;
  /** The names of the tools it chooses among. */
  readonly tools: readonly string[];
  /** The router's minScore, when it has one. */
  readonly minScore?: number;
  /** Things the caller should know about the setup (e.g. a temperature that is not 0). */
  readonly warnings: readonly string[];
  /** The first tool this turn calls, or `null` when it calls none. Throws on failure. */
  select(turn: string, config?: RunnableConfig): Promise<string | null>;
  /**
   * Routing's best score for the turn, whatever `minScore` (the router's: -1 when it offers
   * nothing), for the "no tool" AUROC. Absent for a selector that has no score (a chat model).
   */
  score?(turn: string, config?: RunnableConfig): Promise<number>;
}

/** A tool as a {@link ToolSource} (name, description, argument schema). */
export function toolSource(tool: EvalTool): ToolSource {
  if (isLangChainTool(tool)) return { name: tool.name, description: tool.description ?? "", schema: tool.schema };
  const line = tool as ToolLine;
  return { name: line.name, description: line.description ?? "", schema: line.parameters ?? undefined };
}

/** Names of the tools, refusing a repeated or blank one. */
function toolNames(tools: readonly EvalTool[]): string[] {
  if (tools.length === 0) throw new InvalidInput("The harness needs at least one tool.");
  const seen = new Set<string>();
  for (const t of tools) {
    if (typeof t.name !== "string" || t.name.trim() === "")
      throw new InvalidInput("Every tool needs a non-empty name.");
    if (seen.has(t.name)) throw new InvalidInput(`Two tools are named "${t.name}"; tool names must be unique.`);
    seen.add(t.name);
  }
  return [...seen];
}

// ------------------------------------------------------------------ router mode

/** Options of {@link routerSelector}. */
export interface RouterSelectorOptions {
  tools: readonly EvalTool[];
  /**
   * Cards whose learned parts (example requests) routing should use, matched by tool name: the
   * "after" of a before/after comparison. The author's text always comes from `tools`.
   * @default [] (the tools as written)
   */
  lessons?: readonly ToolCard[];
  /**
   * Pick no tool when the best scores below this (cosine similarity): the router's "no tool" path.
   * @default undefined (always pick the best tool)
   */
  minScore?: number;
  /**
   * Options of the routing index, as the application passes them to {@link ToolIndex}.
   * @default {} (offline lexical embeddings, the index's defaults)
   */
  index?: Omit<ToolIndexOptions, "ledger">;
}

/** The defaults of {@link RouterSelectorOptions} (`minScore` has none: without it the router always picks a tool). */
export const DEFAULT_ROUTER_SELECTOR_OPTIONS: Readonly<Required<Pick<RouterSelectorOptions, "lessons" | "index">>> =
  Object.freeze({
    lessons: Object.freeze([]) as readonly ToolCard[],
    index: Object.freeze({}),
  });

const ROUTER_PARTITION = "evaluate";

/**
 * The router alone as a selector: the tools registered in a throw-away in-memory ledger (with
 * the learned parts of `lessons`), indexed by {@link ToolIndex}; a turn picks the top-ranked
 * tool, or none when it scores below `minScore`.
 */
export async function routerSelector(options: RouterSelectorOptions): Promise<Selector> {
  const names = toolNames(options.tools);
  if (options.minScore !== undefined && !Number.isFinite(options.minScore)) {
    throw new InvalidInput(`minScore must be a finite number; got ${options.minScore}.`);
  }
  const o = { ...DEFAULT_ROUTER_SELECTOR_OPTIONS, ...definedOnly(options) };
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, options.tools.map(toolSource), { partition: ROUTER_PARTITION });
  const lessons = new Map(o.lessons.map((c) => [c.name, c]));
  let learned = 0;
  for (const card of await ledger.listCards(ROUTER_PARTITION)) {
    const lesson = lessons.get(card.name);
    if (!lesson) continue;
    learned += 1;
    await ledger.putCard(
      { ...card, augmented: lesson.augmented, learned: lesson.learned },
      { expectVersion: card.version },
    );
  }
  const index = new ToolIndex({ ...o.index, ledger });
  await index.reindex(ROUTER_PARTITION);
  const minScore = options.minScore;
  const embeddings = o.index.embeddings ? "the given embeddings" : "lexical embeddings";
  return {
    mode: "router",
    label: `router (${embeddings}${minScore !== undefined ? `, minScore ${minScore}` : ""}${learned > 0 ? `, lessons of ${learned} tools` : ""})`,
    tools: names,
    ...(minScore !== undefined ? { minScore } : {}),
    warnings: [],
    async select(turn) {
      const [best] = await index.route(ROUTER_PARTITION, turn, { k: 1, minScore });
      return best?.tool ?? null;
    },
    async score(turn) {
      const [best] = await index.route(ROUTER_PARTITION, turn, { k: 1 });
      return best?.score ?? -1;
    },
  };
}

// ------------------------------------------------------------------ chat-model mode

/** Options of {@link chatModelSelector}. */
export interface ChatModelSelectorOptions {
  /** Any LangChain chat model that supports tool calling, built with temperature 0. */
  model: BaseChatModel;
  tools: readonly EvalTool[];
  /**
   * Cards whose learned lines the model should be shown (usage notes, "Not for" lines, example
   * call), matched by name, as `withDescriptions` shows them in an application.
   * @default [] (the tools as written)
   */
  lessons?: readonly ToolCard[];
  /**
   * The application's system prompt, sent before each turn.
   * @default "" (no system message)
   */
  system?: string;
}

/** Defaults of {@link ChatModelSelectorOptions}. */
export const DEFAULT_CHAT_MODEL_SELECTOR_OPTIONS: Readonly<
  Required<Pick<ChatModelSelectorOptions, "lessons" | "system">>
> = Object.freeze({
  lessons: Object.freeze([]) as readonly ToolCard[],
  system: "",
});

/** The tool in a form `bindTools` takes, described as the model would be shown it with `card`'s lessons. */
function bindable(tool: EvalTool, card: ToolCard | undefined): StructuredToolInterface | Record<string, unknown> {
  const source = toolSource(tool);
  const description = card
    ? modelDescription({ ...card, author: { ...card.author, description: source.description ?? "" } })
    : (source.description ?? "");
  if (isLangChainTool(tool)) {
    if (description === (tool.description ?? "")) return tool as StructuredToolInterface;
    const view = Object.create(tool) as StructuredToolInterface;
    Object.defineProperty(view, "description", {
      value: description,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return view;
  }
  const line = tool as ToolLine;
  return {
    type: "function",
    function: { name: line.name, description, parameters: line.parameters ?? { type: "object", properties: {} } },
  };
}

/**
 * A chat model with the tools bound as a selector: each turn is sent alone (after the system
 * prompt, when given), and the name of the reply's first tool call is the pick (`null`: it
 * answered without one). The tools are never run.
 * @throws InvalidInput when the model cannot bind tools.
 */
export function chatModelSelector(options: ChatModelSelectorOptions): Selector {
  const names = toolNames(options.tools);
  const o = { ...DEFAULT_CHAT_MODEL_SELECTOR_OPTIONS, ...definedOnly(options) };
  const model = options.model;
  if (typeof model.bindTools !== "function") {
    throw new InvalidInput(
      `The chat model ${model.getName()} cannot bind tools (no bindTools); use a model that supports tool calling.`,
    );
  }
  const lessons = new Map(o.lessons.map((c) => [c.name, c]));
  const bound = model.bindTools(options.tools.map((t) => bindable(t, lessons.get(t.name))));
  const warnings: string[] = [];
  const temperature = (model as unknown as { temperature?: unknown }).temperature;
  if (typeof temperature === "number" && temperature !== 0) {
    warnings.push(
      `the chat model's temperature is ${temperature}; the harness measures at temperature 0: build the model with temperature: 0.`,
    );
  }
  const system = o.system.trim();
  return {
    mode: "chat-model",
    label: `chat model ${modelName(model)}`,
    tools: names,
    warnings,
    async select(turn, config) {
      const messages: BaseMessage[] = [...(system ? [new SystemMessage(system)] : []), new HumanMessage(turn)];
      const reply = await bound.invoke(messages, config);
      const first = reply.tool_calls?.[0]?.name;
      return typeof first === "string" && first !== "" ? first : null;
    },
  };
}

function modelName(model: BaseChatModel): string {
  const named =
    (model as unknown as { model?: unknown; modelName?: unknown }).model ??
    (model as unknown as { modelName?: unknown }).modelName;
  return typeof named === "string" && named !== "" ? named : model.getName();
}

// ------------------------------------------------------------------ running

/**
 * Whether an error is a provider's rate limit (HTTP 429, `rate_limit_exceeded`, "too many
 * requests"): those are retried with backoff; anything else fails the case run at once.
 */
export function isRateLimitError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as {
    status?: unknown;
    statusCode?: unknown;
    code?: unknown;
    name?: unknown;
    message?: unknown;
    response?: { status?: unknown };
  };
  if (e.status === 429 || e.statusCode === 429 || e.response?.status === 429) return true;
  if (typeof e.code === "string" && /rate.?limit|^429$/i.test(e.code)) return true;
  if (e.name === "RateLimitError") return true;
  return typeof e.message === "string" && /rate.?limit|too many requests|\b429\b/i.test(e.message);
}

/** Seconds a rate-limited provider asked to wait (`retry-after`), when the error says. */
function retryAfterMs(error: unknown): number | undefined {
  const e = error as { headers?: unknown; retryAfter?: unknown };
  const headers = e?.headers;
  let raw: unknown = e?.retryAfter;
  if (raw === undefined && headers && typeof headers === "object") {
    const get = (headers as { get?: unknown }).get;
    raw =
      typeof get === "function"
        ? (get as (k: string) => unknown).call(headers, "retry-after")
        : (headers as Record<string, unknown>)["retry-after"];
  }
  const seconds = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

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
   * @default 3
   */
  runs?: number;
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
   * Longest single backoff, in ms.
   * @default 30000
   */
  maxBackoffMs?: number;
  /**
   * Longest one selection may take, in ms (passed to the model call as `timeout`).
   * @default 60000
   */
  timeoutMs?: number;
  /**
   * Which errors are rate limits.
   * @default isRateLimitError
   */
  isRateLimit?: (error: unknown) => boolean;
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
  /**
   * Thresholds of the diagnoses.
   * @default {} (DEFAULT_DIAGNOSE_OPTIONS)
   */
  diagnose?: DiagnoseOptions;
  /** Called after each case run. */
  onProgress?: (progress: SelectionProgress) => void;
  /**
   * Clock, for `seconds`.
   * @default performance.now
   */
  now?: () => number;
}

/** The defaults of {@link EvaluateSelectionOptions}. */
export const DEFAULT_EVALUATE_SELECTION_OPTIONS: Readonly<
  Required<Omit<EvaluateSelectionOptions, "cases" | "selector" | "onProgress">>
> = Object.freeze({
  runs: 3,
  concurrency: 4,
  retries: 4,
  backoffMs: 1000,
  maxBackoffMs: 30_000,
  timeoutMs: 60_000,
  isRateLimit: isRateLimitError,
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  diagnose: Object.freeze({}),
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
}

/** The longest error message kept per case run. */
const MAX_ERROR_LENGTH = 300;

/**
 * Run every case `runs` times against the selector and add up the outcomes. Case runs go
 * run-major (every case once, then again), at most `concurrency` at a time. A run aborted through
 * `config.signal` stops the whole evaluation (rethrown); any other failure is that case run's
 * error outcome.
 * @throws InvalidInput for no cases, or runs / concurrency that are not positive integers.
 */
export async function evaluateSelection(
  options: EvaluateSelectionOptions,
  config?: RunnableConfig,
): Promise<SelectionReport> {
  const o = { ...DEFAULT_EVALUATE_SELECTION_OPTIONS, ...definedOnly(options) };
  for (const [key, min] of [
    ["runs", 1],
    ["concurrency", 1],
    ["retries", 0],
  ] as const) {
    if (!Number.isInteger(o[key]) || o[key] < min)
      throw new InvalidInput(`evaluateSelection: ${key} must be an integer >= ${min}; got ${o[key]}.`);
  }
  if (options.cases.length === 0) throw new InvalidInput("evaluateSelection: there are no cases to run.");
  const started = o.now();
  const outcomes: Outcome[][] = options.cases.map(() => new Array<Outcome>(o.runs));
  const tasks: { c: number; r: number }[] = [];
  for (let r = 0; r < o.runs; r++) for (let c = 0; c < options.cases.length; c++) tasks.push({ c, r });
  let done = 0;
  let errors = 0;

  const attempt = async (turn: string): Promise<Outcome> => {
    for (let retry = 0; ; retry++) {
      config?.signal?.throwIfAborted();
      try {
        return { tool: await options.selector.select(turn, { ...config, timeout: o.timeoutMs }) };
      } catch (error) {
        if (config?.signal?.aborted) throw error;
        if (!o.isRateLimit(error)) return { error: clip(oneLine(errorMessage(error)), MAX_ERROR_LENGTH) };
        if (retry >= o.retries) {
          return {
            error: clip(`rate limited after ${o.retries} retries: ${oneLine(errorMessage(error))}`, MAX_ERROR_LENGTH),
          };
        }
        const backoff = Math.min(o.maxBackoffMs, o.backoffMs * 2 ** retry) * (0.5 + o.random() / 2);
        await o.sleep(Math.min(o.maxBackoffMs, retryAfterMs(error) ?? backoff));
      }
    }
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const { c, r } = tasks[next++];
      const outcome = await attempt(options.cases[c].turn);
      outcomes[c][r] = outcome;
      done += 1;
      if ("error" in outcome) errors += 1;
      options.onProgress?.({ done, total: tasks.length, errors });
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, tasks.length) }, worker));

  const selector = options.selector;
  const scores: number[] | undefined = selector.score ? [] : undefined;
  if (selector.score && scores) for (const c of options.cases) scores.push(await selector.score(c.turn, config));
  const run: SelectionRun = {
    mode: selector.mode,
    label: selector.label,
    runs: o.runs,
    tools: [...selector.tools],
    ...(selector.minScore !== undefined ? { minScore: selector.minScore } : {}),
    warnings: [...selector.warnings],
    seconds: Math.round((o.now() - started) / 100) / 10,
    cases: options.cases.map((c, i) => ({
      id: c.id,
      turn: c.turn,
      expect: [...c.expect],
      ...(c.line !== undefined ? { line: c.line } : {}),
      outcomes: outcomes[i],
    })),
    ...(scores ? { scores } : {}),
  };
  return summarizeSelection(run, o.diagnose);
}

/** Add up a run's outcomes (pure): what {@link evaluateSelection} returns, also for a run read back from JSON. */
export function summarizeSelection(run: SelectionRun, options: DiagnoseOptions = {}): SelectionReport {
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
  const noTool = noToolOfRun(run);
  return {
    ...run,
    ...(noTool ? { noTool } : {}),
    warnings: [...warnings],
    accuracy: accuracyOf(run.cases),
    matrix,
    perTool: toolScores(run.cases, matrix),
    agreement: agreementOf(run.cases),
    diagnoses: diagnose({ matrix, runs, mode: run.mode, minScore: run.minScore }, options),
    errors,
  };
}

/** {@link NoToolFigures} of a run with one score per case and cases of both kinds; undefined otherwise. */
function noToolOfRun(run: SelectionRun): NoToolFigures | undefined {
  if (!run.scores || run.scores.length !== run.cases.length) return undefined;
  const served: number[] = [];
  const none: number[] = [];
  run.cases.forEach((c, i) => (c.expect.length === 0 ? none : served).push(run.scores![i]));
  if (served.length === 0 || none.length === 0) return undefined;
  return noToolFigures(served, none, run.minScore);
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
    }),
  ),
  scores: z.array(z.number()).optional(),
});

/**
 * A saved run read back and summed up again (the saved figures are not trusted; the outcomes are).
 * @throws InvalidInput naming the first field that does not fit.
 */
export function parseSelectionRun(value: unknown, source: string): SelectionReport {
  const parsed = SelectionRunSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidInput(
      `${source}: not a saved run of \`tool-lessons eval --json\` (${issue.path.join(".") || "(root)"}: ${issue.message}).`,
      { context: { file: source } },
    );
  }
  return summarizeSelection(parsed.data);
}
