import { existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ToolLessonsError } from "../errors.js";
import { compareRuns } from "../evaluate/compare.js";
import { toolSource } from "../evaluate/harness.js";
import { lintDescriptions } from "../evaluate/lint-descriptions.js";
import { type LedgerSection, renderReport, reportData } from "../evaluate/report.js";
import { ToolIndex } from "../routing/tool-index.js";
import { LessonManager } from "../learn/manager.js";
import { storedVerdict } from "../learn/review/guard.js";
import { errorMessage } from "../internal.js";
import type { ToolCard } from "../ledger/schema.js";
import { flag, nonEmpty, type OptionSpec, parseCommandArgs, stringOption, UsageError } from "./args.js";
import { DEFAULT_OPEN_LEDGER_OPTIONS } from "../ledger/open.js";
import { LEDGER_HELP, LEDGER_OPTIONS, openLedgerAt, PARTITION_HELP, partitionOption } from "./ledger-session.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import {
  learnedCards,
  optionalLedger,
  readSavedRun,
  readSelectionInputs,
  runSelection,
  SELECTION_HELP,
  SELECTION_OPTIONS,
} from "./measure.js";

const OPTIONS: OptionSpec = {
  ...SELECTION_OPTIONS,
  ...LEDGER_OPTIONS,
  out: { type: "string" },
  before: { type: "string" },
  title: { type: "string" },
  json: { type: "boolean" },
};

const HELP = `Usage: tool-lessons report --tools TOOLS --cases CASES.jsonl --out FILE.html [--before RUN.json]
                            [--runs 3] [--model MODULE] [--json]

Writes one self-contained HTML page to look at (no network needed to view it): the confusion
matrix as a heatmap, accuracy before and after, recall per tool, what the errors say, the
description linter's findings, and from the ledger the pending revisions with their evidence,
each applied revision's measured effect (FLAGGED when nil or negative, or not enough data), the
rules and the usage flags.

"Now" is measured with what the ledger's cards learned; "before" is the tools as written (when
anything was learned) or the saved run of --before. Without a ledger (none named and none at the
default path) the page has the run and the linter only. Everything is read and measured before
the file is written: on any error nothing is written.

Options:
${SELECTION_HELP}
  --out FILE              the HTML file to write (required; replaced if it exists)
  --before FILE           a saved run (\`eval --json > FILE\`) to compare with
  --title TEXT            the page's title (default "Tool selection report")
  --json                  also print the page's data as JSON (what the heatmap and bars show)
${PARTITION_HELP}
${LEDGER_HELP}

Exit codes: 0 written, 1 failed while running (store down, every case run failed), 2 bad
arguments or input files.

Example:
  tool-lessons report --tools tools.jsonl --cases cases.jsonl --out report.html
`;

/** The output path, checked before anything runs: its folder exists, it is not a folder. */
function outPath(values: Parameters<typeof stringOption>[0]): string {
  const out = nonEmpty(stringOption(values, "out"), "--out");
  if (out === undefined) throw new UsageError("missing --out FILE.html (where to write the report).");
  const path = resolve(out);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--out ${JSON.stringify(out)}: no folder ${dir}; create it first.`);
  if (existsSync(path) && statSync(path).isDirectory())
    throw new UsageError(`--out ${JSON.stringify(out)} is a folder; give a file name.`);
  return path;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const out = outPath(values);
  const inputs = await readSelectionInputs(values);
  const beforeFile = stringOption(values, "before");
  const saved = beforeFile === undefined ? undefined : await readSavedRun(beforeFile, "--before");
  const partition = partitionOption(values);

  let ledgerSection: LedgerSection;
  let lessons: ToolCard[] = [];
  const location = optionalLedger(values, io);
  if (location === undefined) {
    ledgerSection = {
      missing: `No ledger at ${DEFAULT_OPEN_LEDGER_OPTIONS.path} and none named: pending revisions, rules and usage flags come from one (--ledger PATH or --postgres URL).`,
    };
  } else {
    const ledger = await openLedgerAt(location, io);
    try {
      const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
      const [cards, revisions, rules, flags, effects, gate] = await Promise.all([
        ledger.listCards(partition),
        ledger.listRevisions(partition, { status: "proposed" }),
        ledger.listRules(partition),
        manager.flags({ partition }),
        manager.effects({ partition }),
        ledger.wordingsGate(partition),
      ]);
      lessons = learnedCards(cards, inputs.tools);
      const guard = storedVerdict(gate);
      ledgerSection = { partition, revisions, rules, flags, effects, ...(guard ? { guard } : {}) };
    } finally {
      await ledger.close();
    }
  }

  println(
    io.stderr,
    `report: ${inputs.cases.length} cases x ${inputs.runs} runs over ${inputs.tools.length} tools${lessons.length > 0 ? `, with the lessons of ${lessons.length} tools` : ""}`,
  );
  const now = await runSelection(inputs, io, { lessons, label: "report: now" });
  const before =
    saved ?? (lessons.length > 0 ? await runSelection(inputs, io, { label: "report: before" }) : undefined);
  if (now.accuracy.counted === 0) {
    const first = now.errors[0];
    println(
      io.stderr,
      `tool-lessons report: every case run failed${first ? `; the first: ${first.error}` : ""}; nothing written.`,
    );
    return EXIT.runtime;
  }
  const lint = await lintDescriptions(inputs.tools.map(toolSource));
  const title = nonEmpty(stringOption(values, "title"), "--title");
  const input = {
    run: now,
    ...(before ? { before, comparison: compareRuns(before, now) } : {}),
    lint,
    ledger: ledgerSection,
    generatedAt: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    ...(title ? { title } : {}),
  };
  const html = renderReport(input);
  // Written beside the target, then renamed over it: a reader never sees half a page.
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, html);
    renameSync(tmp, out);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new ToolLessonsError(
      `cannot write ${out}: ${errorMessage(error)}; check the folder's permissions and free space.`,
      { cause: error },
    );
  }
  if (flag(values, "json")) {
    println(io.stdout, JSON.stringify(reportData(input)));
  } else {
    const c = input.comparison;
    const pct = (x: number | null): string => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);
    println(io.stdout, [
      `wrote ${out} (${Math.round(html.length / 1024)} KB)`,
      `  accuracy ${pct(now.accuracy.accuracy)}${c ? ` (before ${pct(c.accuracy.before)}: ${c.accuracy.verdict.replace(/_/g, " ")})` : ""}; ${now.diagnoses.length} diagnoses`,
      `  linter: ${lint.findings.length} findings on ${lint.failing} of ${lint.tools} tools`,
      "missing" in ledgerSection
        ? "  ledger: none"
        : `  ledger ${JSON.stringify(partition)}: ${ledgerSection.revisions.length} pending revisions, ${ledgerSection.rules.length} rules, ${ledgerSection.flags.length} usage flags, ${flaggedCount(ledgerSection.effects)} flagged lessons`,
    ]);
  }
  return EXIT.ok;
}

/** How many applied revisions the effect check flagged. */
function flaggedCount(effects: readonly { flag?: string }[] | undefined): number {
  return (effects ?? []).filter((e) => e.flag !== undefined).length;
}

/** `tool-lessons report`. */
export const reportCommand: Command = {
  name: "report",
  summary: "write one self-contained HTML report: heatmap, accuracy before/after, recall, linter, revisions",
  help: HELP,
  run,
};
