import { casesInFolds } from "../evaluate/cases.js";
import { compareRuns } from "../evaluate/compare.js";
import { DEFAULT_EVALUATE_SELECTION_OPTIONS } from "../evaluate/harness.js";
import {
  flag,
  foldsOption,
  type OptionSpec,
  type ParsedArgs,
  parseCommandArgs,
  stringList,
  stringOption,
  UsageError,
} from "./args.js";
import { LEDGER_HELP, LEDGER_OPTIONS, PARTITION_HELP } from "./ledger-session.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import {
  learnedCards,
  readLessonCards,
  readSavedRun,
  readSelectionInputs,
  runSelection,
  SELECTION_HELP,
  SELECTION_OPTIONS,
} from "./measure.js";
import { renderComparison, renderSelection } from "./measure-format.js";

const OPTIONS: OptionSpec = {
  ...SELECTION_OPTIONS,
  ...LEDGER_OPTIONS,
  lessons: { type: "boolean" },
  compare: { type: "string" },
  json: { type: "boolean" },
  folds: { type: "string" },
  by: { type: "string", multiple: true },
  k: { type: "string" },
  "ignore-candidates": { type: "boolean" },
};

const DEFAULT_K = DEFAULT_EVALUATE_SELECTION_OPTIONS.k.join(",");

/** `--k 1,3,5`: the k of recall@k. */
function kOption(values: ParsedArgs["values"]): number[] | undefined {
  const raw = stringOption(values, "k");
  if (raw === undefined) return undefined;
  const ks = raw.split(",").map((part) => part.trim());
  if (!ks.every((part) => /^[1-9]\d*$/.test(part)))
    throw new UsageError(`--k takes comma-separated positive integers, e.g. ${DEFAULT_K}; got ${JSON.stringify(raw)}.`);
  return [...new Set(ks.map(Number))];
}

/** `--by FIELD` (repeatable, or comma-separated): case fields to break the figures down by. */
function byOption(values: ParsedArgs["values"]): string[] {
  const fields = stringList(values, "by")
    .flatMap((v) => v.split(","))
    .map((f) => f.trim());
  if (fields.some((f) => f === "")) throw new UsageError("--by takes a case field name, e.g. --by category.");
  return [...new Set(fields)];
}

const HELP = `Usage: tool-lessons eval --tools TOOLS --cases CASES.jsonl [--runs N] [--model MODULE] [--lessons]
                          [--folds LIST] [--by FIELD] [--k ${DEFAULT_K}] [--ignore-candidates]
                          [--compare BEFORE.json] [--json]

How accurately are tools picked today, and where does it go wrong? Runs every labelled case
with the router alone (offline, the package's own routing; once, as it repeats exactly) or with
a chat model with the tools bound (--model; the first tool call of its reply is the pick; the
tools never run; 3 runs). Prints accuracy, recall@k of the router's ranking, the "no tool"
decision's AUROC, precision and recall, agreement across runs, recall and precision per tool,
the largest confusions and what they say: duplicate tools, dense pairs, scattered rows, errors
in the no-tool row and column. A case with "candidates" is routed among those tools only. A
case run that errors (after retries on rate limits) is reported, never counted as a miss.
Nothing is written.

Options:
${SELECTION_HELP}
  --lessons               measure with what the ledger's cards learned (examples for routing;
                          notes and "Not for" lines shown to --model), not the tools as written
  --compare FILE          a saved run (\`eval --json > FILE\`) to compare with: accuracy and
                          recall per tool before and after, and whether each change is more
                          than the repeats' noise (tools with >= 10 cases)
  --folds LIST            only the cases whose "fold" is in LIST, e.g. 1,2 (every case needs one)
  --by FIELD              the figures per value of a case field too (accuracy, recall@k, no tool),
                          e.g. --by category; repeatable (default: kind, when cases have one)
  --k LIST                the k of recall@k (default ${DEFAULT_K}); the router ranks that deep
  --ignore-candidates     route every case among all the tools, even one with "candidates"
  --json                  print the run as one JSON object: every outcome, accuracy, ranking, noTool,
                          breakdowns, matrix (labels, counts), perTool, agreement, diagnoses, errors
                          (and comparison)
With --lessons:
${PARTITION_HELP}
${LEDGER_HELP}

Progress goes to stderr (a bar on a terminal). Exit codes: 0 done, 1 every case run failed (or
the store is down), 2 bad arguments or input files (a missing file, a bad line, an unknown tool).

Example:
  tool-lessons eval --tools tools.jsonl --cases cases.jsonl --json > before.json
  tool-lessons eval --tools tools.jsonl --cases cases.jsonl --lessons --compare before.json
  tool-lessons eval --tools src/tools.ts --cases cases.jsonl --model eval/model.mjs --runs 5
  tool-lessons eval --tools tools.jsonl --cases queries.jsonl --folds 1 --by source --min-score 0.1
`;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const k = kOption(values);
  const asked = byOption(values);
  const folds = foldsOption(values, "folds");
  const read = await readSelectionInputs(values);
  const inputs = folds ? { ...read, cases: casesInFolds(read.cases, folds, read.casesFile) } : read;
  const compareFile = stringOption(values, "compare");
  const before = compareFile === undefined ? undefined : await readSavedRun(compareFile, "--compare");
  const lessons = flag(values, "lessons") ? learnedCards((await readLessonCards(values, io)).cards, inputs.tools) : [];
  if (flag(values, "lessons") && lessons.length === 0)
    println(
      io.stderr,
      "eval: warning: no card of these tools has learned anything yet; measuring the tools as written.",
    );

  // Cases that say their kind get the figures per kind without asking.
  const by = asked.length > 0 || !inputs.cases.some((c) => c.fields?.kind !== undefined) ? asked : ["kind"];
  const mode = inputs.model ? "chat model" : "router";
  const ignoreCandidates = flag(values, "ignore-candidates");
  const among = ignoreCandidates ? 0 : inputs.cases.filter((c) => c.candidates !== undefined).length;
  println(
    io.stderr,
    `eval: ${inputs.cases.length} cases x ${inputs.runs} runs over ${inputs.tools.length} tools (${mode})` +
      (among > 0 ? `; ${among} cases routed among their own candidates` : ""),
  );
  const report = await runSelection(inputs, io, { lessons, label: "eval", k, by, ignoreCandidates });
  for (const w of report.warnings) println(io.stderr, `eval: warning: ${w}`);
  for (const field of by.filter((f) => !inputs.cases.some((c) => c.fields?.[f] !== undefined)))
    println(io.stderr, `eval: warning: no case has a "${field}" field (or one with a text, number or boolean value).`);
  if (report.accuracy.counted === 0) {
    const first = report.errors[0];
    println(
      io.stderr,
      `tool-lessons eval: every case run failed${first ? `; the first: ${first.error}` : ""}. Check the model and its connection.`,
    );
    if (flag(values, "json")) println(io.stdout, JSON.stringify(report));
    return EXIT.runtime;
  }
  const comparison = before ? compareRuns(before, report) : undefined;
  if (flag(values, "json")) {
    println(io.stdout, JSON.stringify(comparison ? { ...report, comparison } : report));
  } else {
    println(io.stdout, renderSelection(report));
    if (comparison) println(io.stdout, ["", ...renderComparison(comparison)]);
  }
  return EXIT.ok;
}

/** `tool-lessons eval`. */
export const evalCommand: Command = {
  name: "eval",
  summary: "measure tool-selection accuracy on labelled cases (router or chat model), with a diagnosis",
  help: HELP,
  run,
};
