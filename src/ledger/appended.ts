/**
 * The turn and route records appended through one {@link Ledger}, told in process to whoever
 * listens on it: how the graph's learn step counts a partition's evidence as it is written
 * (every thread's, since the recorder and the nodes of an app write through the app's one
 * ledger), with no read of the ledger. Records written by another process are not told here;
 * they are read by reviews.
 */
import type { RouteRecord, TurnRecord } from "./schema.js";

/** What one append told: the rows written, of one kind. */
export type AppendedRecords =
  { kind: "turns"; rows: readonly TurnRecord[] } | { kind: "routes"; rows: readonly RouteRecord[] };

/** Hears the records appended through a ledger. Must not throw (a throw is ignored). */
export type AppendListener = (appended: AppendedRecords) => void;

/** The listeners of one ledger's appends. */
export class AppendListeners {
  private readonly listeners = new Set<AppendListener>();

  /** Listen to what is appended; returns a function that stops listening. */
  listen(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tell every listener what was appended (after the write succeeded). */
  tell(appended: AppendedRecords): void {
    if (appended.rows.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(appended);
      } catch {
        // A listener's fault must not fail the append it hears about.
      }
    }
  }
}
