/**
 * Route records written off the run's path. Serving a turn queues its route record here and goes
 * on; the queue writes what it holds on the next turn of the event loop (`setImmediate`), one
 * `appendRoutes` per ledger, in the order queued. The order with the turn rows is kept per store:
 * a ledger over the same store settles the queue before it appends turns (`appendRuns`,
 * `appendTurns`) and before it lists routes, so a turn is never told or stored before its
 * request's route, and a reader in this process sees every route queued before it read.
 *
 * Each queued write is held to a time bound (a store that never answers stalls nothing past it)
 * and its failure goes to the `onError` given with it, once per write.
 */
import type { BaseStore } from "@langchain/langgraph";
import { withinBound } from "../failure.js";
import type { NewRecord, RouteRecord } from "./schema.js";

/** What the queue writes through: a ledger's `appendRoutes`. */
export interface RouteAppender {
  readonly store: BaseStore;
  appendRoutes(records: NewRecord<RouteRecord>[]): Promise<unknown>;
}

/** One queued route write. */
interface Queued {
  ledger: RouteAppender;
  records: NewRecord<RouteRecord>[];
  timeoutMs: number;
  onError: (error: unknown) => void;
}

interface StoreQueue {
  pending: Queued[];
  /** The drain under way (settles when the queue is empty again), if any. */
  draining: Promise<void> | undefined;
}

const queues = new WeakMap<BaseStore, StoreQueue>();

/** Queue route records for `ledger`'s store; written on the next turn of the event loop. Never throws. */
export function queueRoutes(
  ledger: RouteAppender,
  records: NewRecord<RouteRecord>[],
  options: { timeoutMs: number; onError: (error: unknown) => void },
): void {
  let queue = queues.get(ledger.store);
  if (!queue) {
    queue = { pending: [], draining: undefined };
    queues.set(ledger.store, queue);
  }
  queue.pending.push({ ledger, records, timeoutMs: options.timeoutMs, onError: options.onError });
  if (!queue.draining) {
    const q = queue;
    q.draining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => drain(q))
      .finally(() => {
        q.draining = undefined;
      });
  }
}

/** Settle the route records queued for `store` (written, or failed and reported). Never rejects. */
export function routesSettled(store: BaseStore): Promise<void> | undefined {
  return queues.get(store)?.draining;
}

/** Write every queued batch, in order: consecutive writes through one ledger go in one append. */
async function drain(queue: StoreQueue): Promise<void> {
  while (queue.pending.length > 0) {
    const first = queue.pending[0];
    let n = 1;
    while (n < queue.pending.length && queue.pending[n].ledger === first.ledger) n += 1;
    const batch = queue.pending.splice(0, n);
    const records = batch.flatMap((q) => q.records);
    const timeoutMs = Math.max(...batch.map((q) => q.timeoutMs));
    try {
      await withinBound(
        () => first.ledger.appendRoutes(records),
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
