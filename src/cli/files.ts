/**
 * Reading the simulation's JSONL files. Every line is checked by zod; the first bad line fails
 * the whole read with its file and line number, so a broken data set never half-runs.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { LabelledRequestSchema, type LabelledRequest, ToolSpecSchema, type ToolSpec } from "../evaluate/simulate.js";
import { UsageError } from "./args.js";

/** One parsed line and where it came from. */
export interface JsonlRow<T> {
  value: T;
  /** 1-based line number in the file. */
  line: number;
}

/**
 * Read a JSON-lines file: one JSON object per line, blank lines skipped. Fields the schema does
 * not name are dropped (MetaTool's `id`, `source`, `name_for_human` …).
 * @param flagName the option the file came from, for messages (`--tools`).
 * @throws UsageError when the file cannot be read, a line is not JSON or does not match `schema`.
 */
export async function readJsonl<T>(file: string, schema: z.ZodType<T>, flagName: string): Promise<JsonlRow<T>[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : String((error as Error).message ?? error);
    throw new UsageError(`cannot read the ${flagName} file ${JSON.stringify(file)}: ${why}; check the path.`, {
      cause: error,
    });
  }
  const rows: JsonlRow<T>[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    const where = `${file}:${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new UsageError(
        `${where}: not valid JSON (${(error as Error).message}); each line must be one JSON object.`,
        {
          cause: error,
        },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 3)
        .map((issue) => (issue.path.length > 0 ? `"${issue.path.join(".")}": ${issue.message}` : issue.message))
        .join("; ");
      throw new UsageError(`${where}: ${issues}.`, { context: { file, line: i + 1 } });
    }
    rows.push({ value: parsed.data, line: i + 1 });
  }
  return rows;
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
  return rows.map(({ value }) => ({ query: value.query, expect: value.expect }));
}
