/**
 * What `eval` and `report` share: their selection options, reading and checking every input
 * before anything runs, and one selection run with a progress bar.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { z } from "zod";
import { checkCaseTools, type EvalCase, readCases, readTextFile } from "../evaluate/cases.js";
import {
  chatModelSelector,
  DEFAULT_EVALUATE_SELECTION_OPTIONS,
  DEFAULT_SELECTION_RUNS,
  type EvalTool,
  evaluateSelection,
  parseSelectionRun,
  routerSelector,
  type SelectionReport,
} from "../evaluate/harness.js";
import { errorMessage } from "../internal.js";
import type { ToolCard } from "../ledger/schema.js";
import { type OptionSpec, type ParsedArgs, positiveIntOption, stringOption, UsageError } from "./args.js";
import { type LedgerLocation, ledgerLocation, openLedgerAt, partitionOption } from "./ledger-session.js";
import type { CliIo } from "./io.js";
import { loadChatModel, loadTools } from "./load.js";
import { progressBar } from "./progress.js";

/** Options of a selection run, shared by `eval` and `report`. */
export const SELECTION_OPTIONS: OptionSpec = {
  tools: { type: "string" },
  cases: { type: "string" },
  runs: { type: "string" },
  model: { type: "string" },
  system: { type: "string" },
  concurrency: { type: "string" },
  retries: { type: "string" },
  "min-score": { type: "string" },
};

/** Their help lines. */
export const SELECTION_HELP = `  --tools FILE            the tools: JSONL ({"name","description","parameters"} per line) or a
                          module exporting LangChain tools (.js, .mjs, .ts) (required)
  --cases FILE            labelled cases, JSONL: {"turn": "...", "expect": "tool" | ["tool", ...] | null}
                          (null or [] = no tool should fire; MetaTool's "query" works too) (required);
                          a case with "candidates": [tools] is routed among those tools only
  --runs N                runs of each case (default ${DEFAULT_SELECTION_RUNS.deterministic} with the router, which repeats exactly;
                          ${DEFAULT_SELECTION_RUNS.varying} with --model: temperature 0 is not deterministic)
  --model MODULE          pick with this chat model (a module exporting a LangChain chat model built with
                          temperature 0) instead of the router alone: its first tool call is the pick
  --system FILE           the application's system prompt, sent before each turn (with --model)
  --concurrency N         case runs in flight at once (default ${DEFAULT_EVALUATE_SELECTION_OPTIONS.concurrency})
  --retries N             retries of a rate-limited case run, with backoff (default ${DEFAULT_EVALUATE_SELECTION_OPTIONS.retries})
  --min-score X           router only: pick no tool when the best scores below X (the no-tool path;
                          default: always pick one)`;

const MinScore = z
  .string()
  .trim()
  .regex(/^-?(\d+\.?\d*|\.\d+)$/)
  .transform(Number)
  .pipe(z.number().min(-1).max(1));

/** Everything a selection run needs, read and checked. */
export interface SelectionInputs {
  tools: EvalTool[];
  toolsFile: string;
  cases: EvalCase[];
  casesFile: string;
  model?: BaseChatModel;
  system: string;
  runs: number;
  concurrency: number;
  retries: number;
  minScore?: number;
}

/**
 * Read and check every selection input: the options, the tools, the cases (each expected tool
 * must be one of the tools), the model module and the system prompt.
 * @throws UsageError / InvalidInput (exit 2) naming the option, file and line.
 */
export async function readSelectionInputs(values: ParsedArgs["values"]): Promise<SelectionInputs> {
  const toolsFile = stringOption(values, "tools");
  if (toolsFile === undefined)
    throw new UsageError("missing --tools FILE (a JSONL file or a module exporting LangChain tools).");
  const casesFile = stringOption(values, "cases");
  if (casesFile === undefined) throw new UsageError('missing --cases FILE (one {"turn", "expect"} object per line).');
  const modelFile = stringOption(values, "model");
  const runs =
    positiveIntOption(values, "runs") ??
    (modelFile === undefined ? DEFAULT_SELECTION_RUNS.deterministic : DEFAULT_SELECTION_RUNS.varying);
  const concurrency = positiveIntOption(values, "concurrency") ?? DEFAULT_EVALUATE_SELECTION_OPTIONS.concurrency;
  const retriesRaw = stringOption(values, "retries");
  const retries = retriesRaw === undefined ? DEFAULT_EVALUATE_SELECTION_OPTIONS.retries : Number(retriesRaw);
  if (!Number.isInteger(retries) || retries < 0 || !/^\d+$/.test(retriesRaw ?? "0")) {
    throw new UsageError(`--retries takes a whole number >= 0; got ${JSON.stringify(retriesRaw)}.`);
  }
  const minScoreRaw = stringOption(values, "min-score");
  let minScore: number | undefined;
  if (minScoreRaw !== undefined) {
    const parsed = MinScore.safeParse(minScoreRaw);
    if (!parsed.success)
      throw new UsageError(`--min-score takes a similarity from -1 to 1; got ${JSON.stringify(minScoreRaw)}.`);
    minScore = parsed.data;
  }
  if (modelFile !== undefined && minScore !== undefined)
    throw new UsageError("--min-score is for the router alone; with --model the model decides whether to call a tool.");
  const systemFile = stringOption(values, "system");
  if (systemFile !== undefined && modelFile === undefined)
    throw new UsageError("--system needs --model: the router reads no system prompt.");

  const tools = await loadTools(toolsFile);
  const cases = await readCases(casesFile);
  checkCaseTools(
    cases,
    tools.map((t) => t.name),
    casesFile,
  );
  const model = modelFile === undefined ? undefined : await loadChatModel(modelFile);
  const system = systemFile === undefined ? "" : await readTextFile(systemFile, "--system");
  return {
    tools,
    toolsFile,
    cases,
    casesFile,
    model,
    system,
    runs,
    concurrency,
    retries,
    ...(minScore !== undefined ? { minScore } : {}),
  };
}

/** What one selection run takes besides its inputs. */
export interface RunSelectionOptions {
  /** Progress label ("eval", "report: now"). */
  label: string;
  /** Cards whose learned parts to measure with. @default [] */
  lessons?: readonly ToolCard[];
  /** The k of recall@k. @default [1, 3, 5] */
  k?: readonly number[];
  /** Case fields to break the figures down by. @default [] */
  by?: readonly string[];
  /** Route every case among all the tools, even one with candidates. @default false */
  ignoreCandidates?: boolean;
}

/**
 * One selection run over the inputs (with `lessons`' learned parts), drawing a progress bar on a
 * terminal; its label names the tools file.
 */
export async function runSelection(
  inputs: SelectionInputs,
  io: CliIo,
  options: RunSelectionOptions,
): Promise<SelectionReport> {
  const lessons = options.lessons ?? [];
  const selector = inputs.model
    ? chatModelSelector({ model: inputs.model, tools: inputs.tools, lessons, system: inputs.system })
    : await routerSelector({ tools: inputs.tools, lessons, minScore: inputs.minScore });
  const bar = progressBar(io, options.label);
  try {
    const report = await evaluateSelection({
      cases: inputs.cases,
      selector,
      runs: inputs.runs,
      concurrency: inputs.concurrency,
      retries: inputs.retries,
      k: options.k,
      by: options.by,
      ignoreCandidates: options.ignoreCandidates,
      onProgress: ({ done, total, errors }) => bar.update(done, total, errors > 0 ? `(${errors} errored)` : ""),
    });
    // Two runs of a comparison often differ only by their tools file: say which.
    return { ...report, label: `${report.label} on ${basename(inputs.toolsFile)}` };
  } finally {
    bar.end();
  }
}

/** The cards of `partition` that learned anything, for the tools given. */
export function learnedCards(cards: readonly ToolCard[], tools: readonly EvalTool[]): ToolCard[] {
  const names = new Set(tools.map((t) => t.name));
  return cards.filter((c) => {
    const l = c.learned;
    return (
      names.has(c.name) &&
      (l.examples.length > 0 || l.notes.length > 0 || l.notFor.length > 0 || l.exampleCall !== null)
    );
  });
}

/**
 * Read a saved run (`tool-lessons eval --json > before.json`).
 * @throws InvalidInput naming the file.
 */
export async function readSavedRun(file: string, flagName: string): Promise<SelectionReport> {
  const text = await readTextFile(file, flagName);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${flagName} ${JSON.stringify(file)} is not JSON (${errorMessage(error)}); save a run with \`tool-lessons eval --json > FILE\`.`,
    );
  }
  return parseSelectionRun(json, file);
}

/** Where the ledger is, for commands where it is optional: undefined when none is named and the default file is absent. */
export function optionalLedger(values: ParsedArgs["values"], io: CliIo): LedgerLocation | undefined {
  const location = ledgerLocation(values, io);
  if (!location.named && location.file !== undefined && !existsSync(location.file)) return undefined;
  return location;
}

/** The cards of the partition the options name (the ledger must exist). */
export async function readLessonCards(
  values: ParsedArgs["values"],
  io: CliIo,
): Promise<{ cards: ToolCard[]; partition: string }> {
  const partition = partitionOption(values);
  const ledger = await openLedgerAt(ledgerLocation(values, io), io);
  try {
    return { cards: await ledger.listCards(partition), partition };
  } finally {
    await ledger.close();
  }
}
