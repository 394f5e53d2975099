import { randomBytes } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore, type PostgresStore } from "../../src/ledger/postgres.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { echoTwiceAgent } from "../helpers/record-agent.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

/**
 * Postgres backends terminated under a recording agent (`pg_terminate_backend`, as a server
 * restart, a failover or an operator does): no record is lost, none is counted as bad, and
 * `stats()` / `flush()` say so. Only this test's own backends are ended: the recorder's store
 * connects with an `application_name` no other connection has, and only those pids are ended.
 *
 * Each episode makes the kill land on a write in progress: an admin connection holds a lock on
 * the store's tables, the runs end and the writer's write waits on the lock inside its
 * transaction, the test ends the writer's backends, then lets the lock go.
 */
const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] record/postgres-dropped: ${unavailable}`);

const EPISODES = 6;
const RUNS_PER_EPISODE = 5;

describe.skipIf(unavailable !== null)("recording while Postgres backends are terminated", () => {
  const schema = uniqueSchema("tl_dropped");
  const appName = `tl_dropped_${process.pid}_${randomBytes(4).toString("hex")}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("application_name", appName);
  let store: PostgresStore;
  let direct: PostgresStore;
  /** Holds the lock on the store's tables. */
  let locker: pg.Client;
  /** Watches and ends this test's backends (outside the locker's transaction, whose view of pg_stat_activity is frozen). */
  let admin: pg.Client;
  let ledger: Ledger;
  let handler: ToolLessonsCallbackHandler;
  const heard: ToolLessonsFailure[] = [];

  beforeAll(async () => {
    store = await openPostgresStore(url.toString(), { schema, onIdleError: () => undefined });
    direct = await openPostgresStore(POSTGRES_URL, { schema });
    ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("u:dropped", { retainCallsPerTool: 5_000, retainTurns: 5_000 });
    await ledger.fingerprintKey("u:dropped");
    handler = new ToolLessonsCallbackHandler({ ledger, maxRetryDelayMs: 50, failureSink: (f) => heard.push(f) });
    // One run written before the episodes: the recorder's write thread (the default here) is up and
    // its pool open, so the episodes' kills land on writes, not on the thread's start.
    await echoTwiceAgent().invoke(
      { messages: [new HumanMessage("warm-up")] },
      { configurable: { thread_id: "warm-up" }, metadata: { user_id: "warm-up" }, callbacks: [handler] },
    );
    await handler.flush({ timeoutMs: 60_000 });
    locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  }, 90_000);

  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await admin?.end().catch(() => undefined);
    await store?.stop().catch(() => undefined);
    await direct?.stop().catch(() => undefined);
    await dropSchema(schema);
  }, 30_000);

  /** This test's store backends: all, or those waiting on a lock. */
  const ownBackends = async (waitingOnLock: boolean): Promise<number[]> => {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()" +
        (waitingOnLock ? " AND wait_event_type = 'Lock'" : ""),
      [appName],
    );
    return rows.map((r) => r.pid);
  };

  /** End every backend of this test's store; how many were ended. */
  const endOwnBackends = async (): Promise<number> => {
    let ended = 0;
    for (const pid of await ownBackends(false)) {
      const { rows } = await admin.query<{ ended: boolean }>("SELECT pg_terminate_backend($1) AS ended", [pid]);
      if (rows[0]?.ended) ended += 1;
    }
    return ended;
  };

  it(`${EPISODES} terminations during writes: every call and turn stored once, none counted bad, none lost`, async () => {
    const { rows: tables } = await admin.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = $1",
      [schema],
    );
    const locked = tables.map((t) => `"${schema}"."${t.tablename}"`).join(", ");
    const graph = echoTwiceAgent();
    let runs = 0;
    let terminated = 0;
    for (let episode = 0; episode < EPISODES; episode++) {
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE ${locked} IN ACCESS EXCLUSIVE MODE`);
      const states = await Promise.all(
        Array.from({ length: RUNS_PER_EPISODE }, () => {
          const i = runs++;
          return graph.invoke(
            { messages: [new HumanMessage(`go ${i}`)] },
            { configurable: { thread_id: `t${i}` }, metadata: { user_id: "dropped" }, callbacks: [handler] },
          );
        }),
      );
      // The runs never wait on the store: they are done while their records wait to be written.
      for (const state of states) expect(state.messages.at(-1)?.content).toBe("done");
      // The writer's write is in its transaction, waiting on the lock: end its backend there.
      await vi.waitFor(async () => expect((await ownBackends(true)).length).toBeGreaterThan(0), {
        timeout: 10_000,
        interval: 20,
      });
      terminated += await endOwnBackends();
      // Let the store take what was waiting, and lock again at once: a write that comes next (a
      // retry, or the rest of a batch tried row by row) waits, and its connection is ended too,
      // after other rows of its batch were written.
      await locker.query("ROLLBACK");
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE ${locked} IN ACCESS EXCLUSIVE MODE`);
      const waited = await vi
        .waitFor(async () => expect((await ownBackends(true)).length).toBeGreaterThan(0), {
          timeout: 1_000,
          interval: 20,
        })
        .then(
          () => true,
          () => false,
        );
      if (waited) terminated += await endOwnBackends();
      await locker.query("ROLLBACK");
    }
    expect(terminated).toBeGreaterThanOrEqual(EPISODES);

    // The writer's own retries store what the terminations interrupted.
    await vi.waitFor(() => expect(handler.stats()).toMatchObject({ buffered: 0, inFlight: 0, storeFailing: false }), {
      timeout: 20_000,
      interval: 50,
    });
    expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0, timedOut: false });
    const produced = { calls: 2 * runs, turns: runs };
    // The warm-up run's 2 calls and turn are written too.
    expect(handler.stats()).toMatchObject({
      written: { calls: produced.calls + 2, turns: produced.turns + 1 },
      failed: 0,
      dropped: 0,
      withheld: 0,
    });

    const reader = new Ledger(direct, { failureSink: () => undefined });
    const calls = await reader.listCalls("u:dropped");
    const turns = await reader.listTurns("u:dropped");
    expect({ calls: calls.length, turns: turns.length }).toEqual(produced);
    expect(new Set(calls.map((c) => c.id)).size).toBe(produced.calls);
    // Every turn names calls the ledger holds (turns are written after their calls).
    expect(turns.every((t) => t.calls.length === 2)).toBe(true);
    // Said as the store's fault, never as bad records.
    expect(heard.map((f) => f.kind)).toContain("store_write");
    expect(heard.map((f) => f.kind)).not.toContain("bad_record");
  }, 60_000);
});
