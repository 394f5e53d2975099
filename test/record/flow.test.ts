import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, type Operation, type OperationResults } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { RecordingDropped, RecordsPending } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import type { ToolLessonsCallbackHandlerOptions } from "../../src/record/options.js";
import { echoTwiceAgent } from "../helpers/record-agent.js";

/**
 * A store whose writes can be made to hang, fail or take turns, switched by the test. Reads
 * and writes before `mode` is set (the fingerprint key) pass.
 */
class ValveStore extends InMemoryStore {
  mode: "open" | "hang" | "fail" = "open";
  batches = 0;
  written = 0;
  private held: (() => void)[] = [];

  override async batch<Op extends readonly Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    this.batches += 1;
    if (this.mode === "fail") throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
    if (this.mode === "hang") await new Promise<void>((resolve) => this.held.push(resolve));
    const result = await super.batch(operations);
    this.written += 1;
    return result;
  }

  /** Let the hung writes through, and the next ones. */
  release(): void {
    this.mode = "open";
    for (const resolve of this.held.splice(0)) resolve();
  }
}

/** A run of 2 calls and a turn: 3 records. */
const RECORDS_PER_RUN = 3;

async function setup(options: Partial<ToolLessonsCallbackHandlerOptions> = {}) {
  const store = new ValveStore();
  const ledgerFailures: ToolLessonsFailure[] = [];
  const ledger = new Ledger(store, { failureSink: (f) => ledgerFailures.push(f) });
  await ledger.fingerprintKey("default");
  const errors: ToolLessonsFailure[] = [];
  // One caller (none named): the app records under `default`.
  const handler = new ToolLessonsCallbackHandler({
    ledger,
    singleTenant: true,
    failureSink: (f) => errors.push(f),
    ...options,
  });
  const graph = echoTwiceAgent();
  const run = (i: number) =>
    graph.invoke(
      { messages: [new HumanMessage(`go ${i}`)] },
      { configurable: { thread_id: `t${i}` }, callbacks: [handler] },
    );
  return { store, ledger, handler, run, errors, ledgerFailures };
}

const dropsIn = (failures: ToolLessonsFailure[]) =>
  failures.filter((f) => f.kind.startsWith("dropped_") || f.kind === "ledger_closed");

describe("back-pressure: a full buffer holds a run's end back until there is room", () => {
  it("the next run's invoke resolves only after the store took the buffer's records; none dropped", async () => {
    const { store, handler, run } = await setup({ maxBuffer: RECORDS_PER_RUN, flushEveryMs: 60_000 });
    await run(0);
    expect(handler.stats()).toMatchObject({ buffered: 3, written: { calls: 0, turns: 0 } });
    store.mode = "hang";
    let second = false;
    const pending = run(1).then(() => (second = true));
    await vi.waitFor(() => expect(handler.stats()).toMatchObject({ inFlight: 3, waiting: 3 }));
    // The store has not answered: the run waits (its records held), it is not dropped.
    expect(second).toBe(false);
    store.release();
    await pending;
    expect(handler.stats()).toMatchObject({ dropped: 0, waiting: 0 });
    expect(handler.stats().written.calls).toBeGreaterThanOrEqual(2);
    expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0, timedOut: false });
    expect(handler.stats()).toMatchObject({ dropped: 0, written: { calls: 4, turns: 2 } });
  });

  it("a store that hangs: after maxWaitMs the run goes on and its records are dropped, said to be a slow store", async () => {
    const { store, handler, run, errors } = await setup({ maxBuffer: RECORDS_PER_RUN, maxWaitMs: 50 });
    store.mode = "hang";
    await run(0);
    await run(1);
    const stats = handler.stats();
    expect(stats).toMatchObject({ dropped: 3, droppedBy: { slowStore: 3, storeFailed: 0 }, failed: 0 });
    const [drop] = dropsIn(errors);
    expect(drop.error).toBeInstanceOf(RecordingDropped);
    expect(drop).toMatchObject({ stage: "record", kind: "dropped_slow_store" });
    expect(drop.context).toMatchObject({ reason: "slow_store", records: 3, maxBuffer: 3 });
    expect(drop.message).toMatch(/has not finished a write/);
    expect(drop.message).toMatch(/waited 50 ms/);
    expect(drop.message).not.toMatch(/reachable/);
    store.release();
    expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0 });
    expect(handler.stats().written).toEqual({ calls: 2, turns: 1 });
  });

  it("with callbacks in the background queue a full buffer cannot wait: drops say so", async () => {
    const { store, handler, run, errors } = await setup({ maxBuffer: RECORDS_PER_RUN, awaitHandlers: false });
    store.mode = "hang";
    await run(0);
    await run(1);
    const result = await handler.flush({ timeoutMs: 100 });
    expect(result).toMatchObject({ inFlight: 3, timedOut: true });
    expect(handler.stats().droppedBy.slowStore).toBe(3);
    const [drop] = dropsIn(errors);
    expect(drop.context?.reason).toBe("background");
    expect(drop.message).toMatch(/awaitHandlers: false/);
    store.release();
    expect(await handler.flush()).toMatchObject({ written: 3, inFlight: 0 });
  });
});

describe("flush({ timeoutMs })", () => {
  it("resolves at its timeout behind a store that hangs, counting the records in flight", async () => {
    const { store, handler, run } = await setup();
    store.mode = "hang";
    await run(0);
    const result = await handler.flush({ timeoutMs: 100 });
    expect(result).toEqual({ written: 0, inFlight: 3, lost: 0, timedOut: true });
    expect(handler.stats()).toMatchObject({ inFlight: 3, buffered: 0 });
    store.release();
    expect(await handler.flush({ timeoutMs: 5_000 })).toEqual({ written: 3, inFlight: 0, lost: 0, timedOut: false });
  });

  it("plain flush() is bounded too (flushTimeoutMs)", async () => {
    const { store, handler, run } = await setup({ flushTimeoutMs: 100 });
    store.mode = "hang";
    await run(0);
    expect(await handler.flush()).toMatchObject({ inFlight: 3, timedOut: true });
    store.release();
    expect(await handler.flush()).toMatchObject({ inFlight: 0, timedOut: false });
  });
});

describe("a store that fails: records kept (bounded), written when it answers again", () => {
  it("keeps the records, retries by itself, and writes them once the store is back", async () => {
    const { store, ledger, handler, run, errors } = await setup({ maxRetryDelayMs: 20 });
    store.mode = "fail";
    await run(0);
    await run(1);
    expect(await handler.flush()).toMatchObject({ written: 0, inFlight: 6, lost: 0, timedOut: false });
    expect(handler.stats()).toMatchObject({ storeFailing: true, failed: 0, dropped: 0 });
    // Reported once for the outage, redacted, not once per try.
    expect(errors.filter((f) => f.kind === "store_write")).toHaveLength(1);
    const triesBefore = store.batches;
    await vi.waitFor(() => expect(store.batches).toBeGreaterThan(triesBefore + 2));
    store.release();
    await vi.waitFor(() => expect(handler.stats().written).toEqual({ calls: 4, turns: 2 }));
    expect(handler.stats()).toMatchObject({ storeFailing: false, buffered: 0, failed: 0 });
    expect(await ledger.listCalls("default")).toHaveLength(4);
    expect(await ledger.listTurns("default")).toHaveLength(2);
  });

  it("beyond maxBuffer new records are dropped at once (no run waits on a failing store), said to be a failing store", async () => {
    const { store, handler, run, errors } = await setup({ maxBuffer: 6 });
    store.mode = "fail";
    await run(0);
    await run(1);
    await handler.flush();
    await run(2);
    await run(3);
    expect(handler.stats()).toMatchObject({
      buffered: 6,
      waiting: 0,
      dropped: 6,
      droppedBy: { slowStore: 0, storeFailed: 6 },
    });
    const drops = dropsIn(errors);
    expect(drops).toHaveLength(1);
    expect(drops[0].context?.reason).toBe("store_failed");
    expect(drops[0].message).toMatch(/while the ledger's store fails \(Error: connect ECONNREFUSED/);
    store.release();
    expect(await handler.flush()).toEqual({ written: 6, inFlight: 0, lost: 0, timedOut: false });
  });

  it("the sink hears a kind once per episode; what it does not hear again is still counted", async () => {
    const { store, handler, run, errors } = await setup({ maxBuffer: 3, maxRetryDelayMs: 20 });
    for (const outage of [1, 2]) {
      store.mode = "fail";
      await run(10 * outage);
      await handler.flush();
      // A full buffer while the store fails: each next run's 3 records are dropped.
      await run(10 * outage + 1);
      await run(10 * outage + 2);
      expect(handler.stats().droppedBy.storeFailed).toBe(6 * outage);
      store.release();
      await vi.waitFor(() => expect(handler.stats()).toMatchObject({ storeFailing: false, buffered: 0 }));
      // A run buffered again ends the episode of drops.
      await run(10 * outage + 3);
      await handler.flush();
    }
    // Two outages: each heard once (not once per try), each episode of drops once (not once per run).
    expect(errors.map((f) => f.kind)).toEqual([
      "store_write",
      "dropped_store_failed",
      "store_write",
      "dropped_store_failed",
    ]);
    expect(handler.stats()).toMatchObject({ dropped: 12, written: { calls: 8, turns: 4 } });
  });

  it("a retry writes the same run again under the same keys: no record doubled, never a turn without its calls", async () => {
    const { store, ledger, handler, run } = await setup();
    // The run's write fails on the connection: its calls and turn are kept together and tried again.
    let writes = 0;
    const original = ledger.appendRuns.bind(ledger);
    ledger.appendRuns = async (runs) => {
      writes += 1;
      if (writes === 1) throw new Error("connection terminated unexpectedly");
      return original(runs);
    };
    await run(0);
    await vi.waitFor(() => expect(writes).toBeGreaterThanOrEqual(1));
    expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0 });
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(handler.stats()).toMatchObject({ written: { calls: 2, turns: 1 }, failed: 0, storeFailing: false });
    expect(await ledger.listCalls("default")).toHaveLength(2);
    expect(await ledger.listTurns("default")).toHaveLength(1);
    expect(store.mode).toBe("open");
  });
});

describe("ledger.close()", () => {
  it("flushes the recorders that write to it before it closes", async () => {
    const { store, ledger, handler, run } = await setup({ flushEveryMs: 60_000 });
    await run(0);
    expect(handler.stats().buffered).toBe(3);
    await ledger.close();
    expect(ledger.isClosed).toBe(true);
    expect(handler.stats()).toMatchObject({ buffered: 0, written: { calls: 2, turns: 1 } });
    expect(await new Ledger(store).listCalls("default")).toHaveLength(2);
  });

  it("refuses with RecordsPending while records cannot be written, and closes nothing", async () => {
    const { store, ledger, run } = await setup();
    store.mode = "hang";
    await run(0);
    const refused = await ledger.close({ timeoutMs: 50 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RecordsPending);
    expect((refused as RecordsPending).context).toMatchObject({ pending: 3, recorders: 1 });
    expect((refused as Error).message).toMatch(/discardPending/);
    expect(ledger.isClosed).toBe(false);
    store.release();
    await ledger.close();
    expect(ledger.isClosed).toBe(true);
    expect(await new Ledger(store).listCalls("default")).toHaveLength(2);
  });

  it("closes anyway with discardPending, and a run ending after close is reported, not written", async () => {
    const { store, ledger, handler, run, errors, ledgerFailures } = await setup();
    store.mode = "hang";
    await run(0);
    await ledger.close({ timeoutMs: 20, discardPending: true });
    expect(ledger.isClosed).toBe(true);
    expect(ledgerFailures).toMatchObject([
      { stage: "ledger", kind: "records_discarded", context: { pending: 3, recorders: 1 } },
    ]);
    await run(1);
    expect(handler.stats().failed).toBe(3);
    const [drop] = dropsIn(errors);
    expect(drop.context).toMatchObject({ reason: "ledger_closed", records: 3 });
  });
});
