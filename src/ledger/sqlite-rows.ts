/**
 * How `SqliteStore` (`sqlite-store.ts`) lays items out in its one table: the namespace column
 * (labels joined by U+001F, checked on the way in), a row read back as an item, the checks on a
 * limit or offset, and namespace matching and order for `listNamespaces`.
 */
import type { Item, MatchCondition } from "@langchain/langgraph";
import { InvalidInput } from "../errors.js";

/**
 * Joins namespace labels in the `namespace` column. A unit separator cannot appear in a label
 * (it is refused on the way in), so `["a","b"]` and `["a\u001fb"]` cannot collide, and it sorts
 * below every printable character, so the column's byte order is label-by-label order.
 */
export const SEPARATOR = "\u001f";
/** The code point right after {@link SEPARATOR}: `[p, p + UPPER)` bounds a range scan. */
export const UPPER = "\u0020";

/** A row of the `store` table. */
export interface StoreRow {
  namespace: string;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/** A row as the item it stores. */
export function toItem(row: StoreRow): Item {
  return {
    namespace: row.namespace.split(SEPARATOR),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Refuse a label that is empty or holds `.`, `:`, NUL or U+001F (it would break the namespace column). */
export function validateLabels(labels: readonly unknown[], operation: string): void {
  for (const label of labels) {
    if (typeof label !== "string" || label === "" || /[.:\0\u001f]/.test(label)) {
      throw new InvalidInput(
        `Invalid namespace label ${JSON.stringify(label)} in ${operation}: labels are non-empty ` +
          "strings without '.', ':', NUL or U+001F (encode tool names, e.g. with encodeLabel).",
        { context: { operation, label: String(label) } },
      );
    }
  }
}

/** A namespace as its `namespace` column text, its labels checked. */
export function encodeNamespace(namespace: readonly string[], operation: string): string {
  if (!Array.isArray(namespace) || (namespace.length === 0 && operation !== "search")) {
    throw new InvalidInput(`A ${operation} needs a non-empty namespace.`, {
      context: { operation },
    });
  }
  validateLabels(namespace, operation);
  return namespace.join(SEPARATOR);
}

/** A limit, offset or `keep` checked as a non-negative number and floored. */
export function count(value: number, name: string, allowInfinity: boolean): number {
  if (typeof value !== "number" || Number.isNaN(value) || value < 0 || (!allowInfinity && !Number.isFinite(value))) {
    throw new InvalidInput(`${name} must be a non-negative number, got ${String(value)}.`, {
      context: { [name]: value },
    });
  }
  return Math.floor(value);
}

/** Whether a namespace matches a `listNamespaces` prefix or suffix condition (`*` matches any label). */
export function matchesCondition(condition: MatchCondition, labels: readonly string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > labels.length) return false;
  const start = matchType === "prefix" ? 0 : labels.length - path.length;
  return path.every((label, i) => label === "*" || labels[start + i] === label);
}

/** Label-by-label order (a namespace sorts before the ones under it). */
export function compareNamespaces(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** What a value is, for an error message: `null`, `array` or its `typeof`. */
export function typeOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}
