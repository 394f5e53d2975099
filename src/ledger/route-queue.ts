/**
 * Route records written off the run's path. Serving a turn queues its route record here and goes
 * on; the queue writes what it holds on the next turn of the event loop (`setImmediate`), in
 * the order queued. The order with the turn rows is kept per ledger: the ledger settles its queue
 * before it appends turns (`appendRuns`, `appendTurns`) and before it lists routes, so a turn is
 * never told or stored before its request's route, and a reader through the ledger sees every
 * route queued before it read.
 *
 * Each queued write is held to a time bound (a store that never answers stalls nothing past it)
 * and its failure goes to the `onError` given with it, once per write.
 */
import { withinBound } from "../failure.js";
import type { NewRecord, RouteRecord } from "./schema.js";

/** What the queue writes through: a ledger's `appendRoutes`. */
export interface RouteAppender {
  appendRoutes(records: NewRecord<RouteRecord>[]): Promise<unknown>;
}

/** One queued route write. */
interface Queued {
  records: NewRecord<RouteRecord>[];
  timeoutMs: number;
  onError: (error: unknown) => void;
}

interface StoreQueue {
  pending: Queued[];
  /** The drain under way (settles when the queue is empty again), if any. */
  draining: Promise<void> | undefined;
}

/** The route writes queued through one ledger, written in order off the run's path. */
export class RouteQueue {
  private readonly queue: StoreQueue = { pending: [], draining: undefined };

  constructor(private readonly ledger: RouteAppender) {}

  /** Queue route records; written on the next turn of the event loop. Never throws. */
  add(records: NewRecord<RouteRecord>[], options: { timeoutMs: number; onError: (error: unknown) => void }): void {
    const q = this.queue;
    q.pending.push({ records, timeoutMs: options.timeoutMs, onError: options.onError });
    if (!q.draining) {
      q.draining = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => drain(this.ledger, q))
        .finally(() => {
          q.draining = undefined;
        });
    }
  }

  /** Settle the route records queued (written, or failed and reported). Never rejects. */
  settled(): Promise<void> | undefined {
    return this.queue.draining;
  }
}

/** Write every queued batch, in order: what is queued when a write starts goes in one append. */
async function drain(ledger: RouteAppender, queue: StoreQueue): Promise<void> {
  while (queue.pending.length > 0) {
    const batch = queue.pending.splice(0, queue.pending.length);
    const records = batch.flatMap((q) => q.records);
    const timeoutMs = Math.max(...batch.map((q) => q.timeoutMs));
    try {
      await withinBound(
        () => ledger.appendRoutes(records),
        Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : Infinity,
        {
          stage: "serve",
          kind: "route_record",
        },
      );
    } catch (error) {
      for (const q of batch) {
        try {
          q.onError(error);
        } catch {
          // A sink's fault must not stop the queue.
        }
      }
    }
  }
}
