/**
 * The turn and route records appended through any {@link Ledger} over a store, told in process to
 * whoever listens on that store: how the graph's learn step counts a partition's evidence as it is
 * written (every thread's, whichever Ledger object the recorder writes through), with no read of
 * the ledger. Records written by another process are not told here; they are read by reviews.
 */
import type { BaseStore } from "@langchain/langgraph";
import type { RouteRecord, TurnRecord } from "./schema.js";

/** What one append told: the rows written, of one kind. */
export type AppendedRecords =
  { kind: "turns"; rows: readonly TurnRecord[] } | { kind: "routes"; rows: readonly RouteRecord[] };

/** Hears the records appended to a store in this process. Must not throw (a throw is ignored). */
export type AppendListener = (appended: AppendedRecords) => void;

const listeners = new WeakMap<BaseStore, Set<AppendListener>>();

/** Listen to the records appended through any ledger over `store`; returns a function that stops listening. */
export function onRecordsAppended(store: BaseStore, listener: AppendListener): () => void {
  let set = listeners.get(store);
  if (!set) {
    set = new Set();
    listeners.set(store, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}

/** Tell the listeners of `store` what was appended (after the write succeeded). */
export function announceAppended(store: BaseStore, appended: AppendedRecords): void {
  const set = listeners.get(store);
  if (!set || appended.rows.length === 0) return;
  for (const listener of set) {
    try {
      listener(appended);
    } catch {
      // A listener's fault must not fail the append it hears about.
    }
  }
}
