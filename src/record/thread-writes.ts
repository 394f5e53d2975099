/**
 * The main thread's side of the recorder's write thread (`write-thread.ts`): `appendRuns` posts
 * built runs to the thread and resolves when the thread's transaction has committed them. Only
 * for a Postgres ledger whose store says where it connects (`openPostgresStore`,
 * `PostgresLedger`, `openLedger({ postgresUrl })`); {@link threadWritesFor} says which.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { InvalidInput, StoreUnavailable } from "../errors.js";
import type { ToolLessonsFailure } from "../failure.js";
import { isBuilt } from "../ledger/trusted.js";
import type { Ledger, RunRecords } from "../ledger/ledger.js";
import type { PostgresConnection } from "../ledger/postgres.js";
import type { TurnRecord } from "../ledger/schema.js";

/** What the thread is started with. */
export interface WriteThreadData extends PostgresConnection {
  namespaceRoot: string;
  maxConnections: number;
}

/**
 * Main thread → write thread. `built`: every row of `runs` was built by the package (marked by
 * `trustBuilt` here); a copy crosses the thread, which keeps no mark, so the flag carries it and
 * the thread appends those rows without a second schema pass, as the main thread would.
 */
export type ThreadRequest =
  { type: "write"; id: number; runs: readonly RunRecords[]; built: boolean } | { type: "stop" };

/** Write thread → main thread. */
export type ThreadReply =
  | { type: "written"; id: number; calls: number; turns: TurnRecord[] }
  | { type: "failed"; id: number; invalid: boolean; connection: boolean; message: string }
  | { type: "failure"; failure: ToolLessonsFailure };

/** Connections of the thread's own pool: writes are batched, so few are ever busy at once. */
const THREAD_CONNECTIONS = 2;

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Appends runs through a write thread with its own pool. */
export class ThreadWrites {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private answered = false;
  /** True once a thread failed before it ever answered: the writer writes on the main thread. */
  unusable = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly data: WriteThreadData,
    private readonly relay: (failure: ToolLessonsFailure) => void,
  ) {}

  /**
   * Append runs in the thread (one transaction). Resolves once they are committed.
   * @throws InvalidInput when a record does not match its schema; StoreUnavailable when the
   *   thread's store failed on the connection (or the thread stopped); an Error otherwise.
   */
  appendRuns(runs: readonly RunRecords[]): Promise<void> {
    const worker = this.started();
    const id = (this.nextId += 1);
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A write in the thread keeps the process alive, as a query on a socket would.
      worker.ref();
      worker.postMessage({ type: "write", id, runs, built: runs.every(allBuilt) } satisfies ThreadRequest);
    });
  }

  /** Start the thread now (it opens its pool), rather than at the first write. */
  start(): void {
    this.started();
  }

  /** Stop the thread (its pool ends); a later write starts a new one. */
  stop(): void {
    this.worker?.postMessage({ type: "stop" } satisfies ThreadRequest);
    this.worker = undefined;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread(this.data);
    worker.on("message", (reply: ThreadReply) => {
      this.answered = true;
      this.answer(reply);
    });
    const gone = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      // A thread that never answered cannot start here: write on the main thread from now on.
      if (!this.answered) this.unusable = true;
      this.failAll(new StoreUnavailable(`The recorder's write thread stopped (${why}); its writes are tried again.`));
    };
    worker.on("error", (error) => gone(error.message));
    worker.on("exit", (code) => gone(`exit ${code}`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answer(reply: ThreadReply): void {
    if (reply.type === "failure") return this.relay(reply.failure);
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.type === "written") {
      // Told in this process, where the graph's learn step listens (see ledger/appended.ts).
      this.ledger.tellAppended({ kind: "turns", rows: reply.turns });
      return waiting.resolve();
    }
    if (reply.invalid) return waiting.reject(new InvalidInput(reply.message));
    waiting.reject(reply.connection ? new StoreUnavailable(reply.message) : new Error(reply.message));
  }

  private failAll(error: Error): void {
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(error);
    }
  }
}

/**
 * The thread, from its compiled module; from the sources (tests and benches run TypeScript
 * through tsx), a small bootstrap registers tsx in the thread first.
 */
function startThread(data: WriteThreadData): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return new Worker(new URL("./write-thread.js", here), { workerData: data });
  const tsx = new URL("index.mjs", pathToFileURL(createRequire(here).resolve("tsx/esm/api"))).href;
  const entry = new URL("./write-thread.ts", here).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

/**
 * A write thread for this ledger, when its store is a Postgres store that says where it
 * connects; otherwise `undefined` (the writer writes on the main thread).
 */
export function threadWritesFor(
  ledger: Ledger,
  relay: (failure: ToolLessonsFailure) => void,
): ThreadWrites | undefined {
  const connection = (ledger.store as { connection?: unknown }).connection;
  if (!isConnection(connection)) return undefined;
  return new ThreadWrites(
    ledger,
    { ...connection, namespaceRoot: ledger.namespaceRoot, maxConnections: THREAD_CONNECTIONS },
    relay,
  );
}

/** True when the run's calls and turn were all built by the package. */
function allBuilt(run: RunRecords): boolean {
  return run.calls.every(isBuilt) && (run.turn === undefined || isBuilt(run.turn));
}

function isConnection(value: unknown): value is PostgresConnection {
  const v = value as Partial<PostgresConnection> | undefined;
  return typeof v?.connectionString === "string" && typeof v.schema === "string";
}
