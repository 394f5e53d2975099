import type { BaseStore, Item, PutOperation } from "@langchain/langgraph";
import type { z } from "zod";
import { InvalidInput } from "../../errors.js";
import type { ToolLessonsFailure } from "../../failure.js";
import { definedOnly } from "../../internal.js";
import { type Collection, namespaceFor, timeOrderedId } from "../keys.js";
import { ErrorClassSchema, SCHEMA_VERSION } from "../schema.js";
import { isBuilt } from "../trusted.js";
import type { Announcer } from "../versions.js";
import { BoundedMap, MAX_PARTITIONS_IN_MEMORY } from "../bounded-map.js";

/**
 * The low-level pieces every collection module shares: exact namespace listings over any
 * `BaseStore`, row parsing that skips and counts what does not fit, write operations, and
 * amortised pruning. Internal to the ledger.
 */

/**
 * The `kind` of each failure the ledger reports (stage `"ledger"`), once per kind and what it is about (its context):
 * - `row_skipped`: a stored row did not match its schema and was skipped (and counted);
 * - `settings_unparsed`: a partition's stored settings did not parse; the defaults were used;
 * - `prune_failed`: pruning old records failed; they are pruned at a later threshold;
 * - `records_discarded`: `close({ discardPending: true })` closed with records not written;
 * - `legacy_key_kept`: the key row an older ledger kept in the store could not be deleted (`fingerprint-key.ts`).
 */
export type LedgerFailureKind =
  "row_skipped" | "settings_unparsed" | "prune_failed" | "records_discarded" | "legacy_key_kept";

/** Reports one ledger failure to the ledger's sink, its context and error redacted. Never throws. */
export type LedgerReport = (
  kind: LedgerFailureKind,
  message: string,
  context?: ToolLessonsFailure["context"],
  error?: unknown,
) => void;

/** What every collection module of one `Ledger` works with. */
export interface LedgerContext {
  readonly store: BaseStore;
  /** First namespace label of every row (`LedgerOptions.namespaceRoot`). */
  readonly root: string;
  readonly report: LedgerReport;
  /** Most rows asked of the store in one request (`LedgerOptions.pageSize`). */
  readonly pageSize: number;
  /** Counters shared by the collections; `Ledger.skippedRows` reads `skippedRows`. */
  readonly counters: { skippedRows: number };
  /** Writes the partitions' versions (`../versions.ts`), one at a time per partition. */
  readonly announcer: Announcer;
  /** The key of each partition's keyed hashes (`LedgerKeys` in `fingerprint-key.ts`); the secret never leaves it. */
  readonly keys: { partitionKey(partition: string): string };
}

/** Filters for listing append-only records. Results are oldest first. */
export interface ListOptions {
  /** Only records whose id sorts after this one (ids are time-ordered). */
  after?: string;
  /** Keep only the newest `limit` records (still returned oldest first). */
  limit?: number;
}

/** The namespace of a collection (of one tool, for calls) in a partition. */
export function namespaceOf(ctx: LedgerContext, partition: string, collection: Collection, tool?: string): string[] {
  return namespaceFor(ctx.root, partition, collection, tool);
}

/**
 * Every item of exactly this namespace (or of the namespaces `depthBelow` levels under it).
 * Stores differ (InMemoryStore and PostgresStore match prefixes as strings, so ["calls","a"]
 * also finds ["calls","ab"]): keep exact matches only.
 */
export async function listNamespace(ctx: LedgerContext, ns: string[], depthBelow = 0): Promise<Item[]> {
  const depth = ns.length + depthBelow;
  const inside = (item: Item): boolean => {
    if (item.namespace.length !== depth) return false;
    for (let i = 0; i < ns.length; i++) if (item.namespace[i] !== ns[i]) return false;
    return true;
  };
  const first = await ctx.store.search(ns, { limit: ctx.pageSize, offset: 0 });
  if (first.length < ctx.pageSize) return first.filter(inside);
  // Several pages: rows may shift between pages as others write, so keep each row once.
  const out = new Map<string, Item>();
  let page = first;
  for (let offset = 0; ;) {
    for (const item of page)
      if (inside(item)) out.set(`${item.namespace.slice(ns.length).join("/")}\u0000${item.key}`, item);
    if (page.length < ctx.pageSize) break;
    offset += ctx.pageSize;
    page = await ctx.store.search(ns, { limit: ctx.pageSize, offset });
  }
  return [...out.values()];
}

/**
 * What a store may offer for reading windows of append-only records through its index: the
 * newest rows of one namespace by key, and the keys a prune to the newest deletes. `SqliteStore` and the store
 * `openPostgresStore` returns have both; any other `BaseStore` is read by a full listing of the
 * namespace (exact, but its cost grows with what the namespace holds).
 */
export interface WindowReads {
  /** Rows of exactly `namespace`, highest key first: at most `limit`, only keys after `after`. */
  newestInNamespace(namespace: string[], options: { limit?: number; after?: string }): Promise<Item[]>;
  /** The keys of exactly `namespace` beyond the `keep` highest, ascending (what a prune deletes). */
  keysBeyondNewest(namespace: string[], keep: number): Promise<string[]>;
}

/**
 * A store that writes rows under new keys (the append-only records' time-ordered ids) cheaper
 * than it puts rows: `TransactionalPostgresStore`, with a plain INSERT that skips the per-row
 * conflict check of an upsert. A key stored already (a retried write) is still overwritten, as a
 * put would, so the result is the same as `batch(puts)`.
 */
export interface AppendWrites {
  appendNew(puts: readonly PutOperation[]): Promise<void>;
}

/**
 * Write the puts of new append-only records in one store batch: through the store's
 * {@link AppendWrites} when it has them, else `batch`. Same rows, same atomicity.
 */
export async function appendPuts(ctx: LedgerContext, puts: PutOperation[]): Promise<void> {
  const store = ctx.store as BaseStore & Partial<AppendWrites>;
  if (typeof store.appendNew === "function") await store.appendNew(puts);
  else await ctx.store.batch(puts);
}

/** Whether a store reads windows through its index (see {@link WindowReads}). */
export function hasWindowReads(store: BaseStore): store is BaseStore & WindowReads {
  const s = store as BaseStore & Partial<WindowReads>;
  return typeof s.newestInNamespace === "function" && typeof s.keysBeyondNewest === "function";
}

/**
 * The newest rows of exactly this namespace by key (time-ordered ids: the newest records),
 * **oldest first**: at most `limit`, only keys after `after`. Through the store's index when it
 * has {@link WindowReads}; otherwise a full listing, sorted and cut, with the same result.
 */
export async function listNewest(
  ctx: LedgerContext,
  ns: string[],
  options: { limit?: number; after?: string } = {},
): Promise<Item[]> {
  if (options.limit !== undefined && options.limit <= 0) return [];
  if (hasWindowReads(ctx.store)) {
    const rows = await ctx.store.newestInNamespace(ns, definedOnly(options));
    return rows.reverse();
  }
  const all = await listNamespace(ctx, ns);
  const kept = options.after === undefined ? all : all.filter((item) => item.key > options.after!);
  kept.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return newest(kept, options.limit);
}

/**
 * The namespaces exactly one label below `prefix` that hold rows. Through the store's skip scan
 * where it has one (`SqliteStore.namespacesOneBelow`: one index seek per namespace), otherwise
 * by listing every namespace under `prefix` and keeping those one label below.
 */
export async function listNamespacesOneBelow(ctx: LedgerContext, prefix: string[]): Promise<string[][]> {
  const s = ctx.store as BaseStore & { namespacesOneBelow?: (prefix: string[]) => Promise<string[][]> };
  if (typeof s.namespacesOneBelow === "function") return s.namespacesOneBelow(prefix);
  const namespaces = await listAllNamespaces(ctx, prefix);
  return namespaces.filter((ns) => ns.length === prefix.length + 1 && prefix.every((label, i) => ns[i] === label));
}

/** Every namespace under `prefix` (as the store matches prefixes: callers keep exact matches). */
export async function listAllNamespaces(ctx: LedgerContext, prefix: string[]): Promise<string[][]> {
  const out: string[][] = [];
  for (let offset = 0; ; offset += ctx.pageSize) {
    const page = await ctx.store.listNamespaces({ prefix, limit: ctx.pageSize, offset });
    out.push(...page);
    if (page.length < ctx.pageSize) break;
  }
  return out;
}

/** One stored row through its schema; a row that does not fit is counted, warned about and `null`. */
export function parseItem<T>(ctx: LedgerContext, schema: z.ZodType<T>, item: Item): T | null {
  const parsed = schema.safeParse(item.value);
  if (parsed.success) return parsed.data;
  ctx.counters.skippedRows += 1;
  ctx.report("row_skipped", "Skipped a ledger row that does not match its schema.", {
    namespace: item.namespace.join("/"),
    key: item.key,
    issues: parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".")}: ${i.message}`)
      .join("; "),
  });
  return null;
}

/**
 * Parse many rows, skipping those keyed at or before `after`. With `looksValid`, a row that
 * passes that cheap structural check (the shape this version writes) is taken as is; zod parses
 * the rest, so a row that does not fit is still skipped and counted. Append-only records are
 * read by the hundred thousand in a review.
 */
export function parseItems<T>(
  ctx: LedgerContext,
  schema: z.ZodType<T>,
  items: Item[],
  after?: string,
  looksValid?: (value: Record<string, unknown>) => boolean,
): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (after !== undefined && item.key <= after) continue;
    const row = looksValid?.(item.value) ? (item.value as T) : parseItem(ctx, schema, item);
    if (row !== null) out.push(row);
  }
  return out;
}

/** A put of one row, kept out of any vector index (the ledger searches by namespace only). */
export function putOp(
  ctx: LedgerContext,
  partition: string,
  collection: Collection,
  key: string,
  value: object,
  tool?: string,
): PutOperation {
  return {
    namespace: namespaceOf(ctx, partition, collection, tool),
    key,
    value: value as Record<string, unknown>,
    index: false,
  };
}

/**
 * A new append-only record as stored: schema version, a time-ordered id and `at` assigned when
 * absent, checked against its schema.
 * @throws InvalidInput when it does not match, or has an empty partition.
 */
export function stamp<T extends { partition: string; id: string; at: number }>(
  schema: z.ZodType<T>,
  input: object & { id?: string; at?: number },
): T {
  const at = input.at ?? Date.now();
  const stamped = { ...input, v: SCHEMA_VERSION, id: input.id ?? timeOrderedId(at), at };
  // A row the package built was checked where its parts entered (see `ledger/trusted.ts`).
  const row = isBuilt(input) ? (stamped as unknown as T) : checked(schema, stamped, "a ledger record");
  if (!row.partition) throw new InvalidInput("A ledger record needs a non-empty partition.");
  return row;
}

/**
 * A row about to be written, through its schema.
 * @throws InvalidInput naming the fields that do not match (`what` says which row it was).
 */
export function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  throw new InvalidInput(`Refused ${what} that does not match its schema: ${issues}`);
}

/**
 * Delete the rows of a namespace beyond the newest `keep` (by key: time-ordered ids), through
 * the store's index when it has {@link WindowReads} (only the doomed keys are read). A failure is reported (`prune_failed`) and returns 0, never thrown: the rows are pruned later.
 */
export async function pruneNamespace(ctx: LedgerContext, ns: string[], keep: number): Promise<number> {
  try {
    let doomed: string[];
    if (hasWindowReads(ctx.store)) {
      doomed = await ctx.store.keysBeyondNewest(ns, keep);
    } else {
      const keys = (await listNamespace(ctx, ns)).map((i) => i.key).sort();
      doomed = keys.slice(0, Math.max(0, keys.length - keep));
    }
    if (doomed.length === 0) return 0;
    await ctx.store.batch(doomed.map((key) => ({ namespace: ns, key, value: null })));
    return doomed.length;
  } catch (error) {
    ctx.report(
      "prune_failed",
      "Pruning old records failed; they will be pruned later.",
      { namespace: ns.join("/") },
      error,
    );
    return 0;
  }
}

/**
 * When to prune an append-only namespace: rows appended since its last prune, counted per key
 * (a partition, or a partition and tool) in this process. Amortised: one listing per
 * `threshold` appends, not one per append.
 */
export class PruneSchedule {
  /**
   * Bounded ({@link MAX_PARTITIONS_IN_MEMORY} keys, the least recently appended to forgotten first):
   * a key forgotten starts counting again, so its prune comes later, never sooner.
   */
  private readonly since = new BoundedMap<string, number>(MAX_PARTITIONS_IN_MEMORY);

  /** Count `n` more rows under `key`; true, and the count starts over, once `threshold` are waiting. */
  due(key: string, n: number, threshold: number): boolean {
    const since = (this.since.get(key) ?? 0) + n;
    const due = since >= threshold;
    this.since.set(key, due ? 0 : since);
    return due;
  }
}

/** The newest `limit` rows of rows in id order, still oldest first. */
export function newest<T>(rows: T[], limit: number | undefined): T[] {
  return limit !== undefined && rows.length > limit ? rows.slice(rows.length - limit) : rows;
}

// Cheap structural checks of the append-only records as this version writes them (see
// `parseItems`): every required field present with its type. Anything else goes through zod.

export const isStr = (v: unknown): boolean => typeof v === "string";
export const isOptStr = (v: unknown): boolean => v === undefined || typeof v === "string";
export const isNum = (v: unknown): boolean => typeof v === "number";
export const isOutcome = (v: unknown): boolean => v === "success" || v === "error";

const ERROR_CLASSES: ReadonlySet<unknown> = new Set<unknown>(ErrorClassSchema.options);
export const isOptErrorClass = (v: unknown): boolean => v === undefined || ERROR_CLASSES.has(v);

/** An array of objects that each pass `ok`. */
export const isEvery = (v: unknown, ok: (x: Record<string, unknown>) => boolean): boolean =>
  Array.isArray(v) && v.every((x) => typeof x === "object" && x !== null && ok(x as Record<string, unknown>));
