import { HumanMessage } from "@langchain/core/messages";
import { expect, it, vi } from "vitest";
import type { Ledger, RunRecords } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { echoTwiceAgent } from "./record-agent.js";

/**
 * A run's calls and its turn are stored together or not at all: the store refuses one kind of
 * row inside its own transaction (a trigger on the store's table), and nothing of the run may
 * remain. Shared by the SQLite unit test and the Postgres integration test.
 */
export interface RefusingWorld {
  ledger: Ledger;
  /** Make the store itself refuse every new row of this collection (a trigger), until `allow()`. */
  refuse(collection: "calls" | "turns"): Promise<void>;
  allow(): Promise<void>;
  /** Recorder options for the world (e.g. `writeThread`). */
  recorder?: { writeThread?: boolean };
  cleanup(): Promise<void>;
}

const PARTITION = "u:atomic";

/** Run `i` of `partition`: two `echo` calls and the turn that made them. */
export function echoRun(partition: string, i: number): RunRecords {
  const call = (n: number) => ({
    partition,
    tool: "echo",
    runId: `run-${i}`,
    args: [],
    fingerprints: [],
    outcome: "success" as const,
    source: "callback" as const,
    requestId: `req-${i}-${n}`,
  });
  return {
    calls: [call(1), call(2)],
    turn: {
      partition,
      requestId: `req-${i}`,
      request: "[text]",
      calls: [
        { tool: "echo", outcome: "success" },
        { tool: "echo", outcome: "success" },
      ],
    },
  };
}

const run = (i: number): RunRecords => echoRun(PARTITION, i);

export function appendRunsSuite(setup: () => Promise<RefusingWorld>): void {
  it("a turn the store refuses takes its run's calls with it; calls it refuses take the turn", async () => {
    const world = await setup();
    try {
      const { ledger } = world;
      await world.refuse("turns");
      await expect(ledger.appendRuns([run(1)])).rejects.toThrow();
      expect(await ledger.listCalls(PARTITION)).toHaveLength(0);
      expect(await ledger.listTurns(PARTITION)).toHaveLength(0);
      await world.allow();

      await world.refuse("calls");
      await expect(ledger.appendRuns([run(2)])).rejects.toThrow();
      expect(await ledger.listTurns(PARTITION)).toHaveLength(0);
      expect(await ledger.listCalls(PARTITION)).toHaveLength(0);
      await world.allow();

      // A batch of runs is one transaction too: one refused turn, and no run of the batch is stored.
      await world.refuse("turns");
      await expect(ledger.appendRuns([run(3), run(4), run(5)])).rejects.toThrow();
      expect(await ledger.listCalls(PARTITION)).toHaveLength(0);
      await world.allow();

      const saved = await ledger.appendRuns([run(6), run(7)]);
      expect({ calls: saved.calls.length, turns: saved.turns.length }).toEqual({ calls: 4, turns: 2 });
      expect(await ledger.listCalls(PARTITION)).toHaveLength(4);
      expect((await ledger.listTurns(PARTITION)).map((t) => t.requestId)).toEqual(["req-6", "req-7"]);
    } finally {
      await world.cleanup();
    }
  });

  it("the recorder never leaves a run's calls without its turn: they wait, then are stored together", async () => {
    const world = await setup();
    try {
      const { ledger } = world;
      const handler = new ToolLessonsCallbackHandler({
        ledger,
        maxRetryDelayMs: 20,
        failureSink: () => undefined,
        ...world.recorder,
      });
      let onMainThread = 0;
      const appendRuns = ledger.appendRuns.bind(ledger);
      ledger.appendRuns = (runs) => {
        onMainThread += 1;
        return appendRuns(runs);
      };
      await world.refuse("turns");
      const state = await echoTwiceAgent().invoke(
        { messages: [new HumanMessage("go")] },
        { configurable: { thread_id: "t-atomic" }, metadata: { user_id: "atomic" }, callbacks: [handler] },
      );
      expect(state.messages.at(-1)?.content).toBe("done");
      // The store refuses the turn: the run's write fails whole and is kept for the retry.
      await vi.waitFor(() => expect(handler.stats().storeFailing).toBe(true), { timeout: 10_000, interval: 20 });
      expect(await ledger.listCalls(PARTITION)).toHaveLength(0);
      expect(handler.stats()).toMatchObject({ written: { calls: 0, turns: 0 }, failed: 0 });
      await world.allow();
      await vi.waitFor(() => expect(handler.stats()).toMatchObject({ storeFailing: false, buffered: 0 }), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0 });
      expect(handler.stats()).toMatchObject({ written: { calls: 2, turns: 1 }, failed: 0, dropped: 0 });
      const calls = await ledger.listCalls(PARTITION);
      const turns = await ledger.listTurns(PARTITION);
      expect(calls).toHaveLength(2);
      expect(turns).toHaveLength(1);
      expect(new Set(calls.map((c) => c.requestId))).toEqual(new Set([turns[0].requestId]));
      // With a write thread, every write went through it; without, through this thread's ledger.
      if (world.recorder?.writeThread) expect(onMainThread).toBe(0);
      else expect(onMainThread).toBeGreaterThan(0);
    } finally {
      await world.cleanup();
    }
  }, 30_000);
}
