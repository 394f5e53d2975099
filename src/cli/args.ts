/**
 * Argument parsing for the `tool-lessons` command: `node:util` `parseArgs` per command, with every
 * value checked by zod and every failure turned into a {@link UsageError} whose message says what
 * was wrong and how to fix it.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { nearestNames } from "../evaluate/cases.js";
import { EXAMPLE_OBJECTIVE_FIELDS, type ExampleObjective, parseExampleObjective } from "../learn/example-objective.js";
import { parseSettings, SettingsSchema, type SettingsInput } from "../settings.js";

/** The command line was wrong (unknown flag, missing value, bad number): exit code 2. */
export class UsageError extends InvalidInput {
  override name = "UsageError";
}

/** Options accepted by one command, in `parseArgs` form. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** What {@link parseCommandArgs} returns: option values by name, and the positionals. */
export interface ParsedArgs {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** Whether the arguments ask for help (`--help` or `-h` anywhere before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/**
 * Parse one command's arguments strictly: unknown options and missing values are usage errors,
 * positionals are allowed only up to `maxPositionals`.
 * @throws UsageError
 */
export function parseCommandArgs(
  argv: readonly string[],
  options: OptionSpec,
  positionals: { min: number; max: number; name?: string } = { min: 0, max: 0 },
): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error), { cause: error });
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) {
    throw new UsageError(`missing ${positionals.name ?? "an argument"}.`);
  }
  if (count > positionals.max) {
    const extra = parsed.positionals
      .slice(positionals.max)
      .map((p) => JSON.stringify(p))
      .join(" ");
    throw new UsageError(`unexpected argument ${extra}.`);
  }
  return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
}

/** `parseArgs` messages are long and mention `allowPositionals`; say it the command line's way. */
function parseArgsMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown) return `unknown option ${unknown[1]}.`;
  const missing = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument missing/.exec(message);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && missing) return `${missing[1]} needs a value.`;
  const ambiguous = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(message);
  if (ambiguous) return `${ambiguous[1]} needs a value (for one starting with "-", write ${ambiguous[1]}=VALUE).`;
  const noValue = /Option '(--[\w-]+)' does not take an argument/.exec(message);
  if (noValue) return `${noValue[1]} takes no value.`;
  return message.split("\n")[0];
}

/** A string option's value, or undefined. */
export function stringOption(values: ParsedArgs["values"], name: string): string | undefined {
  const value = values[name];
  if (Array.isArray(value)) return value.length > 0 ? String(value[value.length - 1]) : undefined;
  return typeof value === "string" ? value : undefined;
}

/** A repeatable string option's values. */
export function stringList(values: ParsedArgs["values"], name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
}

/** A boolean flag's value. */
export function flag(values: ParsedArgs["values"], name: string): boolean {
  return values[name] === true;
}

const PositiveInt = z
  .string()
  .trim()
  .regex(/^\d[\d_]*$/, "must be a positive integer")
  .transform((s) => Number(s.replace(/_/g, "")))
  .pipe(z.number().int().min(1, "must be a positive integer").max(Number.MAX_SAFE_INTEGER, "is too large"));

/**
 * An optional positive integer option (`--k 5`).
 * @throws UsageError naming the option and the value given.
 */
export function positiveIntOption(values: ParsedArgs["values"], name: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const parsed = PositiveInt.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(`--${name} must be a positive integer; got ${JSON.stringify(raw)}.`);
  }
  return parsed.data;
}

const Share = z
  .string()
  .trim()
  .regex(/^(\d+\.?\d*|\.\d+)$/)
  .transform(Number)
  .pipe(z.number().min(0).max(1));

/**
 * An optional share from 0 to 1 (`--center 0.5`).
 * @throws UsageError naming the option and the value given.
 */
export function shareOption(values: ParsedArgs["values"], name: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const parsed = Share.safeParse(raw);
  if (!parsed.success) throw new UsageError(`--${name} takes a share from 0 to 1; got ${JSON.stringify(raw)}.`);
  return parsed.data;
}

/** A non-empty trimmed string (names, partitions, ids). */
export function nonEmpty(value: string | undefined, what: string): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") throw new UsageError(`${what} cannot be empty.`);
  return trimmed;
}

const FoldList = z
  .string()
  .trim()
  .regex(/^\d+(\s*,\s*\d+)*$/, "must be comma-separated integers, e.g. 2,3,4")
  .transform((s) => [...new Set(s.split(",").map((n) => Number(n.trim())))]);

/**
 * A fold list such as `2,3,4`.
 * @throws UsageError
 */
export function foldsOption(values: ParsedArgs["values"], name: string): number[] | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const parsed = FoldList.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(`--${name} must be comma-separated fold numbers, e.g. 2,3,4; got ${JSON.stringify(raw)}.`);
  }
  return parsed.data;
}

/** Names of the settings an operator can store (`SettingsSchema`). */
export const SETTING_NAMES: readonly string[] = Object.keys(SettingsSchema.shape);

/**
 * Turn `key=value` assignments into a settings override, validated by the settings schema.
 * Values are read as numbers (`20000` or `20_000`), booleans (`true`/`false`) or left as text
 * (which the schema then refuses with its own message). An unknown name gets a "did you mean"
 * for a near miss (case, `-`, `_` and up to a few typos), else the list of known names.
 * @param where the option the assignments came from (`--set`), put before each message; none
 *   for positionals, whose command already names itself.
 * @throws UsageError for a malformed assignment, an unknown setting or a bad value.
 */
export function parseSettingAssignments(assignments: readonly string[], where?: string): SettingsInput {
  return checkedAssignments<SettingsInput>(assignments, {
    names: SETTING_NAMES,
    what: "setting",
    prefix: where === undefined ? "" : `${where}: `,
    example: "minMisses=3",
    check: parseSettings,
    schemaPrefix: /^Invalid tool-lessons settings: /,
  });
}

/**
 * Turn `--objective key=value` assignments into an `exampleObjective` override (numbers, and
 * `Infinity` for a gain that turns its step off), validated by its schema.
 * @throws UsageError for a malformed assignment, an unknown field or a bad value.
 */
export function parseObjectiveAssignments(assignments: readonly string[]): Partial<ExampleObjective> {
  return checkedAssignments<Partial<ExampleObjective>>(assignments, {
    names: EXAMPLE_OBJECTIVE_FIELDS,
    what: "objective field",
    prefix: "--objective: ",
    example: "lossWeight=1",
    check: parseExampleObjective,
    schemaPrefix: /^Invalid exampleObjective: /,
  });
}

/**
 * `key=value` assignments as an object, every key one of `names` (a "did you mean" otherwise),
 * then passed to `check`, whose error becomes a `UsageError` (its own prefix dropped).
 */
function checkedAssignments<T>(
  assignments: readonly string[],
  o: {
    names: readonly string[];
    what: string;
    prefix: string;
    example: string;
    check: (input: T) => unknown;
    schemaPrefix: RegExp;
  },
): T {
  const input: Record<string, unknown> = {};
  for (const assignment of assignments) {
    const eq = assignment.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(`${o.prefix}expected key=value, got ${JSON.stringify(assignment)} (e.g. ${o.example}).`);
    }
    const key = assignment.slice(0, eq).trim();
    const raw = assignment.slice(eq + 1).trim();
    if (!o.names.includes(key)) {
      const [near] = nearestNames(key, o.names);
      const hint = near ? `did you mean ${near}?` : `known ${o.what}s: ${o.names.join(", ")}.`;
      throw new UsageError(`${o.prefix}unknown ${o.what} ${JSON.stringify(key)}; ${hint}`);
    }
    input[key] = assignedValue(raw);
  }
  try {
    o.check(input as T);
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(o.schemaPrefix, "") : String(error);
    throw new UsageError(`${o.prefix}bad ${o.what} value: ${detail.replace(/\.$/, "")}.`, { cause: error });
  }
  return input as T;
}

/** An assigned value as a number (`Infinity` too), a boolean, or else the text as given. */
function assignedValue(raw: string): unknown {
  if (raw === "true") return true;
  if (raw === "Infinity") return Number.POSITIVE_INFINITY;
  if (raw === "false") return false;
  if (/^-?\d[\d_]*(\.\d+)?$/.test(raw)) return Number(raw.replace(/_/g, ""));
  return raw;
}
