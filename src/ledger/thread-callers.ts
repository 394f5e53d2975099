/**
 * Which caller each thread belongs to, as the nodes and the middleware resolved it. They see the
 * run's `configurable` and v1 `context`; the recorder's callbacks see only `metadata`, so the
 * recorder asks this object where a thread's calls and turn go. One object per ledger
 * (`Ledger.callers`): the app's nodes, middleware and recorder write through its one ledger and
 * so share it; pass your own to each to share it explicitly. Resolving a run's caller is
 * `caller/thread-callers.ts`'s.
 */
import { createHash } from "node:crypto";
import { MAX_ID_LENGTH } from "./keys.js";

/** Options of {@link ThreadCallers}. */
export interface ThreadCallersOptions {
  /**
   * Threads remembered, newest last; the oldest is forgotten beyond it.
   * @default 10_000
   */
  maxThreads?: number;
}

/** The defaults of {@link ThreadCallersOptions}. */
export const DEFAULT_THREAD_CALLERS: Readonly<Required<ThreadCallersOptions>> = Object.freeze({ maxThreads: 10_000 });

/** What {@link ThreadCallers.refuse} keeps for a thread: no partition (never a partition key, which has no NUL). */
const REFUSED = "\u0000refused";

/** A thread's caller as a node resolved it. */
interface ThreadCaller {
  /** The caller's partition, or {@link REFUSED}. */
  partition: string;
  /** Who the caller is within it (`callerIdOf`), when the run named a user. */
  caller?: string;
}

/**
 * A thread id as this map keys it: as given up to {@link MAX_ID_LENGTH} characters, else a digest
 * of it, so a megabyte thread id costs the map no more than a short one.
 */
function threadKey(threadId: string): string {
  return threadId.length <= MAX_ID_LENGTH
    ? threadId
    : `\u0000sha256:${createHash("sha256").update(threadId).digest("base64url")}`;
}

/** Thread id → the caller's partition (or "refused") and caller id, bounded, newest last. */
export class ThreadCallers {
  private readonly callers = new Map<string, ThreadCaller>();
  private readonly maxThreads: number;

  constructor(options: ThreadCallersOptions = {}) {
    this.maxThreads = options.maxThreads ?? DEFAULT_THREAD_CALLERS.maxThreads;
  }

  /**
   * Remember the partition resolved for a thread's run, and who the caller is within it (the
   * run's `callerIdOf`; a partition several callers share tells them apart by it).
   */
  remember(threadId: string | undefined, partition: string, caller?: string): void {
    if (threadId === undefined) return;
    const key = threadKey(threadId);
    this.callers.delete(key);
    this.callers.set(key, caller === undefined ? { partition } : { partition, caller });
    if (this.callers.size > this.maxThreads) this.callers.delete(this.callers.keys().next().value as string);
  }

  /**
   * Remember that the caller's ids of a thread were refused (an id that is not one, a template it
   * cannot fill): the recorder then writes none of the thread's records rather than filing them
   * under a partition it would have to guess.
   */
  refuse(threadId: string | undefined): void {
    this.remember(threadId, REFUSED);
  }

  /** The partition last remembered for a thread, if any (none once refused). */
  partitionOf(threadId: string | undefined): string | undefined {
    return this.named(threadId)?.partition;
  }

  /** Who the thread's caller is within its partition, as last remembered (none once refused). */
  callerOf(threadId: string | undefined): string | undefined {
    return this.named(threadId)?.caller;
  }

  /** True when the last word on a thread was {@link refuse}. */
  isRefused(threadId: string | undefined): boolean {
    return threadId !== undefined && this.callers.get(threadKey(threadId))?.partition === REFUSED;
  }

  private named(threadId: string | undefined): ThreadCaller | undefined {
    const named = threadId === undefined ? undefined : this.callers.get(threadKey(threadId));
    return named?.partition === REFUSED ? undefined : named;
  }
}
