/**
 * A warm start: what the first turn of a caller costs after `graph.setup(config)`, against a quiet
 * turn of the same agent, over Postgres and over Chroma (a routing index in a Chroma collection,
 * the ledger in a SQLite file), and without setup for comparison. The demo's eight support-desk
 * tools and scripted model (instant), `createToolLessonsAgent`, each caller new.
 *
 * Run alone with `npx tsx bench/warm-start.ts`; `benchWarmStart()` returns the markdown section
 * and its figures (`<store>.firstTurnVsQuiet` with setup, `<store>.firstTurnNoSetupVsQuiet`).
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseStore } from "@langchain/langgraph";
import { MemorySaver } from "@langchain/langgraph";
import { ScriptedSupportModel, supportDeskTools } from "../examples/support-desk.js";
import { createToolLessonsAgent } from "../src/graph/agent.js";
import { Ledger } from "../src/ledger/ledger.js";
import { ChromaVectorIndex } from "../src/routing/chroma.js";
import { startChromaServer } from "../src/routing/chroma-server.js";
import { ToolIndex } from "../src/routing/tool-index.js";
import { sharedStore } from "./shared-store.js";

const CALLERS = Number(process.env.BENCH_WARM_CALLERS ?? 8);
const QUIET = 20;

type Agent = ReturnType<typeof createToolLessonsAgent>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let asked = 0;

/** One turn of a new thread; each request is new (its order number), so every turn routes, as a quiet turn of real traffic does. */
async function turn(agent: Agent, user: string, thread: string): Promise<number> {
  const t0 = performance.now();
  await agent.invoke(
    { messages: [new HumanMessage(`Where is order ORD-${400000 + ++asked}?`)] },
    { configurable: { thread_id: thread, user_id: user }, metadata: { user_id: user } },
  );
  return performance.now() - t0;
}

/** First turns of new callers with and without setup, and quiet turns, on one agent. */
async function measure(agent: Agent, label: string) {
  // The process and the store warmed once (module JIT, connections), on a caller of its own.
  await agent.setup({ configurable: { user_id: `${label}-warm` } });
  await turn(agent, `${label}-warm`, "warm-0");
  const withSetup: number[] = [];
  const withoutSetup: number[] = [];
  for (let i = 0; i < CALLERS; i++) {
    const user = `${label}-s${i}`;
    await agent.setup({ configurable: { user_id: user } });
    withSetup.push(await turn(agent, user, `s-${i}`));
    withoutSetup.push(await turn(agent, `${label}-n${i}`, `n-${i}`));
  }
  const quiet: number[] = [];
  for (let i = 0; i < QUIET; i++) quiet.push(await turn(agent, `${label}-s0`, `q-${i}`));
  return { withSetup: median(withSetup), withoutSetup: median(withoutSetup), quiet: median(quiet) };
}

export async function benchWarmStart(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const load = os.loadavg()[0];
  const figures: Record<string, unknown> = {};
  const rows: string[] = [];
  const row = (name: string, r: Awaited<ReturnType<typeof measure>>) => {
    figures[name] = {
      firstTurnVsQuiet: Math.round((r.withSetup / r.quiet) * 100) / 100,
      firstTurnNoSetupVsQuiet: Math.round((r.withoutSetup / r.quiet) * 100) / 100,
    };
    rows.push(
      `| ${name} | ${r.quiet.toFixed(1)} | ${r.withSetup.toFixed(1)} (${(r.withSetup / r.quiet).toFixed(2)}) | ${r.withoutSetup.toFixed(1)} (${(r.withoutSetup / r.quiet).toFixed(2)}) |`,
    );
  };
  const agentOver = (store: BaseStore, index?: ToolIndex) =>
    createToolLessonsAgent({
      model: new ScriptedSupportModel(),
      tools: supportDeskTools(),
      store,
      checkpointer: new MemorySaver(),
      maxTools: 4,
      ...(index ? { index } : {}),
      failureSink: () => undefined,
    });

  const pg = await sharedStore("postgres", "warm");
  if (typeof pg === "string") rows.push(`| postgres | not run: ${pg} | | |`);
  else
    try {
      row("postgres", await measure(agentOver(pg.store), "pg"));
    } finally {
      await pg.close();
    }

  const sqlite = await sharedStore("sqlite", "warm");
  if (typeof sqlite === "string") throw new Error(sqlite);
  let chroma: Awaited<ReturnType<typeof startChromaServer>> | undefined;
  try {
    chroma = await startChromaServer();
    const server = chroma;
    const vectorStore = (embeddings: EmbeddingsInterface) =>
      new ChromaVectorIndex({
        embeddings,
        collectionName: `warm-${process.pid}`,
        host: server.host,
        port: server.port,
      });
    const index = new ToolIndex({ ledger: new Ledger(sqlite.store), vectorStore });
    row("chroma", await measure(agentOver(sqlite.store, index), "ch"));
  } catch (error) {
    rows.push(`| chroma | not run: ${String(error)} | | |`);
  } finally {
    await chroma?.stop();
    await sqlite.close();
  }

  const markdown = [
    "## Warm start",
    "",
    "`npm run bench -- warm-start` (`bench/warm-start.ts`): `createToolLessonsAgent` over the support desk's 8 tools and",
    "scripted model (instant), 4 tools routed. A caller's first turn after `await graph.setup(config)` (its tools",
    "registered, its routing index built, its versions and lessons read), a new caller's first turn without it, and a",
    `quiet turn (a caller already served); every request is new, so every turn routes. Medians over ${CALLERS} callers and ${QUIET} quiet turns. Postgres holds the ledger; for`,
    "Chroma the routing index is a collection on a local Chroma server and the ledger a SQLite file. The target for the",
    "first turn after setup is at most 2× a quiet turn (`--json`: `warm-start.<store>.firstTurnVsQuiet`).",
    `Load average (1 min) when the run started: ${load.toFixed(1)}, when it ended: ${os.loadavg()[0].toFixed(1)} (2 cores).`,
    "",
    "| store | quiet turn (ms) | first turn after setup (ms, ratio) | first turn without setup (ms, ratio) |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
  return { markdown, figures };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { markdown, figures } = await benchWarmStart();
  console.log(`${markdown}\n\n${JSON.stringify(figures)}`);
}
