import { compareRuns } from "../evaluate/compare.js";
import { flag, type OptionSpec, parseCommandArgs, stringOption } from "./args.js";
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
};

const HELP = `Usage: tool-lessons eval --tools TOOLS --cases CASES.jsonl [--runs 3] [--model MODULE] [--lessons]
                          [--compare BEFORE.json] [--json]

How accurately are tools picked today, and where does it go wrong? Runs every labelled case
--runs times, with the router alone (offline, the package's own routing) or with a chat model
with the tools bound (--model; the first tool call of its reply is the pick; the tools never
run). Prints accuracy, agreement across runs, recall and precision per tool, the largest
confusions and what they say: dense pairs, scattered rows, errors in the no-tool row and column.
A case run that errors (after retries on rate limits) is reported, never counted as a miss.
Nothing is written.

Options:
${SELECTION_HELP}
  --lessons               measure with what the ledger's cards learned (examples for routing;
                          notes and "Not for" lines shown to --model), not the tools as written
  --compare FILE          a saved run (\`eval --json > FILE\`) to compare with: accuracy and
                          recall per tool before and after, and whether each change is more
                          than the repeats' noise (tools with >= 10 cases)
  --json                  print the run as one JSON object: every outcome, accuracy, matrix
                          (labels, counts), perTool, agreement, diagnoses, errors (and comparison)
With --lessons:
${PARTITION_HELP}
${LEDGER_HELP}

Progress goes to stderr (a bar on a terminal). Exit codes: 0 done, 1 every case run failed (or
the store is down), 2 bad arguments or input files (a missing file, a bad line, an unknown tool).

Example:
  tool-lessons eval --tools tools.jsonl --cases cases.jsonl --json > before.json
  tool-lessons eval --tools tools.jsonl --cases cases.jsonl --lessons --compare before.json
  tool-lessons eval --tools src/tools.ts --cases cases.jsonl --model eval/model.mjs --runs 5
`;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const inputs = await readSelectionInputs(values);
  const compareFile = stringOption(values, "compare");
  const before = compareFile === undefined ? undefined : await readSavedRun(compareFile, "--compare");
  const lessons = flag(values, "lessons") ? learnedCards((await readLessonCards(values, io)).cards, inputs.tools) : [];
  if (flag(values, "lessons") && lessons.length === 0)
    println(
      io.stderr,
      "eval: warning: no card of these tools has learned anything yet; measuring the tools as written.",
    );

  const mode = inputs.model ? "chat model" : "router";
  println(
    io.stderr,
    `eval: ${inputs.cases.length} cases x ${inputs.runs} runs over ${inputs.tools.length} tools (${mode})`,
  );
  const report = await runSelection(inputs, io, { lessons, label: "eval" });
  for (const w of report.warnings) println(io.stderr, `eval: warning: ${w}`);
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
