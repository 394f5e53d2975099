import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { buildAgent, echoTool, planScript, ScriptedChatModel } from "../helpers/record-agent.js";

const RUNS = 20;
const STEPS = 10;
const PARALLEL_CALLS = 5;
const USERS = ["alice", "bob"];

/**
 * RUNS graph runs at once through one shared handler, each STEPS model steps of PARALLEL_CALLS
 * parallel tool calls, users alternating: every call must land once, in its run's partition.
 */
async function recordConcurrently(store: BaseStore): Promise<void> {
  const ledger = new Ledger(store);
  for (const user of USERS) await ledger.configure(`u:${user}`, { retainCallsPerTool: 5000 });
  const errors: unknown[] = [];
  const handler = new ToolLessonsCallbackHandler({ ledger, failureSink: (f) => errors.push(f) });
  const model = new ScriptedChatModel(
    planScript((step) =>
      step < STEPS
        ? Array.from({ length: PARALLEL_CALLS }, (_, i) => ({ name: "echo", args: { n: step * 10 + i } }))
        : undefined,
    ),
  );
  const graph = buildAgent({ model, tools: [echoTool] });

  await Promise.all(
    Array.from({ length: RUNS }, (_, run) =>
      graph.invoke(
        { messages: [new HumanMessage(`run ${run}`)] },
        {
          configurable: { thread_id: `run-${run}` },
          metadata: { user_id: USERS[run % 2] },
          callbacks: [handler],
          recursionLimit: 100,
        },
      ),
    ),
  );
  await handler.flush();
  expect(errors).toEqual([]);
  expect(handler.stats()).toMatchObject({
    openRuns: 0,
    buffered: 0,
    dropped: 0,
    failed: 0,
    written: { calls: RUNS * STEPS * PARALLEL_CALLS, turns: RUNS },
  });

  const all = [];
  for (const [u, user] of USERS.entries()) {
    const calls = await ledger.listCalls(`u:${user}`);
    expect(calls).toHaveLength((RUNS / 2) * STEPS * PARALLEL_CALLS);
    for (const call of calls) {
      const run = Number(call.threadId?.replace("run-", ""));
      expect(run % 2).toBe(u);
      expect(call.partition).toBe(`u:${user}`);
      expect(call.outcome).toBe("success");
    }
    const perThread = new Map<string, number>();
    for (const call of calls) perThread.set(call.threadId!, (perThread.get(call.threadId!) ?? 0) + 1);
    expect([...perThread.values()]).toEqual(Array(RUNS / 2).fill(STEPS * PARALLEL_CALLS));
    const turns = await ledger.listTurns(`u:${user}`);
    expect(turns).toHaveLength(RUNS / 2);
    for (const turn of turns) expect(turn.calls).toHaveLength(STEPS * PARALLEL_CALLS);
    all.push(...calls);
  }
  expect(all).toHaveLength(1000);
  expect(new Set(all.map((c) => c.id)).size).toBe(1000);
  expect(new Set(all.map((c) => c.runId)).size).toBe(RUNS);
}

describe("recording 20 concurrent runs × 50 calls through one handler", () => {
  it("keeps every call, once, in its own partition (InMemoryStore)", async () => {
    await recordConcurrently(new InMemoryStore());
  });

  const dir = mkdtempSync(join(tmpdir(), "tl-record-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps every call, once, in its own partition (SqliteStore)", async () => {
    const store = await SqliteStore.open(join(dir, "ledger.db"));
    await store.setup();
    try {
      await recordConcurrently(store);
    } finally {
      await store.close();
    }
  });
});
