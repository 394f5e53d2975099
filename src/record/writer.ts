/**
 * The recorder's writer: finished runs go into a bounded buffer and are written to the ledger in
 * batches, off the run's path. Back-pressure (a run that finds the buffer full behind a healthy
 * store waits for room, at most `maxWaitMs`), retry (a store that fails is tried again, its rows
 * kept), `flush()` and `stats()`. What it may lose, it counts; what it counts, it says once.
 */
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { InvalidInput, RecordingDropped } from "../errors.js";
import type { Ledger, RunRecords } from "../ledger/ledger.js";
import type { FingerprintMemo } from "../text/mask.js";
import { redactForLog } from "../text/gate.js";
import { fingerprint } from "../text/fingerprint.js";
import type { RecordingFailures } from "./failures.js";
import type { FlushOptions, FlushResult, RecordingStats, RecordWriterOptions } from "./options.js";
import { buildRecords, type RunTrace } from "./rows.js";
import { isConnectionFault } from "./store-faults.js";
import { threadWritesFor, type ThreadWrites } from "./thread-writes.js";
import { WordReleases } from "./word-releases.js";
import { RegisteredNames } from "./registered-names.js";

/** A finished run and the partition its rows go under. */
export interface FinishedRun {
  trace: RunTrace;
  partition: string;
  /** Who the caller is within the partition, as resolved (`settleCaller`): for word releases. */
  caller?: string;
  /** Calls, plus its turn when it has one. */
  records: number;
}

/** Runs of a failed batch tried alone before the store is taken to be down for the whole batch. */
const SINGLE_TRIES = 3;
/** First pause before a store that failed is tried again, in milliseconds (then doubled). */
const RETRY_FIRST_MS = 50;

/** Why records were dropped. */
type DropReason = "slow_store" | "store_failed" | "background";
const DROP_COUNTER: Record<DropReason, "slowStore" | "storeFailed"> = {
  slow_store: "slowStore",
  background: "slowStore",
  store_failed: "storeFailed",
};
const DROP_KIND = {
  slow_store: "dropped_slow_store",
  store_failed: "dropped_store_failed",
  background: "dropped_background",
} as const;

/** A finished run, waiting in the buffer (raw until its rows are built). */
interface PendingRun {
  kind: "run";
  run: FinishedRun;
  records: number;
}

/** Built (masked) runs a store failed to take, kept for the retry: each run's calls with its turn. */
interface PendingRows {
  kind: "rows";
  runs: RunRecords[];
  records: number;
}

type PendingEntry = PendingRun | PendingRows;

/** Records of a built run: its calls, plus its turn. */
function recordsOf(run: RunRecords): number {
  return run.calls.length + (run.turn ? 1 : 0);
}

/** A finished run waiting for room in a full buffer. */
interface Waiter {
  entry: PendingRun;
  resolve: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The bounded buffer and its writes. One per recorder. */
export class RecordWriter {
  private buffer: PendingEntry[] = [];
  private buffered = 0;
  private inFlight = 0;
  private waiting = 0;
  private readonly waiters: Waiter[] = [];
  private draining: Promise<void> | undefined;
  private drainQueued = false;
  private drainNextTurn: ReturnType<typeof setImmediate> | undefined;
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryDelay = RETRY_FIRST_MS;
  /** The ledger's key use started (its first deletes an older ledger's key row), so the first write need not wait for it. */
  private keyPromise: Promise<string> | undefined;
  /** Set while the store's writes fail: the redacted error line, and since when. */
  private storeFault: { message: string; at: number } | undefined;
  private lastWriteError: unknown;
  private lastWriteAt: number | undefined;
  /** Store faults seen, so `flush()` knows when its try failed. */
  private writeFaults = 0;
  /** The write thread, when the ledger's store allows one (`writeThread`). */
  private readonly thread: ThreadWrites | undefined;
  /** Which words of stored free text are released: this recorder's own memory (`word-releases.ts`). */
  private readonly releases = new WordReleases();
  /** The names the app vouches for (`registered-names.ts`). */ private readonly names = new RegisteredNames();
  private readonly counters = {
    calls: 0,
    turns: 0,
    dropped: 0,
    failed: 0,
    withheld: 0,
    droppedBy: { slowStore: 0, storeFailed: 0 },
  };

  /**
   * @param background callbacks run in LangChain's background queue (`awaitHandlers: false`): a
   * run can never wait for room, and `flush()` first waits for that queue.
   */
  constructor(
    private readonly ledger: Ledger,
    private readonly options: Readonly<Required<RecordWriterOptions>>,
    private readonly failures: RecordingFailures,
    private readonly background: boolean,
  ) {
    if (options.writeThread) this.thread = threadWritesFor(ledger, (failure) => failures.relay(failure));
    // Started now, so its pool is open by the time the first run ends.
    this.thread?.start();
  }

  /** Count records lost before they reached the writer (refused, or never seen whole). */
  lose(records: number): void {
    this.counters.failed += records;
  }

  /** Count records not written because their caller could not be found. */
  withhold(records: number): void {
    this.counters.withheld += records;
  }

  /**
   * Write everything buffered and wait for it, at most `timeoutMs` (default `flushTimeoutMs`). A
   * store that fails is tried once more now; its records stay buffered for later tries and are
   * counted in `inFlight`. Never rejects.
   */
  async flush(options: FlushOptions = {}): Promise<FlushResult> {
    const timeoutMs = options.timeoutMs ?? this.options.flushTimeoutMs;
    const writtenBefore = this.counters.calls + this.counters.turns;
    const lostBefore = this.lost();
    let timedOut = false;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"timeout">((resolve) => {
      if (Number.isFinite(timeoutMs)) deadline = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const within = async (work: Promise<unknown>): Promise<boolean> => {
      if ((await Promise.race([work.then(() => "done" as const), expired])) === "timeout") timedOut = true;
      return !timedOut;
    };
    try {
      if (!this.background || (await within(awaitAllCallbacks()))) {
        const faultsBefore = this.writeFaults;
        while (this.buffer.length > 0 || this.draining || this.waiters.length > 0) {
          if (!(await within(this.draining ?? this.startDrain()))) break;
          // The store failed on this try: its records wait for the next one, not for this flush.
          if (this.writeFaults > faultsBefore) break;
          if (!this.draining && this.buffer.length === 0 && this.waiters.length > 0) this.admitWaiters();
        }
      }
    } finally {
      clearTimeout(deadline);
    }
    return {
      written: this.counters.calls + this.counters.turns - writtenBefore,
      inFlight: this.pending(),
      lost: this.lost() - lostBefore,
      timedOut,
    };
  }

  /** Counters since the recorder was made. */
  stats(openRuns: number): RecordingStats {
    return {
      openRuns,
      buffered: this.buffered,
      inFlight: this.inFlight,
      waiting: this.waiting,
      written: { calls: this.counters.calls, turns: this.counters.turns },
      dropped: this.counters.dropped,
      droppedBy: { ...this.counters.droppedBy },
      failed: this.counters.failed,
      withheld: this.counters.withheld,
      storeFailing: this.storeFault !== undefined,
    };
  }

  /** Records dropped because the buffer was full. */
  get dropped(): number {
    return this.counters.dropped;
  }

  /**
   * Take a finished run into the buffer. When the buffer is full: behind a healthy store (and
   * with awaited callbacks), the run's end waits for room, which holds back the caller's `invoke`
   * until the writes catch up (back-pressure), at most `maxWaitMs`; behind a failing store, or
   * with callbacks in LangChain's background queue, the records are dropped and counted.
   */
  admit(run: FinishedRun): Promise<void> | undefined {
    const entry: PendingRun = { kind: "run", run, records: run.records };
    if (this.ledger.isClosed) {
      this.counters.failed += entry.records;
      const message =
        `A run ended after the ledger was closed: its ${entry.records} record(s) were not recorded. ` +
        "Close the ledger after the runs that record into it have ended.";
      const context = { reason: "ledger_closed", records: entry.records };
      this.failures.report("ledger_closed", message, new RecordingDropped(message, { context }), context);
      return undefined;
    }
    if (this.waiters.length === 0 && this.hasRoomFor(entry.records)) {
      this.push(entry);
      return undefined;
    }
    if (this.storeFault !== undefined) {
      this.drop(entry.records, "store_failed");
      return undefined;
    }
    if (this.background) {
      this.drop(entry.records, "background");
      return undefined;
    }
    this.startDrainSoon();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        entry,
        resolve,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          this.waiting -= entry.records;
          this.drop(entry.records, "slow_store");
          resolve();
        }, this.options.maxWaitMs),
      };
      this.waiters.push(waiter);
      this.waiting += entry.records;
    });
  }

  // ---------------------------------------------------------------- the buffer

  private hasRoomFor(records: number): boolean {
    // A run larger than the whole buffer is taken alone, into an empty buffer.
    return this.buffered + this.inFlight + records <= this.options.maxBuffer || this.buffered + this.inFlight === 0;
  }

  private push(entry: PendingRun): void {
    this.buffer.push(entry);
    this.buffered += entry.records;
    // A run was buffered: the episode of a full buffer (or a closed ledger) is over.
    this.failures.rearm("dropped_slow_store", "dropped_store_failed", "dropped_background", "ledger_closed");
    // Start fetching the fingerprint key now, so the first write does not wait for it.
    this.keyPromise ??= this.ledger.fingerprintKey(entry.run.partition);
    this.keyPromise.catch(() => undefined);
    this.schedule();
  }

  /** A batch that could not be written goes back to the front of the buffer, for the retry. */
  private requeue(entries: PendingEntry[]): void {
    this.buffer.unshift(...entries);
    for (const entry of entries) this.buffered += entry.records;
    this.inFlight = 0;
  }

  /** Runs waiting for room, taken in the order they came while there is room (never past the bound). */
  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.hasRoomFor(this.waiters[0].entry.records)) {
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      this.waiting -= waiter.entry.records;
      this.push(waiter.entry);
      waiter.resolve();
    }
  }

  /** Waiting runs give up at once when the store fails: a failing store never holds up a run. */
  private releaseWaiters(reason: DropReason): void {
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      this.waiting -= waiter.entry.records;
      this.drop(waiter.entry.records, reason);
      waiter.resolve();
    }
  }

  private drop(records: number, reason: DropReason): void {
    this.counters.dropped += records;
    this.counters.droppedBy[DROP_COUNTER[reason]] += records;
    const context = { reason, records, maxBuffer: this.options.maxBuffer, pending: this.pending() };
    const message = this.dropMessage(records, reason);
    this.failures.report(DROP_KIND[reason], message, new RecordingDropped(message, { context }), context);
  }

  /** Why records were dropped, said once per episode (until a run is buffered again). */
  private dropMessage(records: number, reason: DropReason): string {
    const full = `The recording buffer is full (${this.buffered + this.inFlight} of ${this.options.maxBuffer} records waiting to be written)`;
    switch (reason) {
      case "slow_store": {
        const since =
          this.lastWriteAt === undefined ? "yet" : `for ${Math.round(performance.now() - this.lastWriteAt)} ms`;
        return (
          `${full} and the ledger's store has not finished a write ${since}: a run waited ${this.options.maxWaitMs} ms ` +
          `for room, then its ${records} record(s) were dropped. The store is slower than the runs (or hangs): ` +
          "check its latency, or raise maxBuffer or maxWaitMs."
        );
      }
      case "store_failed":
        return (
          `${full} while the ledger's store fails (${this.storeFault?.message ?? "a write failed"}): ` +
          `${records} record(s) dropped; buffered records are written when the store answers again. ` +
          "Check that the store is reachable, or raise maxBuffer to ride out longer outages."
        );
      case "background":
        return (
          `${full} and callbacks run in LangChain's background queue (awaitHandlers: false), so a run cannot wait ` +
          `for room: ${records} record(s) dropped. Use awaitHandlers: true for back-pressure, or raise maxBuffer.`
        );
    }
  }

  // ---------------------------------------------------------------- writing

  private schedule(): void {
    if (this.draining || this.retryTimer) return;
    // A full batch (or a run waiting for room) is written now, on a microtask: a loop busy with
    // runs that never yield (every step a promise) would otherwise not let it start. Runs ending
    // while a write is out join the next batch.
    if (this.buffered >= this.options.batchSize || this.waiters.length > 0) return this.startDrainSoon();
    // Otherwise masking, building and writing wait for the next turn of the event loop: a
    // microtask would run them before the run that queued them goes on (before its `invoke`
    // resolves), charging all of it to the user's turn.
    if (this.options.flushEveryMs === 0) return this.startDrainNextTurn();
    if (this.scheduled) return;
    this.scheduled = true;
    this.timer = setTimeout(() => {
      this.scheduled = false;
      this.timer = undefined;
      void this.startDrain();
    }, this.options.flushEveryMs);
    this.timer.unref?.();
  }

  private startDrainNextTurn(): void {
    if (this.draining || this.retryTimer || this.drainQueued || this.drainNextTurn) return;
    this.drainNextTurn = setImmediate(() => {
      this.drainNextTurn = undefined;
      void this.startDrain();
    });
  }

  private startDrainSoon(): void {
    if (this.draining || this.retryTimer || this.drainQueued) return;
    this.drainQueued = true;
    queueMicrotask(() => {
      this.drainQueued = false;
      void this.startDrain();
    });
  }

  private startDrain(): Promise<void> {
    if (this.draining) return this.draining;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.scheduled = false;
    }
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.drainNextTurn) {
      clearImmediate(this.drainNextTurn);
      this.drainNextTurn = undefined;
    }
    if (this.buffer.length === 0) return Promise.resolve();
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.storeFault !== undefined) this.scheduleRetry();
      else if (this.buffer.length > 0) this.schedule();
    });
    return this.draining;
  }

  /** Write batches until the buffer is empty or the store fails (then the rest waits for a retry). */
  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.takeBatch();
      const ok = await this.writeBatch(batch);
      this.inFlight = 0;
      this.admitWaiters();
      if (!ok) return;
    }
  }

  /** Entries from the front of the buffer, up to `batchSize` records (at least one entry). */
  private takeBatch(): PendingEntry[] {
    const batch: PendingEntry[] = [];
    let records = 0;
    while (
      this.buffer.length > 0 &&
      (batch.length === 0 || records + this.buffer[0].records <= this.options.batchSize)
    ) {
      const entry = this.buffer.shift()!;
      batch.push(entry);
      records += entry.records;
    }
    this.buffered -= records;
    this.inFlight = records;
    return batch;
  }

  /**
   * One batch: build the runs' rows, then append every run (its calls with its turn) in one
   * `appendRuns`, one transaction. False when the store failed.
   */
  private async writeBatch(batch: PendingEntry[]): Promise<boolean> {
    const runs = batch.filter((e): e is PendingRun => e.kind === "run");
    const built: RunRecords[] = [];
    for (const e of batch) if (e.kind === "rows") built.push(...e.runs);
    if (runs.length > 0) {
      // Each partition's own key (the partition is part of every MAC: tokens never link two partitions).
      const keys = new Map<string, string>();
      try {
        for (const { run } of runs)
          if (!keys.has(run.partition)) keys.set(run.partition, await this.ledger.fingerprintKey(run.partition));
      } catch (error) {
        this.keyPromise = undefined;
        // The runs stay raw in the buffer (in memory only) until the key can be read.
        this.requeue(batch);
        this.storeFailed(error, this.buffered);
        return false;
      }
      // Shared by this batch only, then dropped: it holds normalised argument values.
      const memo: FingerprintMemo = new Map();
      for (const { run } of runs) {
        try {
          const { trace, partition, caller } = run;
          const key = keys.get(partition)!;
          const keep = this.releases.keeperFor(partition, trace.threadId ?? `run\u0000${trace.id}`, caller, key);
          const trust = await this.names.forRun(partition, trace.calls, (p) => this.ledger.listCards(p));
          const rows = buildRecords(trace, partition, key, this.options.errorRules, memo, keep, trust);
          // Effects count distinct callers (`learn/effect.ts`): a keyed digest of the caller, never its id.
          if (caller !== undefined) {
            const digest = fingerprint(`caller ${caller}`, key);
            for (const row of rows.calls) row.caller = digest;
            if (rows.turn) rows.turn.caller = digest;
          }
          if (rows.calls.length > 0 || rows.turn)
            built.push({ calls: rows.calls, ...(rows.turn ? { turn: rows.turn } : {}) });
          this.badRecords(rows.refused, undefined);
        } catch (error) {
          this.badRecords(run.records, error);
        }
      }
    }
    // Released words first: earlier rows' tokens then read as the word (`word-releases.ts`).
    await this.releases.save(this.ledger);
    const left = await this.write(built);
    if (left.length === 0) {
      this.storeRecovered();
      return true;
    }
    // Built runs are kept, masked, for the retry; a retry writes the same keys again (no doubles).
    const records = left.reduce((n, run) => n + recordsOf(run), 0);
    this.requeue([{ kind: "rows", runs: left, records }]);
    this.storeFailed(this.lastWriteError, records);
    return false;
  }

  /** Records lost as bad (refused by the store alone, off the schema, or not buildable): counted, said once. */
  private badRecords(records: number, error: unknown): void {
    if (records === 0) return;
    this.counters.failed += records;
    this.failures.report(
      "bad_record",
      `${records} record(s) could not be stored and are lost: the ledger refused them, or they could not be ` +
        "built (every later one is counted in stats().failed, not said again).",
      error,
      { records },
    );
  }

  /**
   * Append runs in one batch (one transaction). A batch that failed on the connection
   * (`isConnectionFault`) is returned whole, to be retried: it says nothing about its runs, and a
   * retry writes the same keys. Any other failure: run by run, so one bad run (a value the store
   * refuses) is reported and counted alone and the others are written; a run that fails alone on
   * the connection is retried, never counted bad. When the first runs all fail alone too, the
   * store is down: the runs not written are returned, to be retried (the runs tried alone go last,
   * so a bad run at the front cannot block the others). A run is never split: its calls and its
   * turn are stored together or not at all.
   */
  private async write(runs: RunRecords[]): Promise<RunRecords[]> {
    if (runs.length === 0) return [];
    try {
      await this.append(runs);
      this.wrote(runs);
      return [];
    } catch (error) {
      if (error instanceof InvalidInput && runs.length === 1) {
        this.badRecords(recordsOf(runs[0]), error);
        return [];
      }
      this.lastWriteError = error;
      if (runs.length === 1 || isConnectionFault(error)) return runs;
    }
    let failed = 0;
    let written = 0;
    let firstError: unknown;
    /** Runs that failed alone for a reason of their own or the store's (bad once the store is up). */
    const tried: RunRecords[] = [];
    /** Runs that failed alone on the connection: always retried. */
    const retry: RunRecords[] = [];
    for (const [i, run] of runs.entries()) {
      if (written === 0 && tried.length + retry.length >= SINGLE_TRIES) {
        this.lastWriteError = firstError;
        return [...runs.slice(i), ...tried, ...retry];
      }
      try {
        await this.append([run]);
        written += 1;
        this.wrote([run]);
      } catch (error) {
        firstError ??= error;
        if (error instanceof InvalidInput) failed += recordsOf(run);
        else if (isConnectionFault(error)) retry.push(run);
        else tried.push(run);
      }
    }
    // Some runs were written: the store is up, and the runs it refused alone are bad records.
    if (written > 0) failed += tried.reduce((n, run) => n + recordsOf(run), 0);
    this.badRecords(failed, firstError);
    const left = written === 0 ? [...tried, ...retry] : retry;
    if (left.length > 0) this.lastWriteError = firstError;
    return left;
  }

  /** One transaction: in the write thread when there is one, else through the ledger here. */
  private async append(runs: RunRecords[]): Promise<void> {
    if (this.thread && !this.thread.unusable) {
      // The routes serving queued through the ledger go first, as `Ledger.appendRuns` does it.
      await this.ledger.settleQueuedRoutes();
      await this.thread.appendRuns(runs);
    } else await this.ledger.appendRuns(runs);
  }

  private wrote(runs: readonly RunRecords[]): void {
    for (const run of runs) {
      this.counters.calls += run.calls.length;
      if (run.turn) this.counters.turns += 1;
    }
    if (runs.length > 0) this.lastWriteAt = performance.now();
  }

  private storeFailed(error: unknown, records: number): void {
    this.writeFaults += 1;
    const first = this.storeFault === undefined;
    this.storeFault = { message: redactForLog(error), at: performance.now() };
    this.retryDelay = first ? RETRY_FIRST_MS : Math.min(this.retryDelay * 2, this.options.maxRetryDelayMs);
    if (first) {
      this.failures.report(
        "store_write",
        `The ledger's store failed a write: ${records} record(s) are kept and tried again until it answers ` +
          "(said again only after it has answered and failed anew).",
        error,
        { records },
      );
      this.releaseWaiters("store_failed");
    }
  }

  private storeRecovered(): void {
    this.storeFault = undefined;
    this.lastWriteError = undefined;
    this.failures.rearm("store_write");
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.buffer.length === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.startDrain();
    }, this.retryDelay);
    this.retryTimer.unref?.();
  }

  /** Records not yet written nor lost: buffered, in a write, or in a run waiting for room. */
  private pending(): number {
    return this.buffered + this.inFlight + this.waiting;
  }

  /** Records lost so far: dropped, refused, or withheld. */
  private lost(): number {
    return this.counters.dropped + this.counters.failed + this.counters.withheld;
  }
}
