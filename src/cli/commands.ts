/**
 * The operator's commands over a ledger: review, apply, dismiss, undo, history, flags, configure,
 * cards, partitions. Each opens the ledger, builds a `LessonManager` over a fresh `ToolIndex`
 * (rebuilt from the ledger's cards on first use), does one thing, and closes the ledger.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { readEnv } from "../env.js";
import { NotFound } from "../errors.js";
import { ToolIndex } from "../routing/tool-index.js";
import { LessonManager } from "../learn/manager.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import { DEFAULT_OPEN_LEDGER_OPTIONS, openLedger } from "../ledger/open.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import {
  flag,
  nonEmpty,
  type OptionSpec,
  type ParsedArgs,
  parseCommandArgs,
  parseSettingAssignments,
  stringList,
  stringOption,
  UsageError,
} from "./args.js";
import {
  type CardSummary,
  renderCards,
  renderFlags,
  renderLearned,
  renderReview,
  renderRevision,
  renderSettings,
  summariseCard,
} from "./format.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import { redactUrl } from "../internal.js";

export const LOCATION_OPTIONS: OptionSpec = {
  ledger: { type: "string" },
  postgres: { type: "string" },
};
export const LEDGER_OPTIONS: OptionSpec = { ...LOCATION_OPTIONS, partition: { type: "string" } };
export const JSON_OPTION: OptionSpec = { json: { type: "boolean" } };

export const LEDGER_HELP = `Ledger:
  --ledger PATH           SQLite ledger file (default: TOOL_LESSONS_LEDGER, else ${DEFAULT_OPEN_LEDGER_OPTIONS.path})
  --postgres URL          Postgres ledger, postgres://... (default: TOOL_LESSONS_POSTGRES_URL)`;
export const PARTITION_HELP = `  --partition P           the partition (tenant / user / agent) (default "${DEFAULT_PARTITION}")`;
export const EXIT_HELP =
  "Exit codes: 0 done, 1 failed while running (not found, conflict, store down), 2 bad arguments.";

const PostgresUrl = z.string().regex(/^postgres(ql)?:\/\//);

/** An opened ledger and the manager over it. */
export interface Session {
  ledger: Ledger;
  manager: LessonManager;
  partition: string;
}

/** Where the options say the ledger is: a SQLite file or a Postgres URL, and whether any was named. */
export interface LedgerLocation {
  /** The SQLite file, resolved (undefined for Postgres). */
  file?: string;
  postgresUrl?: string;
  /** True when --ledger, --postgres or the environment named it (not the embedded default). */
  named: boolean;
}

/**
 * Read --ledger / --postgres (and the environment) into a location, refusing both at once and a
 * Postgres URL that is not one.
 * @throws UsageError
 */
export function ledgerLocation(values: ParsedArgs["values"], io: CliIo): LedgerLocation {
  const path = nonEmpty(stringOption(values, "ledger"), "--ledger");
  const postgres = nonEmpty(stringOption(values, "postgres"), "--postgres");
  if (path !== undefined && postgres !== undefined) {
    throw new UsageError("give --ledger PATH or --postgres URL, not both.");
  }
  if (postgres !== undefined && !PostgresUrl.safeParse(postgres).success) {
    throw new UsageError(
      `--postgres must be a postgres:// or postgresql:// connection string; got ${JSON.stringify(redactUrl(postgres))}.`,
    );
  }
  const env = io.env ?? readEnv();
  const postgresUrl = postgres ?? (path === undefined ? env.postgresUrl : undefined);
  if (postgresUrl !== undefined) return { postgresUrl, named: true };
  const named = path !== undefined || env.ledgerPath !== undefined;
  return { file: resolve(path ?? env.ledgerPath ?? DEFAULT_OPEN_LEDGER_OPTIONS.path), named };
}

/**
 * Open the ledger at `location`. A SQLite file must already exist unless `create` is set, so a
 * mistyped path fails instead of answering from a new, empty ledger.
 * @throws UsageError for a missing file; StoreUnavailable when it cannot be opened.
 */
export async function openLedgerAt(
  location: LedgerLocation,
  io: CliIo,
  options: { create?: boolean } = {},
): Promise<Ledger> {
  const { file, postgresUrl } = location;
  if (file !== undefined && !options.create && !existsSync(file)) {
    throw new UsageError(
      `no ledger at ${file}; pass --ledger PATH (or set TOOL_LESSONS_LEDGER) to the file your application records into.`,
    );
  }
  return openLedger({
    ...(file !== undefined ? { path: file } : { postgresUrl }),
    onWarning: (message, context) =>
      println(io.stderr, `warning: ${message}${context ? ` ${JSON.stringify(context)}` : ""}`),
  });
}

/** The --partition option, or the default partition. */
export function partitionOption(values: ParsedArgs["values"]): string {
  return nonEmpty(stringOption(values, "partition"), "--partition") ?? DEFAULT_PARTITION;
}

/** Open the ledger the options name, run `fn` with a manager over it, close it. */
export async function withLedger<T>(
  values: ParsedArgs["values"],
  io: CliIo,
  fn: (session: Session) => Promise<T>,
  options: { create?: boolean } = {},
): Promise<T> {
  const location = ledgerLocation(values, io);
  const partition = partitionOption(values);
  const ledger = await openLedgerAt(location, io, options);
  try {
    const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
    return await fn({ ledger, manager, partition });
  } finally {
    await ledger.close();
  }
}

/**
 * Refuse a partition the ledger has no row of (a typo, or the wrong ledger), naming those it has.
 * @throws NotFound
 */
async function requireKnownPartition(ledger: Ledger, partition: string): Promise<void> {
  const known = await ledger.listPartitions();
  if (known.includes(partition)) return;
  const shown = known
    .slice(0, 10)
    .map((p) => JSON.stringify(p))
    .join(", ");
  const list =
    known.length === 0 ? "the ledger is empty" : `it has ${shown}${known.length > 10 ? `, … (${known.length})` : ""}`;
  throw new NotFound(
    `partition "${partition}" has no records, tools or settings in this ledger (${list}); check --partition, or the ledger the application records into (\`tool-lessons partitions\`).`,
  );
}

/** Print one value as indented JSON (what `--json` prints). */
export function json(io: CliIo, value: unknown): void {
  println(io.stdout, JSON.stringify(value, null, 2));
}

function requiredBy(values: ParsedArgs["values"], command: string): string {
  const by = nonEmpty(stringOption(values, "by"), "--by");
  if (by === undefined) throw new UsageError(`missing --by NAME: who approved the ${command} (kept on the revision).`);
  return by;
}

// ------------------------------------------------------------------ review

const REVIEW_OPTIONS: OptionSpec = {
  ...LEDGER_OPTIONS,
  ...JSON_OPTION,
  "dry-run": { type: "boolean" },
  "auto-apply": { type: "boolean" },
  set: { type: "string", multiple: true },
  tool: { type: "string", multiple: true },
};

const review: Command = {
  name: "review",
  summary: "find what repeats in the ledger and propose vetted lessons (one revision per tool)",
  help: `Usage: tool-lessons review [--dry-run] [--auto-apply] [--tool NAME ...] [--set key=value ...] [--json]

Reads the partition's records, detects failures, missed and confused requests per tool, proposes
lessons with the deterministic proposer, vets them, and stores each tool's kept lessons as a
proposed revision. Nothing reaches a card until it is applied.

Options:
  --dry-run               show what would be proposed; store nothing
  --auto-apply            apply every revision at once, approved by tool-lessons:auto
  --tool NAME             review only this tool (repeatable)
  --set key=value         a setting for this review only (repeatable), e.g. --set minMisses=3
  --json                  print the review as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons review --ledger .tool-lessons/ledger.db --set minMisses=3 --dry-run
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, REVIEW_OPTIONS);
    const config = parseSettingAssignments(stringList(values, "set"), "--set");
    const dryRun = flag(values, "dry-run");
    const autoApply = flag(values, "auto-apply");
    if (dryRun && autoApply) throw new UsageError("--dry-run and --auto-apply exclude each other.");
    const tools = stringList(values, "tool").map((t) => nonEmpty(t, "--tool")!);
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      await requireKnownPartition(ledger, partition);
      if ((await ledger.listCalledTools(partition)).length === 0) {
        println(
          io.stderr,
          `review: partition "${partition}" has no recorded tool calls yet: there is nothing to learn from.`,
        );
      }
      const result = await manager.review({
        partition,
        dryRun,
        autoApply,
        config,
        ...(tools.length > 0 ? { tools } : {}),
      });
      if (flag(values, "json")) json(io, result);
      else println(io.stdout, renderReview(result, { dryRun, autoApply }));
      return EXIT.ok;
    });
  },
};

// ------------------------------------------------------------------ apply / dismiss / undo

const apply: Command = {
  name: "apply",
  summary: "apply a proposed revision to its tool's card (--by who approved it)",
  help: `Usage: tool-lessons apply ID --by NAME [--json]

Applies a proposed revision: its examples, notes, "Not for" lines and example call go on the card.
Routing is checked again first: an example that would push another tool out of the offered set
for a request that tool served is withdrawn (the revision records which and why).

Options:
  --by NAME               who approved it (required; kept on the revision)
  --json                  print the applied revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons apply 0mx35itpy000037c6f33e15 --by alice
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...LEDGER_OPTIONS, ...JSON_OPTION, by: { type: "string" } },
      {
        min: 1,
        max: 1,
        name: "a revision ID (see `tool-lessons review` or `history TOOL`)",
      },
    );
    const id = nonEmpty(positionals[0], "the revision ID")!;
    const by = requiredBy(values, "apply");
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revision = await manager.apply(id, { partition, approvedBy: by });
      if (flag(values, "json")) {
        json(io, revision);
        return EXIT.ok;
      }
      const card = await ledger.getCard(partition, revision.tool);
      println(io.stdout, [`applied revision ${revision.id} to ${revision.tool}`, "", ...renderRevision(revision)]);
      if (card) println(io.stdout, ["", ...renderLearned(card)]);
      return EXIT.ok;
    });
  },
};

const dismiss: Command = {
  name: "dismiss",
  summary: "dismiss a proposed revision",
  help: `Usage: tool-lessons dismiss ID [--by NAME] [--json]

Dismisses a proposed revision; the card is not touched. The tool is reviewed again once it has
new calls, but nothing the dismissed revision held is proposed again (refused as turned_down).

Options:
  --by NAME               who dismissed it (kept on the revision)
  --json                  print the dismissed revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons dismiss 0mx35itpy000037c6f33e15 --by alice
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...LEDGER_OPTIONS, ...JSON_OPTION, by: { type: "string" } },
      {
        min: 1,
        max: 1,
        name: "a revision ID",
      },
    );
    const id = nonEmpty(positionals[0], "the revision ID")!;
    const by = nonEmpty(stringOption(values, "by"), "--by");
    return withLedger(values, io, async ({ manager, partition }) => {
      const revision = await manager.dismiss(id, { partition, ...(by !== undefined ? { by } : {}) });
      if (flag(values, "json")) json(io, revision);
      else println(io.stdout, `dismissed revision ${revision.id} of ${revision.tool}${by ? ` (by ${by})` : ""}`);
      return EXIT.ok;
    });
  },
};

const undo: Command = {
  name: "undo",
  summary: "take back the newest applied revision of a tool",
  help: `Usage: tool-lessons undo TOOL --by NAME [--json]

Takes back the newest applied revision of TOOL, restoring what its card learned before (synthetic
examples that gave way included). Refused if the card was changed after that revision.

Options:
  --by NAME               who approved the undo (required)
  --json                  print the undone revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons undo search_flights --by alice
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...LEDGER_OPTIONS, ...JSON_OPTION, by: { type: "string" } },
      {
        min: 1,
        max: 1,
        name: "a tool name",
      },
    );
    const tool = nonEmpty(positionals[0], "the tool name")!;
    const by = requiredBy(values, "undo");
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revision = await manager.undo(tool, { partition, approvedBy: by });
      if (flag(values, "json")) {
        json(io, revision);
        return EXIT.ok;
      }
      const card = await ledger.getCard(partition, tool);
      println(
        io.stdout,
        `undid revision ${revision.id} of ${tool} (by ${by}); the card is back to what it learned before`,
      );
      if (card) println(io.stdout, ["", ...renderLearned(card)]);
      return EXIT.ok;
    });
  },
};

// ------------------------------------------------------------------ history / flags / cards

const history: Command = {
  name: "history",
  summary: "revisions of a tool, newest first",
  help: `Usage: tool-lessons history TOOL [--json]

Every revision of TOOL, newest first: status, what it added, evidence, routing ranks, refusals,
who approved, dismissed or undid it.

Options:
  --json                  print the revisions as a JSON array
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons history search_flights
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...LEDGER_OPTIONS, ...JSON_OPTION },
      {
        min: 1,
        max: 1,
        name: "a tool name",
      },
    );
    const tool = nonEmpty(positionals[0], "the tool name")!;
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revisions = await manager.history(tool, { partition });
      if (revisions.length === 0 && !(await ledger.getCard(partition, tool))) {
        throw new NotFound(
          `No tool "${tool}" is registered in partition "${partition}"; \`tool-lessons cards\` lists them.`,
        );
      }
      if (flag(values, "json")) {
        json(io, revisions);
        return EXIT.ok;
      }
      if (revisions.length === 0) println(io.stdout, `no revisions of ${tool} yet`);
      revisions.forEach((r, i) => println(io.stdout, [...(i > 0 ? [""] : []), ...renderRevision(r)]));
      return EXIT.ok;
    });
  },
};

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

/** The operator commands, in the order `--help` lists them. */
export const LEDGER_COMMANDS: readonly Command[] = [
  review,
  apply,
  dismiss,
  undo,
  history,
  flags,
  configure,
  cards,
  partitions,
];
