import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * A fixed slice of the MetaTool data (`../shared/data/metatool`, beside the repository): tools with
 * their descriptions and single-tool requests, chosen the same way on every run.
 */
export const METATOOL_DIR = fileURLToPath(new URL("../../../shared/data/metatool", import.meta.url));

export interface MetaToolSlice {
  tools: { name: string; description: string }[];
  requests: { query: string; expect: string }[];
}

interface ToolRow {
  name: string;
  description: string;
}
interface QueryRow {
  id: string;
  query: string;
  expect: string[] | string | null;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** Why the slice cannot be read here, or null when it can. */
export function metaToolUnavailableReason(): string | null {
  return existsSync(`${METATOOL_DIR}/tools.jsonl`) && existsSync(`${METATOOL_DIR}/queries.jsonl`)
    ? null
    : `MetaTool data not found at ${METATOOL_DIR} (expected beside the repository as ../shared/data/metatool).`;
}

/**
 * `tools` tools (every third by name, so neighbours of many kinds are in) and `requests` requests
 * for them, spread over the tools in turn, each naming exactly one tool.
 */
export function metaToolSlice(tools = 60, requests = 200): MetaToolSlice {
  const allTools = readJsonl<ToolRow>(`${METATOOL_DIR}/tools.jsonl`).sort((a, b) => a.name.localeCompare(b.name));
  const chosen = allTools.filter((_, i) => i % 3 === 0).slice(0, tools);
  const names = new Set(chosen.map((t) => t.name));
  const byTool = new Map<string, string[]>();
  for (const row of readJsonl<QueryRow>(`${METATOOL_DIR}/queries.jsonl`)) {
    const expect = Array.isArray(row.expect) ? row.expect : row.expect === null ? [] : [row.expect];
    if (expect.length !== 1 || !names.has(expect[0])) continue;
    byTool.set(expect[0], [...(byTool.get(expect[0]) ?? []), row.query]);
  }
  const out: MetaToolSlice["requests"] = [];
  for (let round = 0; out.length < requests; round++) {
    let added = 0;
    for (const tool of chosen) {
      const query = byTool.get(tool.name)?.[round];
      if (query === undefined || out.length >= requests) continue;
      out.push({ query, expect: tool.name });
      added++;
    }
    if (added === 0) break;
  }
  return { tools: chosen.map((t) => ({ name: t.name, description: t.description })), requests: out };
}
