/**
 * Tools that are copies of one another: the same description and the same argument schema once
 * normalized, or several versions of one function whose names differ only in case, separators or
 * a version suffix (`get_weather`, `get_weather_v2`, `getWeather`: `learn/near-duplicates.ts`).
 * Routing and a model hardly tell them apart, so a "Not for" line on each cannot separate them:
 * they are diagnosed as duplicates to merge or rename, never as a dense pair to fence (and a
 * review's guard never lets one version's wordings take another's requests). A pure function of
 * the tools.
 */
import { cardFromTool, type ToolSource } from "../ledger/cards.js";
import { versionStem } from "../learn/near-duplicates.js";

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
 * descriptions and argument schemas are equal, or whose names share a version stem (see
 * `versionStem`); groups that share a tool are one. Tools with an empty description are never
 * grouped: they are undescribed, not copies.
 */
export function duplicateTools(tools: readonly ToolSource[]): string[][] {
  const keys = new Map<string, string[]>();
  const add = (key: string, name: string): void => void keys.set(key, [...(keys.get(key) ?? []), name]);
  for (const tool of tools) {
    const description = normalizedDescription(tool.description ?? "");
    if (description === "") continue;
    const stem = versionStem(tool.name);
    if (stem !== "") add(`name\u0000${stem}`, tool.name);
    const schema = schemaText(tool);
    if (schema === undefined) continue;
    add(`copy\u0000${description}\u0000${schema}`, tool.name);
  }
  // Groups sharing a tool are one (union-find over the names).
  const parent = new Map<string, string>();
  const root = (name: string): string => {
    let r = name;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r)!;
    parent.set(name, r);
    return r;
  };
  for (const names of keys.values()) {
    if (new Set(names).size < 2) continue;
    for (const name of names) if (!parent.has(name)) parent.set(name, name);
    for (const name of names.slice(1)) parent.set(root(name), root(names[0]));
  }
  const groups = new Map<string, Set<string>>();
  for (const name of parent.keys()) {
    const r = root(name);
    if (!groups.has(r)) groups.set(r, new Set());
    groups.get(r)!.add(name);
  }
  return [...groups.values()]
    .filter((names) => names.size > 1)
    .map((names) => [...names].sort((a, b) => a.localeCompare(b)))
    .sort((a, b) => a[0].localeCompare(b[0]));
}
