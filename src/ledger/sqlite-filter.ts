/**
 * `SqliteStore`'s search filter, as `InMemoryStore` reads one: top-level fields, a plain value an
 * equality test, an object of operators `$eq $ne $gt $gte $lt $lte $in $nin` compared with those;
 * and which equality tests can narrow the SQL scan (`json_extract`) before the filter runs.
 */

const FILTER_OPERATORS: ReadonlySet<string> = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);
/** Filter keys simple enough to push into `json_extract` as a quoted path label. */
export const PUSHDOWN_KEY = /^[A-Za-z0-9_-]+$/;
const SURROGATE = /[\uD800-\uDFFF]/;

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => FILTER_OPERATORS.has(k));
}

/** The string an equality filter requires, when it can narrow the SQL scan safely. */
export function pushdownEquality(expected: unknown): string | undefined {
  const target = isOperatorObject(expected) ? expected.$eq : expected;
  return typeof target === "string" && !SURROGATE.test(target) ? target : undefined;
}

/** Whether an item's value passes every field of the filter. */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([field, expected]) => {
    const actual = value[field];
    if (!isOperatorObject(expected)) return deepEqual(actual, expected);
    return Object.entries(expected).every(([operator, operand]) => {
      switch (operator) {
        case "$eq":
          return deepEqual(actual, operand);
        case "$ne":
          return !deepEqual(actual, operand);
        case "$gt":
          return Number(actual) > Number(operand);
        case "$gte":
          return Number(actual) >= Number(operand);
        case "$lt":
          return Number(actual) < Number(operand);
        case "$lte":
          return Number(actual) <= Number(operand);
        case "$in":
          return Array.isArray(operand) && operand.some((o: unknown) => deepEqual(actual, o));
        case "$nin":
          return !Array.isArray(operand) || !operand.some((o: unknown) => deepEqual(actual, o));
        default:
          return false;
      }
    });
  });
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  return (
    keys.length === Object.keys(bo).length &&
    keys.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]))
  );
}
