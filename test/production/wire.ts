/** Helpers for reading what went over the wire. */

import { tokens } from "../helpers/stored-values.js";

/**
 * A JSON schema with its `$ref`s to `#/$defs/...` inlined and the keys that differ only in how a
 * client serialises it (`$schema`, `$defs`, `title`) dropped: two schemas equal after this say
 * the same about a reply.
 */
export function normalizedSchema(schema: unknown): unknown {
  const defs =
    (typeof schema === "object" && schema !== null
      ? (schema as { $defs?: Record<string, unknown> }).$defs
      : undefined) ?? {};
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$schema" || key === "$defs" || key === "title") continue;
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        Object.assign(out, walk(defs[value.slice("#/$defs/".length)]));
        continue;
      }
      out[key] = walk(value);
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  };
  return walk(schema);
}

/**
 * The planted values found in `text`, as token sequences (so `482913` is found in `ORD-482913`
 * and in `"482913"`, and an email however it is quoted or escaped).
 */
export function plantedIn(text: string, planted: readonly string[]): string[] {
  const haystack = tokens(text.replace(/\\u[0-9a-f]{4}/gi, (m) => String.fromCharCode(parseInt(m.slice(2), 16))));
  return planted.filter((value) => haystack.includes(tokens(value)));
}
