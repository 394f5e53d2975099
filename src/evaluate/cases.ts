/**
 * Labelled cases for the selection-accuracy harness, and the tools they are scored against, read
 * from JSON lines. Every line is checked by zod; the first bad line fails the whole read with the
 * file and line number (InvalidInput), so a broken case file never half-runs.
 *
 * A case is `{"turn": "...", "expect": "tool" | ["tool", ...] | null}`: `null` or `[]` means no
 * tool should fire. The MetaTool format (`{"query": "...", "expect": [...]}`) is read as is.
 * Optional: `candidates` (the tools this case is routed among, as most published tool benchmarks
 * give each query its own list), `fold` (an integer, for filtering), and any other field whose
 * value is a string, number or boolean (`category`, `kind`, MetaTool's `source`), kept for a
 * breakdown of the figures by its values.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import type { ToolSource } from "../ledger/cards.js";

/** One labelled user turn. */
export interface EvalCase {
  /** The file's `id` field when it has one, else `line N` (or `case N` for cases not from a file). */
  id: string;
  /** The user's words, exactly as labelled. */
  turn: string;
  /** Tools any one of which is a right first call. Empty: no tool should fire. */
  expect: string[];
  /** 1-based line of the case file, when read from one. */
  line?: number;
  /** The only tools this case may be routed among (its own candidate list), when it has one. */
  candidates?: string[];
  /** Its fold, when it has one (for `--folds`). */
  fold?: number;
  /** Its other fields with a scalar value, as text (`{"category": "travel", "fold": "2"}`), for breakdowns. */
  fields?: Record<string, string>;
}

/** A tool as a JSONL file gives it (the MetaTool `tools.jsonl` format; other fields ignored). */
export const ToolLineSchema = z.object({
  name: z.string().trim().min(1, "a tool needs a non-empty name"),
  description: z.string().default(""),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
});
/** One tool line, parsed. */
export type ToolLine = z.infer<typeof ToolLineSchema>;

const Expect = z.union([
  z.string().trim().min(1, "a tool name cannot be blank"),
  z.array(z.string().trim().min(1)),
  z.null(),
]);

/** The fields of a case line that are not kept as breakdown fields. */
const CASE_KEYS: ReadonlySet<string> = new Set(["turn", "query", "expect", "id", "candidates"]);

/**
 * One case line: `turn` (or MetaTool's `query`), `expect`, an optional `id`, optional
 * `candidates` (a non-empty list of tool names, without repeats, holding every expected tool) and
 * `fold` (an integer >= 0); other fields are kept as they are.
 */
export const CaseLineSchema = z
  .looseObject({
    turn: z.string().optional(),
    query: z.string().optional(),
    expect: Expect,
    id: z.union([z.string(), z.number()]).optional(),
    candidates: z
      .array(z.string().trim().min(1, "a candidate tool name cannot be blank"))
      .min(1, "needs at least one tool (leave the field out to route among all tools)")
      .refine((names) => new Set(names).size === names.length, "names a tool twice")
      .optional(),
    fold: z.number().int().min(0).optional(),
  })
  .refine((c) => (c.turn ?? c.query ?? "").trim() !== "", {
    message: 'needs a non-empty "turn" (or "query"): the user\'s words',
    path: ["turn"],
  })
  .refine((c) => c.candidates === undefined || expectList(c.expect).every((t) => c.candidates!.includes(t)), {
    message: 'must hold every tool of "expect" (a case is routed among its candidates only)',
    path: ["candidates"],
  });

/** A parsed case line as an {@link EvalCase} (without its id and line). */
function caseOf(value: z.infer<typeof CaseLineSchema>): Omit<EvalCase, "id" | "line"> {
  const fields: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (CASE_KEYS.has(key)) continue;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") fields[key] = String(v);
  }
  return {
    turn: (value.turn ?? value.query ?? "").trim(),
    expect: expectList(value.expect),
    ...(value.candidates !== undefined ? { candidates: value.candidates.map((t) => t.trim()) } : {}),
    ...(value.fold !== undefined ? { fold: value.fold } : {}),
    ...(Object.keys(fields).length > 0 ? { fields } : {}),
  };
}

/** One parsed line and where it came from. */
export interface Numbered<T> {
  value: T;
  /** 1-based line number. */
  line: number;
}

/**
 * Parse JSON lines: one JSON object per line, blank lines skipped, each checked by `schema`.
 * Fields the schema does not name are dropped.
 * @param source the file name, for messages.
 * @throws InvalidInput `source:line: what is wrong` for the first bad line.
 */
export function parseJsonl<T>(text: string, schema: z.ZodType<T>, source: string): Numbered<T>[] {
  const rows: Numbered<T>[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === "") continue;
    const where = `${source}:${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new InvalidInput(
        `${where}: not valid JSON (${(error as Error).message}); each line must be one JSON object.`,
        {
          cause: error,
          context: { file: source, line: i + 1 },
        },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 3)
        .map((issue) => (issue.path.length > 0 ? `"${issue.path.join(".")}": ${issue.message}` : issue.message))
        .join("; ");
      throw new InvalidInput(`${where}: ${issues}.`, { context: { file: source, line: i + 1 } });
    }
    rows.push({ value: parsed.data, line: i + 1 });
  }
  return rows;
}

/** Read a text file, with a message that names the option it came from and says how to fix it. */
export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
    throw new InvalidInput(`cannot read the ${what} file ${JSON.stringify(file)}: ${why}; check the path.`, {
      cause: error,
      context: { file },
    });
  }
}

/** A case line's `expect` as a list of tool names, without repeats. */
function expectList(expect: z.infer<typeof Expect>): string[] {
  if (expect === null) return [];
  return [...new Set(typeof expect === "string" ? [expect] : expect)];
}

/**
 * Parse a case file's text.
 * @throws InvalidInput naming the file and line of the first bad case, or for a file with none.
 */
export function parseCases(text: string, source: string): EvalCase[] {
  const rows = parseJsonl(text, CaseLineSchema, source);
  if (rows.length === 0) {
    throw new InvalidInput(
      `the case file ${JSON.stringify(source)} has no cases; write one {"turn", "expect"} object per line.`,
      {
        context: { file: source },
      },
    );
  }
  return rows.map(({ value, line }) => ({
    id: value.id === undefined ? `line ${line}` : String(value.id),
    ...caseOf(value),
    line,
  }));
}

/** Read and parse a case file ({@link parseCases}). */
export async function readCases(file: string): Promise<EvalCase[]> {
  return parseCases(await readTextFile(file, "cases"), file);
}

/** A case as an API caller gives it: `turn`, `expect`, and optionally what a case line may carry. */
export interface CaseInput {
  turn: string;
  expect: string | readonly string[] | null;
  id?: string;
  candidates?: readonly string[];
  fold?: number;
  /** Fields for breakdowns (`{ category: "travel" }`). */
  fields?: Readonly<Record<string, string | number | boolean>>;
}

/** Cases from plain objects (an API caller's, not a file's): ids `case N`, checked like a file. */
export function toCases(items: readonly CaseInput[]): EvalCase[] {
  return items.map((item, i) => {
    const { fields, ...rest } = item;
    const parsed = CaseLineSchema.safeParse({
      ...fields,
      ...rest,
      expect: Array.isArray(item.expect) ? [...item.expect] : item.expect,
      ...(item.candidates ? { candidates: [...item.candidates] } : {}),
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInput(
        `case ${i + 1}: ${issue.path.length ? `"${issue.path.join(".")}": ` : ""}${issue.message}.`,
      );
    }
    return { id: item.id ?? `case ${i + 1}`, ...caseOf(parsed.data) };
  });
}

/**
 * Parse a tool file's text (one `{"name", "description", "parameters"}` per line).
 * @throws InvalidInput for a bad line, an empty file, or a repeated name (naming both lines).
 */
export function parseToolLines(text: string, source: string): ToolLine[] {
  const rows = parseJsonl(text, ToolLineSchema, source);
  if (rows.length === 0)
    throw new InvalidInput(`the tools file ${JSON.stringify(source)} has no tools.`, { context: { file: source } });
  const seen = new Map<string, number>();
  for (const row of rows) {
    const first = seen.get(row.value.name);
    if (first !== undefined) {
      throw new InvalidInput(
        `${source}:${row.line}: tool "${row.value.name}" is already defined on line ${first}; names must be unique.`,
        {
          context: { file: source, line: row.line },
        },
      );
    }
    seen.set(row.value.name, row.line);
  }
  return rows.map((r) => r.value);
}

/** A tool line as a {@link ToolSource} (what cards and the linter read). */
export function toolSourceOf(tool: ToolLine): ToolSource {
  return { name: tool.name, description: tool.description, schema: tool.parameters ?? undefined };
}

/**
 * Check that every tool a case expects is one of `tools`.
 * @throws InvalidInput naming the first such case (file and line when known), the unknown tool,
 *   how many cases name unknown tools, and the nearest known names.
 */
export function checkCaseTools(cases: readonly EvalCase[], tools: readonly string[], source = "cases"): void {
  const known = new Set(tools);
  const named = (c: EvalCase): string[] => [...c.expect, ...(c.candidates ?? [])];
  const bad = cases.filter((c) => named(c).some((t) => !known.has(t)));
  if (bad.length === 0) return;
  const first = bad[0];
  const unknown = named(first).find((t) => !known.has(t))!;
  const how = first.expect.includes(unknown) ? "expects tool" : "names candidate";
  const where = first.line !== undefined ? `${source}:${first.line}` : `${source} (${first.id})`;
  const near = nearestNames(unknown, tools, 3);
  const hint = near.length > 0 ? ` Did you mean ${near.map((n) => JSON.stringify(n)).join(" or ")}?` : "";
  throw new InvalidInput(
    `${where}: ${how} ${JSON.stringify(unknown)}, which is not among the ${tools.length} tools given` +
      `${bad.length > 1 ? ` (${bad.length} cases name unknown tools)` : ""}.${hint} Fix the label or add the tool.`,
    { context: { file: source, line: first.line, cases: bad.length } },
  );
}

/**
 * The cases whose `fold` is one of `folds`, in file order.
 * @throws InvalidInput naming the first case without a fold, or when no case is in the folds
 *   (naming the folds the cases have).
 */
export function casesInFolds(cases: readonly EvalCase[], folds: readonly number[], source = "cases"): EvalCase[] {
  const missing = cases.find((c) => c.fold === undefined);
  if (missing) {
    const where = missing.line !== undefined ? `${source}:${missing.line}` : `${source} (${missing.id})`;
    throw new InvalidInput(`${where}: no "fold" field; filtering by folds needs one on every case.`, {
      context: { file: source, line: missing.line },
    });
  }
  const wanted = new Set(folds);
  const kept = cases.filter((c) => wanted.has(c.fold!));
  if (kept.length === 0) {
    const present = [...new Set(cases.map((c) => c.fold!))].sort((a, b) => a - b);
    throw new InvalidInput(
      `no case of ${source} is in folds ${folds.join(",")}; its folds are ${present.join(", ")}.`,
      { context: { file: source } },
    );
  }
  return kept;
}

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length];
}

/**
 * Names within a third of `name`'s length in edit distance (at least 1, at most 3 edits; case,
 * `-` and `_` ignored), nearest first: the "did you mean" of a mistyped name.
 */
export function nearestNames(name: string, names: readonly string[], max = 1): string[] {
  const plain = (s: string): string => s.toLowerCase().replace(/[-_\s]/g, "");
  const limit = Math.min(3, Math.max(1, Math.floor(plain(name).length / 3)));
  return names
    .map((n) => ({ n, d: editDistance(plain(name), plain(n)) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, max)
    .map((x) => x.n);
}
