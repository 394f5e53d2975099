/**
 * The recorder's write thread (a `worker_threads` entry, started by `thread-writes.ts`): its own
 * event loop and its own Postgres pool on the ledger's tables, so a write's round trip completes
 * while the agent runs keep the main thread busy. It appends the runs it is sent, each batch in
 * one `Ledger.appendRuns` (one transaction), and answers with what was stored or why it was not.
 */
import { lazy } from "../memo.js";
import { parentPort, workerData } from "node:worker_threads";
import { InvalidInput } from "../errors.js";
import type { ToolLessonsFailure } from "../failure.js";
import { redactForLog } from "../text/gate.js";
import { Ledger, type RunRecords } from "../ledger/ledger.js";
import { openPostgresStore } from "../ledger/postgres.js";
import { trustBuilt } from "../ledger/trusted.js";
import { isConnectionFault } from "./store-faults.js";
import type { ThreadReply, ThreadRequest, WriteThreadData } from "./thread-writes.js";

const data = workerData as WriteThreadData;
const port = parentPort!;
const post = (reply: ThreadReply): void => port.postMessage(reply);

interface Opened {
  store: Awaited<ReturnType<typeof openPostgresStore>>;
  ledger: Ledger;
}

/** A run's rows: its calls, then its turn. */
function rowsOf(run: RunRecords): object[] {
  return run.turn ? [...run.calls, run.turn] : run.calls;
}

/** The thread's store and ledger, opened at the first need; a failed open is tried again at the next. */
const opened: () => Promise<Opened> = lazy(() =>
  openPostgresStore(data.connectionString, {
    schema: data.schema,
    maxConnections: data.maxConnections,
    onIdleError: () => undefined,
  }).then((store) => ({
    store,
    ledger: new Ledger(store, {
      namespaceRoot: data.namespaceRoot,
      failureSink: (failure: ToolLessonsFailure) => post({ type: "failure", failure }),
    }),
  })),
);
opened().catch(() => undefined);

port.on("message", (request: ThreadRequest) => {
  if (request.type === "stop") {
    void opened()
      .then(({ store }) => store.stop())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  void (async () => {
    try {
      const { ledger } = await opened();
      if (request.built) for (const run of request.runs) for (const row of rowsOf(run)) trustBuilt(row);
      const saved = await ledger.appendRuns(request.runs);
      post({ type: "written", id: request.id, calls: saved.calls.length, turns: saved.turns });
    } catch (error) {
      post({
        type: "failed",
        id: request.id,
        // Only what the main thread decides on crosses: the kind of fault and a redacted line.
        invalid: error instanceof InvalidInput,
        connection: isConnectionFault(error),
        message: redactForLog(error),
      });
    }
  })();
});
