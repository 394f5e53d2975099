/**
 * Tools that are copies of one another: the same description and the same argument schema once
 * normalized. Nothing a model or a router reads tells them apart, so a "Not for" line on each
 * cannot separate them: they are diagnosed as duplicates to merge or rename, never as a dense
 * pair to fence. A pure function of the tools.
 */
import { cardFromTool, type ToolSource } from "../ledger/cards.js";

/**
 * A description as compared: Unicode-normalized (NFKC), lower case, every run of white space one
 * space, without the sentence's final full stop.
 */
export function normalizedDescription(description: string): string {
  return description
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!]+$/, "");
}

/** JSON with object keys sorted at every level, so equal schemas give equal text. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>)
          .filter(([key, x]) => x !== undefined && key !== "$schema")
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, x]) => [key, sorted(x)]),
      );
    }
    return v;
  };
  return JSON.stringify(sorted(value));
}

/** The argument schema as JSON schema text (as a card holds it), or undefined when it cannot be converted. */
function schemaText(tool: ToolSource): string | undefined {
  try {
    return canonical(cardFromTool(tool, "duplicates").author.schema);
  } catch {
    // A schema no card could hold is compared with nothing: the harness reports it elsewhere.
    return undefined;
  }
}

/**
 * Groups of tools (two or more, each sorted by name; groups by their first name) whose normalized
 * descriptions and argument schemas are equal. Tools with an empty description are never grouped:
 * they are undescribed, not copies.
 */
export function duplicateTools(tools: readonly ToolSource[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const tool of tools) {
    const description = normalizedDescription(tool.description ?? "");
    if (description === "") continue;
    const schema = schemaText(tool);
    if (schema === undefined) continue;
    const key = `${description}\u0000${schema}`;
    groups.set(key, [...(groups.get(key) ?? []), tool.name]);
  }
  return [...groups.values()]
    .filter((names) => names.length > 1)
    .map((names) => [...names].sort((a, b) => a.localeCompare(b)))
    .sort((a, b) => a[0].localeCompare(b[0]));
}
