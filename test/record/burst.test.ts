import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { echoTwiceAgent } from "../helpers/record-agent.js";

/**
 * Bursts on a healthy store lose nothing. Back-to-back runs of a scripted agent never yield to
 * the event loop (every step is a promise), so a recorder that wrote only when the loop is free
 * filled its buffer and dropped; a buffer ten times smaller than the burst shows it here.
 */
const RUNS = 120;
const MAX_BUFFER = 36;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(path.join(tmpdir(), "tl-burst-"));
  dirs.push(dir);
  const store = await SqliteStore.open(path.join(dir, "ledger.db"));
  await store.setup();
  const ledger = new Ledger(store, { failureSink: () => undefined, ownsStore: true });
  await ledger.configure("default", { retainCallsPerTool: 10 * RUNS });
  const errors: ToolLessonsFailure[] = [];
  const handler = new ToolLessonsCallbackHandler({
    ledger,
    maxBuffer: MAX_BUFFER,
    singleTenant: true,
    failureSink: (f) => errors.push(f),
  });
  const graph = echoTwiceAgent();
  const run = (i: number) =>
    graph.invoke(
      { messages: [new HumanMessage(`go ${i}`)] },
      { configurable: { thread_id: `t${i}` }, callbacks: [handler] },
    );
  return { ledger, handler, run, errors };
}

describe("a burst of runs on SQLite drops nothing", () => {
  it(`${RUNS} back-to-back runs through a ${MAX_BUFFER}-record buffer: every record written, the buffer never past its bound`, async () => {
    const { ledger, handler, run, errors } = await setup();
    let peak = 0;
    for (let i = 0; i < RUNS; i += 1) {
      await run(i);
      const s = handler.stats();
      peak = Math.max(peak, s.buffered + s.inFlight);
    }
    expect(await handler.flush()).toMatchObject({ inFlight: 0, lost: 0 });
    expect(handler.stats()).toMatchObject({ dropped: 0, failed: 0, written: { calls: 2 * RUNS, turns: RUNS } });
    expect(peak).toBeLessThanOrEqual(MAX_BUFFER);
    expect(errors).toEqual([]);
    expect(await ledger.listCalls("default")).toHaveLength(2 * RUNS);
    expect(await ledger.listTurns("default")).toHaveLength(RUNS);
    await ledger.close();
  });

  it(`${RUNS} runs started at once: every record written`, async () => {
    const { ledger, handler, run, errors } = await setup();
    await Promise.all(Array.from({ length: RUNS }, (_, i) => run(i)));
    await ledger.close();
    expect(handler.stats()).toMatchObject({ dropped: 0, failed: 0, written: { calls: 2 * RUNS, turns: RUNS } });
    expect(errors).toEqual([]);
  });
});
