/**
 * The options of a `Ledger` and of its `close`, with their defaults in one place, and the shape
 * of the runs it appends.
 */
import { DEFAULT_FAILURE_SINK, type FailureSink } from "../failure.js";
import type { ToolLessonsEnv } from "../env.js";
import { DEFAULT_NAMESPACE_ROOT } from "./keys.js";
import type { CallRecord, NewRecord, TurnRecord } from "./schema.js";

/** Options of `Ledger`. */
export interface LedgerOptions {
  /**
   * First namespace label of every row, so the ledger can share a store with other data.
   * @default "tool-lessons"
   */
  namespaceRoot?: string;
  /**
   * Where the ledger's failures go, stage `"ledger"`, once per kind and what it is about (each
   * corrupt row once, however often it is read; `skippedRows` counts every skip), every string of the context and the
   * error redacted. The kinds are {@link LedgerFailureKind}. Never throws into the caller: a
   * sink that throws is ignored.
   * @default DEFAULT_FAILURE_SINK (console.warn with a "[tool-lessons]" prefix)
   */
  failureSink?: FailureSink;
  /**
   * Most rows asked of the store in one request when listing a namespace. A namespace with
   * more is read in pages by `offset`, which is only consistent while nothing writes to it
   * (a prune or an update between two pages shifts rows past the boundary) and when the store
   * orders results stably; so the default reads any retained namespace in one request.
   * @default 1_000_000
   */
  pageSize?: number;
  /**
   * Whether `Ledger.close` also stops the store (`store.stop()`: closes the SQLite file
   * or ends the Postgres pool). `openLedger` sets it for a store it opened itself; a store you
   * pass in stays yours to close, since your graph may still be using it.
   * @default false
   */
  ownsStore?: boolean;
  /**
   * The app's secret (at least 16 characters): the key of the ledger's fingerprints and word
   * tokens, never kept in the store. Without it, `TOOL_LESSONS_KEY`; else a 0600 key file beside a
   * SQLite ledger (`<file>.key`), a per-process key for `InMemoryStore`; any other store refuses
   * to open (`KeyRequired`). See `collections/fingerprint-key.ts`.
   * @default env.ledgerKey (TOOL_LESSONS_KEY)
   */
  secret?: string;
  /**
   * The environment read for `secret`'s default.
   * @default readEnv() (process.env)
   */
  env?: ToolLessonsEnv;
}

/**
 * What the ledger needs of a recorder that writes to it (the callback handler registers itself
 * when it is made), so that `Ledger.close` can flush it first.
 */
export interface LedgerRecorder {
  /** Write what it holds, at most `timeoutMs`; `inFlight` is what is still not written. */
  flush(options?: { timeoutMs?: number }): Promise<{ inFlight: number }>;
}

/** Options of `Ledger.close`. */
export interface LedgerCloseOptions {
  /**
   * How long the recorders writing to this ledger get to write what they hold, in milliseconds.
   * @default 10000
   */
  timeoutMs?: number;
  /**
   * Close even when recorders still hold records after `timeoutMs`: they are lost (the count
   * goes to `failureSink` as `records_discarded`). Without it, `close` refuses with `RecordsPending` and closes nothing.
   * @default false
   */
  discardPending?: boolean;
}

/** Defaults of {@link LedgerCloseOptions}. */
export const DEFAULT_LEDGER_CLOSE_OPTIONS: Readonly<Required<LedgerCloseOptions>> = Object.freeze({
  timeoutMs: 10_000,
  discardPending: false,
});

/** Defaults of {@link LedgerOptions}. */
export const DEFAULT_LEDGER_OPTIONS: Readonly<Required<Omit<LedgerOptions, "secret" | "env">>> = Object.freeze({
  namespaceRoot: DEFAULT_NAMESPACE_ROOT,
  failureSink: DEFAULT_FAILURE_SINK,
  pageSize: 1_000_000,
  ownsStore: false,
});

/** The records of one finished run, appended together by `Ledger.appendRuns`. */
export interface RunRecords {
  /** The run's tool calls. */
  calls: NewRecord<CallRecord>[];
  /** What the run did for its request; absent for a run that is not a graph turn (a tool invoked alone). */
  turn?: NewRecord<TurnRecord>;
}
