/**
 * Reading the simulation's JSONL files. Every line is checked by zod; the first bad line fails
 * the whole read with its file and line number, so a broken data set never half-runs.
 */
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { type Numbered, parseJsonl, readTextFile } from "../evaluate/cases.js";
import { LabelledRequestSchema, type LabelledRequest, ToolSpecSchema, type ToolSpec } from "../evaluate/simulate.js";
import { UsageError } from "./args.js";

/** One parsed line and where it came from (its 1-based line number in the file). */
export type JsonlRow<T> = Numbered<T>;

/**
 * Read a JSON-lines file: one JSON object per line, blank lines skipped. Fields the schema does
 * not name are dropped (MetaTool's `id`, `source`, `name_for_human` …).
 * @param flagName the option the file came from, for messages (`--tools`).
 * @throws UsageError when the file cannot be read, a line is not JSON or does not match `schema`.
 */
export async function readJsonl<T>(file: string, schema: z.ZodType<T>, flagName: string): Promise<JsonlRow<T>[]> {
  try {
    return parseJsonl(await readTextFile(file, flagName), schema, file);
  } catch (error) {
    // The harness's reading and checks, word for word; on the command line a bad file is a usage error.
    if (error instanceof InvalidInput)
      throw new UsageError(error.message, { cause: error.cause, context: error.context });
    throw error;
  }
}

/**
 * Tools in the MetaTool format (`{"name","description","parameters"}` per line).
 * @throws UsageError for an empty file or a repeated name (naming both lines).
 */
export async function readTools(file: string, flagName = "--tools"): Promise<ToolSpec[]> {
  const rows = await readJsonl(file, ToolSpecSchema, flagName);
  if (rows.length === 0) throw new UsageError(`the ${flagName} file ${JSON.stringify(file)} has no tools.`);
  const seen = new Map<string, number>();
  for (const row of rows) {
    const first = seen.get(row.value.name);
    if (first !== undefined) {
      throw new UsageError(
        `${file}:${row.line}: tool "${row.value.name}" is already defined on line ${first}; names must be unique.`,
      );
    }
    seen.set(row.value.name, row.line);
  }
  return rows.map((r) => r.value);
}

/** A labelled request with the optional MetaTool `fold`. */
export const FoldedRequestSchema = LabelledRequestSchema.extend({ fold: z.number().int().optional() });
export type FoldedRequest = z.infer<typeof FoldedRequestSchema>;

/** Labelled requests in the MetaTool format (`{"query","expect":[names]}` per line). */
export async function readRequests(file: string, flagName: string): Promise<JsonlRow<FoldedRequest>[]> {
  return readJsonl(file, FoldedRequestSchema, flagName);
}

/** Strip the file-only fields. */
export function labelled(rows: readonly JsonlRow<FoldedRequest>[]): LabelledRequest[] {
  return rows.map(({ value }) => ({
    query: value.query,
    expect: value.expect,
    ...(value.kind !== undefined ? { kind: value.kind } : {}),
  }));
}
