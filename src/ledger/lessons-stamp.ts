/**
 * How many writes this process has made to what serving reads of a partition for a turn (its
 * cards, rules, settings and guidelines), per store and partition, through any ledger over the
 * store, whatever its namespace root (two ledgers with different roots over one store bump each
 * other's count, which costs at most a needless read). Each write is counted once its store call
 * is over, also when it failed (it may have written part), so a reader that takes the count
 * before it reads and keeps what it read under that count reads again after any write that
 * settled meanwhile.
 *
 * The count sees only this process's writes. A reader may take an unchanged count for unchanged
 * lessons only where no other process writes the store ({@link writtenOnlyHere}: LangGraph's
 * `InMemoryStore` itself, the embedded default of tests and evaluations); over any other store
 * (SQLite, Postgres, an app's own, a wrapper or a subclass, which may keep its rows anywhere) it
 * reads again, or tells other processes' writes by the rows
 * themselves (the rules' `updatedAt`), so an edict captured or a revision applied elsewhere is
 * obeyed on the next turn.
 */
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";

const COUNTS = new WeakMap<BaseStore, Map<string, number>>();

/** This process's count of the lessons writes to a partition of this store. */
export function lessonsWrites(store: BaseStore, partition: string): number {
  return COUNTS.get(store)?.get(partition) ?? 0;
}

/** Whether every write to `store` is made in this process, so that {@link lessonsWrites} sees them all. */
export function writtenOnlyHere(store: BaseStore): boolean {
  return Object.getPrototypeOf(store) === InMemoryStore.prototype;
}

/** `write`, then one lessons write counted for each of `partitions` (also when `write` failed). */
export async function countingLessonsWrite<T>(
  store: BaseStore,
  partitions: readonly string[],
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } finally {
    let counts = COUNTS.get(store);
    if (!counts) {
      counts = new Map();
      COUNTS.set(store, counts);
    }
    for (const partition of partitions) counts.set(partition, (counts.get(partition) ?? 0) + 1);
  }
}
