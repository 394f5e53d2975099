/**
 * The ledger session every operator command opens: the options and help lines that name a ledger
 * and a partition, where the ledger is, opening it (a SQLite file must exist unless the command
 * creates one), a `LessonManager` over a fresh `ToolIndex` (rebuilt from the ledger's cards on
 * first use), and closing it when the command is done.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { readEnv } from "../env.js";
import { NotFound } from "../errors.js";
import { ToolIndex } from "../routing/tool-index.js";
import type { LessonManager } from "../learn/manager.js";
import { createToolLessons } from "../app/app.js";
import type { FailureSink } from "../failure.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import { DEFAULT_OPEN_LEDGER_OPTIONS, openLedger } from "../ledger/open.js";
import { nonEmpty, type OptionSpec, type ParsedArgs, stringOption, UsageError } from "./args.js";
import { type CliIo, println } from "./io.js";
import { redactUrl } from "../internal.js";

export const LOCATION_OPTIONS: OptionSpec = {
  ledger: { type: "string" },
  postgres: { type: "string" },
};
export const LEDGER_OPTIONS: OptionSpec = {
  ...LOCATION_OPTIONS,
  partition: { type: "string" },
  wordings: { type: "string" },
};
export const JSON_OPTION: OptionSpec = { json: { type: "boolean" } };

export const LEDGER_HELP = `Ledger:
  --ledger PATH           SQLite ledger file (default: TOOL_LESSONS_LEDGER, else ${DEFAULT_OPEN_LEDGER_OPTIONS.path})
  --postgres URL          Postgres ledger, postgres://... (default: TOOL_LESSONS_POSTGRES_URL)`;
export const PARTITION_HELP = `  --partition P           the partition (tenant / user / agent) (default "${DEFAULT_PARTITION}")
  --wordings on|off       routing with the wordings of served requests, as the app routes (the
                          index option wordings; default on): a review learns examples only where
                          they fall short`;
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
  return openLedger({ ...(file !== undefined ? { path: file } : { postgresUrl }), failureSink: cliSink(io) });
}

/** The CLI's one failure sink: a warning line on stderr, for the ledger and the manager alike. */
function cliSink(io: CliIo): FailureSink {
  return ({ message, context, error }) =>
    println(
      io.stderr,
      `warning: ${message}${context ? ` ${JSON.stringify(context)}` : ""}${error ? ` (${error.name}: ${error.message})` : ""}`,
    );
}

/** The --wordings on|off option (undefined: the index's default). @throws UsageError */
export function wordingsOption(values: ParsedArgs["values"]): boolean | undefined {
  const flag = stringOption(values, "wordings");
  if (flag === undefined) return undefined;
  if (flag !== "on" && flag !== "off") throw new UsageError(`--wordings takes on or off; got "${flag}".`);
  return flag === "on";
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
    const wordings = wordingsOption(values);
    // The CLI is a view over an app: its manager reports to the same sink as its ledger.
    const index = new ToolIndex({ ledger, ...(wordings === undefined ? {} : { wordings }) });
    const manager = createToolLessons({ ledger, index, failureSink: cliSink(io) }).manager();
    return await fn({ ledger, manager, partition });
  } finally {
    await ledger.close();
  }
}

/**
 * Refuse a partition the ledger has no row of (a typo, or the wrong ledger), naming those it has.
 * @throws NotFound
 */
export async function requireKnownPartition(ledger: Ledger, partition: string): Promise<void> {
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

/** The --by option a command needs (who approved it), or a usage error saying so. */
export function requiredBy(values: ParsedArgs["values"], command: string): string {
  const by = nonEmpty(stringOption(values, "by"), "--by");
  if (by === undefined) throw new UsageError(`missing --by NAME: who approved the ${command} (kept on the revision).`);
  return by;
}
