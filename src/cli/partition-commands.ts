/**
 * The operator's commands over what a partition holds and how it is set: usage flags, settings
 * (configure), cards, and the partitions of a ledger. Each opens the ledger session
 * (`ledger-session.ts`), does one thing, and closes it.
 */
import { DEFAULT_SETTINGS } from "../settings.js";
import { flag, parseCommandArgs, parseSettingAssignments, stringList, UsageError } from "./args.js";
import { type CardSummary, renderCards, renderFlags, renderSettings, summariseCard } from "./format.js";
import { type Command, EXIT, println } from "./io.js";
import {
  EXIT_HELP,
  JSON_OPTION,
  json,
  LEDGER_HELP,
  LEDGER_OPTIONS,
  LOCATION_OPTIONS,
  PARTITION_HELP,
  withLedger,
} from "./ledger-session.js";

const flags: Command = {
  name: "flags",
  summary: "usage flags: tools offered but never called, tools never offered",
  help: `Usage: tool-lessons flags [--set key=value ...] [--json]

Tools routing keeps offering that nobody calls (retrieved_never_called: offered in >= minOffers
routed turns) and tools it never offers (never_retrieved: over >= minTurns routed turns). For a
person to read; nothing is changed.

Options:
  --set key=value         threshold for this run only (minOffers, minTurns)
  --json                  print the flags as a JSON array
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons flags --set minOffers=10
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...LEDGER_OPTIONS,
      ...JSON_OPTION,
      set: { type: "string", multiple: true },
    });
    const config = parseSettingAssignments(stringList(values, "set"), "--set");
    return withLedger(values, io, async ({ manager, partition }) => {
      const result = await manager.flags({ partition, config });
      if (flag(values, "json")) json(io, result);
      else println(io.stdout, renderFlags(result));
      return EXIT.ok;
    });
  },
};

const cards: Command = {
  name: "cards",
  summary: "registered tools with what each has learned",
  help: `Usage: tool-lessons cards [--json]

Every tool card of the partition: version, learned and synthetic example requests, usage notes,
"Not for" lines, example call, and revisions waiting to be applied.

Options:
  --json                  print one object per card (counts and the learned parts)
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons cards --partition acme
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...LEDGER_OPTIONS, ...JSON_OPTION });
    return withLedger(values, io, async ({ ledger, partition }) => {
      const [all, proposed] = await Promise.all([
        ledger.listCards(partition),
        ledger.listRevisions(partition, { status: "proposed" }),
      ]);
      const waiting = new Map<string, number>();
      for (const r of proposed) waiting.set(r.tool, (waiting.get(r.tool) ?? 0) + 1);
      const summaries: CardSummary[] = all.map((c) => summariseCard(c, waiting.get(c.name) ?? 0));
      if (flag(values, "json")) {
        json(
          io,
          summaries.map((s, i) => ({ ...s, description: all[i].author.description, learned: all[i].learned })),
        );
      } else {
        println(io.stdout, renderCards(partition, summaries));
      }
      return EXIT.ok;
    });
  },
};

// ------------------------------------------------------------------ configure / partitions

const configure: Command = {
  name: "configure",
  summary: "store settings for a partition (key=value ...), or --show them",
  help: `Usage: tool-lessons configure key=value [key=value ...]
       tool-lessons configure --show [--json]

Stores settings (evidence thresholds, caps, retention, routing k) for a partition, merged over
what is stored; unknown keys and bad values are refused. Settings:
  ${wrap(
    Object.keys(DEFAULT_SETTINGS).map((k) => `${k} (${String(DEFAULT_SETTINGS[k as keyof typeof DEFAULT_SETTINGS])})`),
    92,
  ).join("\n  ")}

Options:
  --show                  print the partition's settings (those differing from the default marked)
  --json                  print the settings as JSON
${PARTITION_HELP}
${LEDGER_HELP}

A SQLite ledger file that does not exist yet is created.

${EXIT_HELP}

Example:
  tool-lessons configure minMisses=3 maxNewQueries=2 --partition acme
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...LEDGER_OPTIONS, ...JSON_OPTION, show: { type: "boolean" } },
      {
        min: 0,
        max: Number.POSITIVE_INFINITY,
      },
    );
    const show = flag(values, "show");
    if (positionals.length === 0 && !show) {
      throw new UsageError("missing key=value settings to store, or --show.");
    }
    const input = parseSettingAssignments(positionals);
    return withLedger(
      values,
      io,
      async ({ ledger, manager, partition }) => {
        const settings =
          positionals.length > 0 ? await manager.configure(input, { partition }) : await ledger.getSettings(partition);
        if (flag(values, "json")) {
          json(io, settings);
          return EXIT.ok;
        }
        if (positionals.length > 0) {
          const stored = Object.entries(input).map(([k, v]) => `${k}=${String(v)}`);
          println(io.stdout, `stored for partition "${partition}": ${stored.join(" ")}`);
        }
        if (show) println(io.stdout, renderSettings(partition, settings, DEFAULT_SETTINGS));
        return EXIT.ok;
      },
      { create: positionals.length > 0 },
    );
  },
};

const partitions: Command = {
  name: "partitions",
  summary: "every partition with any row in the ledger",
  help: `Usage: tool-lessons partitions [--json]

Lists every partition with any row (cards, records, revisions or settings). Operator scope: the
only command that looks across partitions.

Options:
  --json                  print the names as a JSON array
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons partitions --ledger .tool-lessons/ledger.db
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...LOCATION_OPTIONS, ...JSON_OPTION });
    return withLedger(values, io, async ({ ledger }) => {
      const names = await ledger.listPartitions();
      if (flag(values, "json")) json(io, names);
      else println(io.stdout, names.length > 0 ? names : ["no partitions (the ledger is empty)"]);
      return EXIT.ok;
    });
  },
};

function wrap(items: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const item of items) {
    const next = line ? `${line}, ${item}` : item;
    if (next.length > width && line) {
      lines.push(`${line},`);
      line = item;
    } else {
      line = next;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The commands over a partition, in the order `--help` lists them. */
export const PARTITION_COMMANDS: readonly Command[] = [flags, configure, cards, partitions];
