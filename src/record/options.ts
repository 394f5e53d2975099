/**
 * What a recorder is told and what it tells back: its options and their defaults (the events',
 * and the writer's), its counters and what `flush()` resolves with.
 */
import { InvalidInput } from "../errors.js";
import { DEFAULT_FAILURE_SINK, type FailureSink } from "../failure.js";
import type { Ledger } from "../ledger/ledger.js";
import { ErrorClassSchema } from "../ledger/schema.js";
import type { ThreadCallers } from "../caller/thread-callers.js";
import type { ErrorRule } from "./error-class.js";
import type { PartitionSpec } from "../caller/partition.js";

/** Options of the writer (set on the recorder, see `ToolLessonsCallbackHandlerOptions`). */
export interface RecordWriterOptions {
  /**
   * Most records (calls and turns) waiting to be written: buffered, or in a write the store has
   * not answered. This bounds the recorder's memory in records. When it is full, a run's end
   * waits for room (see `maxWaitMs`) behind a healthy store; behind a store that fails, or with
   * `awaitHandlers: false`, new records are dropped, counted in `stats().dropped` and reported
   * once with the reason.
   * @default 10000
   */
  maxBuffer?: number;
  /**
   * Longest a finished run waits for room in a full buffer before its records are dropped, in
   * milliseconds (back-pressure: with `awaitHandlers`, the run's `invoke` resolves when its
   * records are in the buffer). Only a store slower than the runs, or one that hangs, makes a run
   * wait this long; a store that fails never holds a run up.
   * @default 10000
   */
  maxWaitMs?: number;
  /**
   * Most records appended in one store batch. A buffer holding this many is written at once,
   * without waiting for `flushEveryMs` or for the event loop to be free, so a burst of runs
   * that never yields to the event loop is still written as it goes.
   * @default 500
   */
  batchSize?: number;
  /**
   * How long finished records wait to be batched before they are written, in milliseconds (a
   * full batch is written at once). `0` starts a write on the event loop's next turn after a
   * run ends (after the run has gone on, never before its `invoke` resolves); runs that end
   * while a write is out are batched into the next one.
   * @default 0
   */
  flushEveryMs?: number;
  /**
   * How long `flush()` waits at most when it is given no `timeoutMs`, in milliseconds; a store
   * that hangs cannot make it hang. `Infinity` waits for every record.
   * @default 30000
   */
  flushTimeoutMs?: number;
  /**
   * Longest pause between two tries of a store that failed, in milliseconds. Records stay in
   * the buffer (bounded by `maxBuffer`) and are written when the store answers again; the
   * pause starts at 50 ms and doubles up to this.
   * @default 5000
   */
  maxRetryDelayMs?: number;
  /**
   * Write from a worker thread with its own connection pool, for a Postgres ledger whose store
   * says where it connects (`openPostgresStore`, `PostgresLedger`, `openLedger({ postgresUrl })`);
   * ignored for other stores. A write's round trips then complete on the thread's own event loop,
   * while the agent runs keep this one busy: records are stored while runs go on, instead of
   * when they pause. Masking stays on this thread; the rows cross to the thread already masked.
   * @default true
   */
  writeThread?: boolean;
  /**
   * Extra error-class rules, tried before the built-in table (`record/error-class.ts`).
   * @default []
   */
  errorRules?: readonly ErrorRule[];
}

/** The defaults of {@link RecordWriterOptions}. */
export const DEFAULT_RECORD_WRITER: Readonly<Required<RecordWriterOptions>> = Object.freeze({
  maxBuffer: 10_000,
  maxWaitMs: 10_000,
  batchSize: 500,
  flushEveryMs: 0,
  flushTimeoutMs: 30_000,
  maxRetryDelayMs: 5_000,
  writeThread: true,
  errorRules: Object.freeze([]),
});

/** Counters of a recorder, since it was made. */
export interface RecordingStats {
  /** Runs (graph invocations) still open. */
  openRuns: number;
  /** Records waiting to be written (not yet handed to the store). */
  buffered: number;
  /** Records in a write the store has not answered yet. */
  inFlight: number;
  /** Records of finished runs waiting for room in a full buffer (back-pressure). */
  waiting: number;
  /** Records written to the ledger. */
  written: { calls: number; turns: number };
  /** Records dropped because the buffer was full (the sum of `droppedBy`). */
  dropped: number;
  /**
   * Dropped records by reason: `slowStore`, a full buffer behind a store slower than the runs
   * (a run waited `maxWaitMs`, or callbacks ran in the background and could not wait);
   * `storeFailed`, a full buffer while the store's writes fail.
   */
  droppedBy: { slowStore: number; storeFailed: number };
  /** Records lost because a record was refused, could not be built, or its caller's ids were refused. */
  failed: number;
  /**
   * Records not written because their run names no caller the recorder can see and no node named
   * one for its thread (never pooled in `default`; see `singleTenant`).
   */
  withheld: number;
  /** True while the store's writes fail; buffered records are tried again until it answers. */
  storeFailing: boolean;
}

/** What `flush()` resolves with. */
export interface FlushResult {
  /** Records written while the flush ran. */
  written: number;
  /** Records not written yet when it resolved: buffered, in a write, or waiting for room (kept, tried again). */
  inFlight: number;
  /** Records lost while the flush ran (dropped, refused, or withheld for want of a caller). */
  lost: number;
  /** True when it resolved at its timeout rather than with nothing left to write. */
  timedOut: boolean;
}

/** Options of `flush()`. */
export interface FlushOptions {
  /**
   * Resolve after this many milliseconds even if records are still in flight (a store that
   * hangs); they stay buffered and counted in `inFlight`.
   * @default the recorder's flushTimeoutMs (30000)
   */
  timeoutMs?: number;
}

/** Options of {@link ToolLessonsCallbackHandler}; the buffer's and writes' are {@link RecordWriterOptions}. */
export interface ToolLessonsCallbackHandlerOptions extends RecordWriterOptions {
  /** Where records go. */
  ledger: Ledger;
  /**
   * Names the partition of a run from its callback metadata: a resolver, or a namespace template
   * such as `"t:{tenant_id}/u:{user_id}"`. By default `tenant_id`, `user_id` and `agent_id` are
   * read from the metadata (see `docs/partitions.md`). Callbacks do not see `configurable` or v1
   * `context`: a run whose metadata names no caller is filed under the partition the route node
   * (or middleware) resolved for its thread, when one did; otherwise see `singleTenant`.
   * @default reads tenant_id / user_id / agent_id from metadata
   */
  partition?: PartitionSpec;
  /**
   * Where the route node or middleware tell the recorder which caller each thread belongs to
   * (callbacks see no `configurable` or v1 `context`).
   * @default the ledger's own (`ledger.callers`), shared with the nodes and middleware over it
   */
  callers?: ThreadCallers;
  /**
   * The app names no caller anywhere (one user, one tenant): a run whose metadata names no caller,
   * and whose thread no node or middleware named, is filed under `default`. Without it such a run
   * is not written: the recorder cannot tell "no caller named" from "a caller named in
   * `configurable` or v1 `context`", which callbacks never see, and it never pools callers in
   * `default`. Its records are counted in `stats().withheld`, and the sink hears `caller_unseen` once.
   * @default false
   */
  singleTenant?: boolean;
  /**
   * Hears recording failures (`stage: "record"`, a stable `kind`, redacted, once per kind; the
   * kinds that clear, a failing store or a full buffer, once per episode). Records lost are
   * counted in `stats()` and `flush()` whether or not the sink heard of them. Never thrown into
   * the agent's run; a sink that throws is ignored. Kinds: see `RecordingFailureKind`.
   * @default one console.warn line with a "[tool-lessons]" prefix
   */
  failureSink?: FailureSink;
  /**
   * Have LangChain await this handler's callbacks (they only buffer, so this costs little), so
   * that every record of a run is in the buffer when `invoke` resolves and `await flush()`
   * writes it, and a full buffer can hold the run's end back until there is room. With `false`
   * callbacks run in LangChain's background queue; `flush()` then waits for that queue first,
   * and a full buffer drops records (the queue is shared: it is never made to wait).
   * @default true
   */
  awaitHandlers?: boolean;
}

/**
 * Defaults of {@link ToolLessonsCallbackHandlerOptions} (`ledger` is required; `partition` has no
 * value of its own: without one, the built-in resolver reads the metadata; `callers` is the ledger's own).
 */
export const DEFAULT_RECORDING_OPTIONS: Readonly<
  Required<Omit<ToolLessonsCallbackHandlerOptions, "ledger" | "partition" | "callers">>
> = Object.freeze({
  ...DEFAULT_RECORD_WRITER,
  singleTenant: false,
  failureSink: DEFAULT_FAILURE_SINK,
  awaitHandlers: true,
});

/** The writer's options with their defaults applied, checked. */
export function writerSettings(options: RecordWriterOptions): Required<RecordWriterOptions> {
  const settings: Required<RecordWriterOptions> = {
    maxBuffer: options.maxBuffer ?? DEFAULT_RECORD_WRITER.maxBuffer,
    maxWaitMs: options.maxWaitMs ?? DEFAULT_RECORD_WRITER.maxWaitMs,
    batchSize: options.batchSize ?? DEFAULT_RECORD_WRITER.batchSize,
    flushEveryMs: options.flushEveryMs ?? DEFAULT_RECORD_WRITER.flushEveryMs,
    flushTimeoutMs: options.flushTimeoutMs ?? DEFAULT_RECORD_WRITER.flushTimeoutMs,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_RECORD_WRITER.maxRetryDelayMs,
    writeThread: options.writeThread ?? DEFAULT_RECORD_WRITER.writeThread,
    errorRules: options.errorRules ?? DEFAULT_RECORD_WRITER.errorRules,
  };
  for (const name of ["maxBuffer", "batchSize"] as const) {
    if (!Number.isInteger(settings[name]) || settings[name] < 1) {
      throw new InvalidInput(`${name} must be a positive integer; got ${String(settings[name])}.`);
    }
  }
  for (const name of ["flushEveryMs", "maxWaitMs", "maxRetryDelayMs"] as const) {
    if (!Number.isFinite(settings[name]) || settings[name] < 0) {
      throw new InvalidInput(`${name} must be a non-negative number; got ${String(settings[name])}.`);
    }
  }
  // Checked once here: the rows built with these classes are not checked again (`rows.ts`).
  for (const rule of settings.errorRules) {
    if (!ErrorClassSchema.safeParse(rule?.errorClass).success) {
      throw new InvalidInput(
        `errorRules: ${JSON.stringify(rule?.errorClass)} is not an error class; use one of ${ErrorClassSchema.options.join(", ")}.`,
      );
    }
  }
  if (Number.isNaN(settings.flushTimeoutMs) || settings.flushTimeoutMs < 0) {
    throw new InvalidInput(`flushTimeoutMs must be a non-negative number; got ${String(settings.flushTimeoutMs)}.`);
  }
  return settings;
}
