/**
 * Reading a tool's description and schema for the description linter (`lint-rules.ts`): its
 * sentences and first clause, the words of a name, the parameters of a JSON schema, and whether a
 * schema states a keyword.
 */
import { clip, isRecord, oneLine } from "../internal.js";

/** A parameter of the tool's JSON schema, flattened one level. */
export interface Param {
  name: string;
  schema: Record<string, unknown>;
  description: string;
}

/** Sentences of a text: split after . ! ? and at line breaks, " -- " and ";" kept inside. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=["'(\[A-Z0-9])|\n+/)
    .map((s) => oneLine(s))
    .filter((s) => s !== "");
}

/** The first clause of a description: its first sentence ("IRREVERSIBLE BILLING CHANGE: moves …" is one). */
export function firstClause(text: string): string {
  return sentences(text)[0] ?? "";
}

/** Words of a tool name: `send_email`, `sendEmail`, `send-email` → send, email. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w !== "");
}

/** `text` with the characters a regular expression reads specially escaped. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `text` names `tool` (its exact name, case-insensitive, not inside a longer word). */
export function names(text: string, tool: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(tool)}($|[^A-Za-z0-9_])`, "i").test(text);
}

/** The parameters of a tool's JSON schema, one level deep. */
export function paramsOf(schema: Record<string, unknown> | null): Param[] {
  const properties = schema?.properties;
  if (!isRecord(properties) || Array.isArray(properties)) return [];
  return Object.entries(properties).map(([name, value]) => {
    const s = isRecord(value) ? value : {};
    return { name, schema: s, description: typeof s.description === "string" ? s.description : "" };
  });
}

/** Whether a schema (or any schema nested in it) has one of `keys`. */
export function hasKeyword(schema: unknown, keys: readonly string[]): boolean {
  if (!isRecord(schema)) return false;
  if (Array.isArray(schema)) return schema.some((s) => hasKeyword(s, keys));
  for (const [key, value] of Object.entries(schema)) {
    if (keys.includes(key) && key !== "properties") return true;
    if (isRecord(value) && hasKeyword(value, keys)) return true;
  }
  return false;
}

/** A text on one line, clipped to 80 characters, in double quotes (how a finding cites it). */
export const quote = (text: string): string => `"${clip(oneLine(text), 80)}"`;
