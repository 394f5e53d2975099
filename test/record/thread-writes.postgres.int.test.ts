import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { Ledger, type RunRecords } from "../../src/ledger/ledger.js";
import { trustBuilt } from "../../src/ledger/trusted.js";
import { threadWritesFor } from "../../src/record/thread-writes.js";
import { freshPostgresStore, postgresUnavailableReason } from "../helpers/postgres.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] record/thread-writes.postgres: ${unavailable}`);

const PARTITION = "u:thread";

/** A run whose first call has an outcome the schema does not know: only a schema check refuses it. */
function offSchemaRun(runId: string): RunRecords {
  const call = {
    partition: PARTITION,
    tool: "echo",
    runId,
    args: [],
    fingerprints: [],
    outcome: "maybe" as unknown as "success",
    source: "callback" as const,
  };
  return { calls: [call] };
}

function validRun(runId: string): RunRecords {
  return {
    calls: [
      {
        partition: PARTITION,
        tool: "echo",
        runId,
        args: [],
        fingerprints: [],
        outcome: "success",
        source: "callback",
      },
    ],
  };
}

const built = (run: RunRecords): RunRecords => ({ calls: run.calls.map((c) => trustBuilt({ ...c })) });

describe.skipIf(unavailable !== null)("the write thread checks a row once, where it entered", () => {
  it("rows the recorder built are not checked again in the thread; any other row is", async () => {
    const { store, cleanup } = await freshPostgresStore();
    const ledger = new Ledger(store);
    const thread = threadWritesFor(ledger, () => undefined);
    try {
      expect(thread).toBeDefined();
      // From outside the package: checked in the thread, refused, nothing written.
      await expect(thread!.appendRuns([offSchemaRun("outside")])).rejects.toBeInstanceOf(InvalidInput);
      // Beside a built run, an unmarked row is still checked: the batch is refused whole.
      await expect(thread!.appendRuns([built(validRun("built-1")), offSchemaRun("outside-2")])).rejects.toBeInstanceOf(
        InvalidInput,
      );
      expect(await ledger.listCalls(PARTITION)).toHaveLength(0);

      // Marked built on the main thread: the thread takes the mark and appends without a second
      // pass (the off-schema outcome shows that no check ran; the recorder never builds one).
      await thread!.appendRuns([built(validRun("built-2")), built(offSchemaRun("built-3"))]);
      const stored = await store.search(["tool-lessons"], { limit: 10 });
      expect(stored.map((item) => item.value.runId).sort()).toEqual(["built-2", "built-3"]);
    } finally {
      thread?.stop();
      await cleanup();
    }
  });
});
