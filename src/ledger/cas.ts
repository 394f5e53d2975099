import type { BaseStore, Item, PutOperation } from "@langchain/langgraph";

/**
 * Compare-and-set over a LangGraph `BaseStore`: the one primitive every status change of a
 * revision and every card write goes through, so that of two writers racing on a row one wins
 * and the other writes nothing.
 *
 * A store settles it in one of two ways:
 * - **by the store** (`SqliteStore`, the store `openPostgresStore` returns): the checks and the
 *   writes run in one transaction that holds the rows' write locks from the first read to the
 *   commit, so it holds across connections and processes;
 * - **in this process** (every other `BaseStore`, e.g. `InMemoryStore`): the checks and the
 *   writes run under a lock kept on the store object itself (a non-enumerable symbol field, so
 *   every ledger over it in the process takes the same lock, with no registry), one
 *   compare-and-set at a time. That holds for every writer of this process going through a
 *   ledger; it cannot see another process or a writer that calls `store.batch` directly.
 */

/** A scalar field value a check compares; `null` stands for "no row, or no such field". */
export type CasValue = string | number | boolean | null;

/** One condition of a compare-and-set: the row's `field` holds one of `oneOf` (`null`: absent). */
export interface CasCheck {
  namespace: string[];
  key: string;
  /** A top-level field of the row's value. */
  field: string;
  /** What the field may hold for the writes to go ahead. */
  oneOf: readonly CasValue[];
}

/** A check that did not hold, with the row as it is now (`null`: no row). */
export interface CasFailure {
  /** Index of the check in the list given. */
  check: number;
  /** The row as the store holds it now. */
  item: Item | null;
}

/** What a compare-and-set did: wrote everything (`ok`), or nothing, with every check that failed. */
export type CasOutcome = { ok: true } | { ok: false; failed: CasFailure[] };

/** A store that settles a compare-and-set itself, in one transaction. */
export interface CompareAndSetStore {
  /**
   * Check every condition and, only when all hold, apply the writes (a `null` value deletes),
   * atomically: nothing is written when a check fails or the call throws.
   */
  compareAndSet(checks: readonly CasCheck[], writes: readonly PutOperation[]): Promise<CasOutcome>;
}

/** The value a check compares: a scalar top-level field, else `null`. */
export function casField(value: Record<string, unknown> | null | undefined, field: string): CasValue {
  const v = value?.[field];
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : null;
}

/** The failed checks, given each checked row as it is now (in the order of `checks`). */
export function failedChecks(checks: readonly CasCheck[], items: readonly (Item | null)[]): CasFailure[] {
  const failed: CasFailure[] = [];
  checks.forEach((check, i) => {
    const item = items[i] ?? null;
    if (!check.oneOf.includes(casField(item?.value, check.field))) failed.push({ check: i, item });
  });
  return failed;
}

/** Whether the store settles compare-and-set itself (see {@link CompareAndSetStore}). */
export function settlesCas(store: BaseStore): store is BaseStore & CompareAndSetStore {
  return typeof (store as Partial<CompareAndSetStore>).compareAndSet === "function";
}

/** The field of a store object that holds the tail of its chain of in-process compare-and-sets. */
const LOCAL_LOCK: unique symbol = Symbol("tool-lessons compare-and-set lock");

/** A store as the in-process lock sees it. */
type LockedStore = BaseStore & { [LOCAL_LOCK]?: Promise<unknown> };

/**
 * Compare-and-set in this process, for a store that has no transaction of its own: read the
 * checked rows, compare, write in one batch, under a lock per store object.
 */
export async function localCompareAndSet(
  store: BaseStore,
  checks: readonly CasCheck[],
  writes: readonly PutOperation[],
): Promise<CasOutcome> {
  const run = async (): Promise<CasOutcome> => {
    const items =
      checks.length === 0 ? [] : await store.batch(checks.map((c) => ({ namespace: c.namespace, key: c.key })));
    const failed = failedChecks(checks, items);
    if (failed.length > 0) return { ok: false, failed };
    if (writes.length > 0) await store.batch([...writes]);
    return { ok: true };
  };
  const locked = store as LockedStore;
  const previous = locked[LOCAL_LOCK] ?? Promise.resolve();
  const result = previous.then(run, run);
  Object.defineProperty(locked, LOCAL_LOCK, {
    value: result.catch(() => undefined),
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return result;
}

/** Compare-and-set through the store when it settles it, else in this process (see the module docs). */
export async function compareAndSet(
  store: BaseStore,
  checks: readonly CasCheck[],
  writes: readonly PutOperation[],
): Promise<CasOutcome> {
  return settlesCas(store) ? store.compareAndSet(checks, writes) : localCompareAndSet(store, checks, writes);
}
