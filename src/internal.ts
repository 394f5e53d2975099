/**
 * Small helpers shared across stages. Internal: not exported from the package barrel.
 */

/** `options` without its `undefined` fields, so spreading it over defaults keeps the defaults. */
export function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The name of the tool the package itself gives the model in cache-keeping mode, to find more
 * tools (`serve/search-tools.ts` builds it; `tool-lessons/serve` exports the name). It is defined
 * here, in the shared base, because two stages must agree on it and one is below the other: serve
 * names the tool, and the recorder (`record/rows.ts`), which serve is built on, must tell its
 * calls from a user's tool's so that none is taken as evidence.
 */
export const SEARCH_TOOLS_NAME = "search_tools";

/**
 * The first option of `minimums` whose value in `options` is not a whole number of at least its
 * least, with that least; undefined when every one is (the option checks of `wordingsOptions`
 * and `firstPassOptions` throw their own error for it).
 */
export function badCount<K extends string>(
  options: Readonly<Record<K, unknown>>,
  minimums: readonly (readonly [K, number])[],
): readonly [K, number] | undefined {
  return minimums.find(([key, least]) => !(Number.isInteger(options[key]) && (options[key] as number) >= least));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Characters no person sees: format (bidi controls, zero-width, tag characters), fillers, variation selectors. */
const UNSEEN = /[\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

/**
 * Whitespace and control characters collapsed to single spaces, trimmed, and every invisible,
 * bidi or tag character removed: every prompt renderer prints names and text through it, so no
 * such character is ever printed in a prompt block.
 */
export function oneLine(text: string): string {
  return text
    .replace(UNSEEN, "")
    .replace(/[\s\p{Cc}]+/gu, " ")
    .trim();
}

/** Orders rows by their time-ordered id. */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** True when rows are in id order already (a store usually returns them so). */
function isSortedById(rows: readonly { id: string }[]): boolean {
  for (let i = 1; i < rows.length; i++) if (rows[i - 1].id > rows[i].id) return false;
  return true;
}

/** Rows in id order, sorted in place only when they are not already (a check is linear, a sort is not). */
export function sortById<T extends { id: string }>(rows: T[]): T[] {
  return isSortedById(rows) ? rows : rows.sort(byId);
}

/** At most `max` characters, ending in "…" when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A connection string without its password, for messages and logs. */
export function redactUrl(connectionString: string): string {
  return connectionString.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, "$1***@");
}

/** Deterministic pseudo-random numbers in [0, 1) from a seed (mulberry32): repeatable runs. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Euclidean length of a vector. */
export function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}

/**
 * Up to `n` of `items` (in time order), evenly spaced over all of them, the first and the newest
 * kept: a sample of the whole span. A review reads its evidence this way rather than from the
 * newest end alone, where traffic often holds one kind of request at a time.
 */
export function spread<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  if (n <= 0) return [];
  if (n === 1) return [items[items.length - 1]];
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.round((i * (items.length - 1)) / (n - 1))]);
  return out;
}

/**
 * Every index of `0 … n - 1` once, the newest (`n - 1`) first, stepping back by a stride near
 * `n / φ` (coprime with `n`): each prefix of the order is spread over the whole range. For reading
 * the first few matches of a scan spread over a window instead of from its newest end.
 */
export function* spreadOrder(n: number): Generator<number> {
  if (n <= 0) return;
  let stride = Math.max(1, Math.round(n / GOLDEN_RATIO));
  while (gcd(stride, n) !== 1) stride += 1;
  for (let j = 0, i = n - 1; j < n; j++, i = (i - stride + n) % n) yield i;
}

const GOLDEN_RATIO = (1 + Math.sqrt(5)) / 2;

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
