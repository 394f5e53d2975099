/**
 * How the recorder tells its failure sink what went wrong: one {@link ToolLessonsFailure} of stage
 * `"record"` per kind, redacted, never thrown into the run. A kind that names a condition that
 * can clear (the store failing, the buffer full) is heard again once the condition has cleared
 * and come back (an episode); every other kind is heard once per recorder. What the sink does
 * not hear is still counted: `stats()` and `flush()` count every record lost, whatever was said.
 */
import { DEFAULT_FAILURE_SINK, FailureReporter, type FailureSink, type ToolLessonsFailure } from "../failure.js";

/**
 * The kinds of recording failure, each with what became of the records:
 *
 * - `store_write`: the ledger's store failed a write; the records are kept and tried again.
 * - `bad_record`: a record the store refused alone, or that could not be built; it is lost.
 * - `dropped_slow_store`, `dropped_store_failed`, `dropped_background`: the buffer was full
 *   (behind a slow store, a failing store, or with callbacks in LangChain's background queue);
 *   records dropped.
 * - `ledger_closed`: a run ended after the ledger was closed; its records are not written.
 * - `callback`: a callback threw (a bug); the run goes on.
 * - `unseen_start`: a tool run ended that never reached the recorder at its start; the call is lost.
 * - `caller_refused`: the caller's ids were refused (by the recorder's resolver, or by the route
 *   node or middleware for the thread); the run's records are not written.
 * - `caller_unresolved`: a partition template names an id the run does not carry; not written.
 * - `caller_unseen`: the run names no caller the recorder can see, no node named one for its
 *   thread, and the recorder is not `singleTenant`; not written (never pooled in `default`).
 * - `partition_mismatch`: the run's metadata and the thread's node name two partitions.
 */
export type RecordingFailureKind =
  | "store_write"
  | "bad_record"
  | "dropped_slow_store"
  | "dropped_store_failed"
  | "dropped_background"
  | "ledger_closed"
  | "callback"
  | "unseen_start"
  | "caller_refused"
  | "caller_unresolved"
  | "caller_unseen"
  | "partition_mismatch";

/**
 * The recorder's reporter: the one dedup policy (`FailureReporter`, once per kind and scope), the
 * scope being the kind's episode: a kind that clears (`rearm`) starts a new episode, heard again.
 */
export class RecordingFailures {
  private readonly reporter: FailureReporter;
  /** Per kind, how many times its condition cleared. */
  private readonly episodes = new Map<RecordingFailureKind, number>();

  constructor(private readonly sink: FailureSink = DEFAULT_FAILURE_SINK) {
    this.reporter = new FailureReporter("record", sink);
  }

  /** Tell the sink, unless it heard this kind already (in this episode). Returns whether it was sent. */
  report(
    kind: RecordingFailureKind,
    message: string,
    error?: unknown,
    context?: ToolLessonsFailure["context"],
  ): boolean {
    return this.reporter.report(kind, message, error, context, `episode ${this.episodes.get(kind) ?? 0}`);
  }

  /** Pass on a failure another part already shaped (the write thread's ledger): never throws. */
  relay(failure: ToolLessonsFailure): void {
    try {
      this.sink(failure);
    } catch {
      // A sink that throws is ignored, as everywhere.
    }
  }

  /** The condition these kinds name has cleared: the next occurrence is heard again. */
  rearm(...kinds: RecordingFailureKind[]): void {
    for (const kind of kinds) this.episodes.set(kind, (this.episodes.get(kind) ?? 0) + 1);
  }
}
