/**
 * What the lessons stages (classify → learn → inject) add to a turn: the same agent
 * (agent → ToolNode → agent, the demo's eight support-desk tools and scripted model, a
 * MemorySaver, an in-memory ledger and index) with and without it, timed in the same run,
 * interleaved, on a quiet turn (a fresh thread, nothing to learn) and on a turn with signals (the
 * thread's last turn had a failing call, so the learn node runs a review once a tool's refused
 * calls reach the rule). The model is the
 * scripted one, instant, and again with a fixed latency per model step standing in for a hosted
 * model. Then the injected block's size in tokens (estimated: characters / 4) over the demo's
 * traffic for two callers, with lessons applied as they are learned.
 *
 * Run alone with `npx tsx bench/graph.ts`; `benchGraph()` returns the markdown section and its
 * figures (`quietTurnVsAgentNode`: a quiet turn through `createToolLessonsAgent` against the agent node
 * alone, instant model, median ratio).
 */
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { type BaseStore, END, InMemoryStore, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { SHARED_STORES, sharedStore } from "./shared-store.js";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { ScriptedSupportModel, supportDeskTools } from "../examples/support-desk.js";
import { createToolLessonsAgent } from "../src/graph/agent.js";
import { Ledger } from "../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";
import { ToolLessonsAnnotation, type ToolLessonsState } from "../src/graph/state.js";

const TURNS = Number(process.env.BENCH_GRAPH_TURNS ?? 60);
const SLOW_TURNS = Number(process.env.BENCH_GRAPH_SLOW_TURNS ?? 12);
const LATENCY_MS = Number(process.env.BENCH_GRAPH_MODEL_MS ?? 200);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The scripted model with a fixed latency per step (0: instant). */
class TimedModel extends ScriptedSupportModel {
  latency = 0;
  override bindTools(tools: Parameters<ScriptedSupportModel["bindTools"]>[0]): ScriptedSupportModel {
    const bound = super.bindTools(tools) as TimedModel;
    const timed = Object.assign(Object.create(TimedModel.prototype) as TimedModel, bound);
    timed.latency = this.latency;
    return timed;
  }
  override async _generate(...args: Parameters<ScriptedSupportModel["_generate"]>): Promise<ChatResult> {
    if (this.latency > 0) await sleep(this.latency);
    return super._generate(...args);
  }
}

function model(latency: number): TimedModel {
  const m = new TimedModel();
  m.latency = latency;
  return m;
}

/**
 * The same agent without the lessons stages: every tool bound, the recorder wired all the same.
 * With `emptyStep`, a node that does nothing runs before the agent node: the floor any node there
 * costs (one more graph step, its checkpoint write and callbacks).
 */
function plainAgent(
  llm: BaseChatModel,
  tools: StructuredToolInterface[],
  emptyStep = false,
  store: BaseStore = new InMemoryStore(),
): Agent {
  const recorder = new ToolLessonsCallbackHandler({ ledger: new Ledger(store) });
  const base = new StateGraph(ToolLessonsAnnotation)
    .addNode("agent", async (state: ToolLessonsState, config: RunnableConfig) => ({
      messages: [await llm.bindTools!(tools).invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode(tools))
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent");
  const graph = emptyStep
    ? base
        .addNode("empty", async () => ({ routedTools: [] }))
        .addEdge(START, "empty")
        .addEdge("empty", "agent")
    : base.addEdge(START, "agent");
  return graph.compile({ checkpointer: new MemorySaver() }).withConfig({ callbacks: [recorder] }) as unknown as Agent;
}

function lessonsAgent(
  llm: BaseChatModel,
  tools: StructuredToolInterface[],
  subgraph: boolean,
  store: BaseStore = new InMemoryStore(),
): Agent {
  return createToolLessonsAgent({
    model: llm,
    tools,
    store,
    checkpointer: new MemorySaver(),
    subgraph,
    failureSink: () => undefined,
  }) as unknown as Agent;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

const VARIANTS = ["plain", "empty", "node", "subgraph"] as const;
type Variant = (typeof VARIANTS)[number];
type Samples = Record<Variant, number[]>;

type Agent = { invoke: (input: unknown, config: RunnableConfig) => Promise<unknown> };

/**
 * Time `n` measured turns on each agent, interleaved (plain, lessons, plain, …). A quiet turn is a
 * fresh thread's first request; a turn with signals is the second request of a thread whose first
 * one had a refused call (timed: the second only).
 */
async function measure(agents: Record<Variant, Agent>, n: number, signals: boolean): Promise<Samples> {
  const out: Samples = { plain: [], empty: [], node: [], subgraph: [] };
  let thread = 0;
  const ask = (agent: Agent, id: string, text: string) =>
    agent.invoke(
      { messages: [new HumanMessage(text)] },
      { configurable: { thread_id: id }, metadata: { user_id: `u${thread % 4}` } },
    );
  for (let i = 0; i < n + 3; i++) {
    for (const which of VARIANTS) {
      const id = `${which}-${signals ? "s" : "q"}-${++thread}`;
      const order = 100000 + ((i * 7919) % 899999);
      if (signals) await ask(agents[which], id, `Where is order ${order}?`);
      const t0 = performance.now();
      await ask(agents[which], id, signals ? `Can you check on order ${order + 1}?` : `Where is order ORD-${order}?`);
      // The first turns warm both agents up.
      if (i >= 3) out[which].push(performance.now() - t0);
    }
  }
  return out;
}

/** The demo's traffic for two callers, through the lessons agent: the block's size each turn. */
async function blockSizes(): Promise<number[]> {
  const tools = supportDeskTools();
  const agent = createToolLessonsAgent({
    model: model(0),
    tools,
    store: new InMemoryStore(),
    checkpointer: new MemorySaver(),
    autoApply: true,
    memoryEvery: 4,
    failureSink: () => undefined,
  });
  const traffic = [
    "Where is order 482913? It was a birthday present.",
    "Can you check on order 771204 for me?",
    "Please refund $18.50 on ORD-771204, the mug arrived broken.",
    "Refund $12.00 on ORD-660981, it was the wrong size.",
    "How do I rotate the signing keys on the payments cluster?",
    "No, I mean our internal runbook for the payments cluster keys.",
    "Never email anyone on a Sunday.",
    "Send the customer an email that her refund went through.",
    "What's the status of order 590114?",
    "Track the parcel for ORD-590114 please.",
    "How do I download my invoices?",
    "Where is order 319870?",
  ];
  const sizes: number[] = [];
  let thread = 0;
  for (let round = 0; round < 4; round++) {
    for (const user of ["alice", "bob"]) {
      const id = `${user}-${round}-${++thread}`;
      for (const text of traffic) {
        const state = (await agent.invoke(
          { messages: [new HumanMessage(text)] },
          { configurable: { thread_id: id }, metadata: { user_id: user } },
        )) as ToolLessonsState;
        await agent.recorder.flush();
        sizes.push(state.lessonsReport.blockTokens);
      }
    }
  }
  return sizes;
}

const ms = (x: number) => x.toFixed(2);

/**
 * A quiet turn over a store other processes share (a SQLite file, a Postgres schema): the agent
 * node alone against the lessons served in it, both recording into the same kind of store, so
 * the ratio is what serving costs there, the freshness read (one batch of the partition's and the
 * shared scope's versions) included.
 */
async function sharedStoreRows(figures: Record<string, number>): Promise<string[]> {
  const tools = supportDeskTools();
  const rows: string[] = [];
  for (const kind of SHARED_STORES) {
    const got = await sharedStore(kind, "graph");
    if (typeof got === "string") {
      rows.push(`| ${kind} | not run: ${got} | | |`);
      continue;
    }
    try {
      const agents = {
        plain: plainAgent(model(0), tools, false, got.store),
        empty: plainAgent(model(0), tools, true, got.store),
        node: lessonsAgent(model(0), tools, false, got.store),
        subgraph: lessonsAgent(model(0), tools, true, got.store),
      };
      const samples = await measure(agents, TURNS, false);
      const plain = median(samples.plain);
      const node = median(samples.node);
      figures[kind === "sqlite" ? "quietTurnVsAgentNodeSqlite" : "quietTurnVsAgentNodePostgres"] = round(node / plain);
      rows.push(
        `| ${kind === "sqlite" ? "SQLite file" : "Postgres"} | ${TURNS} | ${ms(plain)} | ${ms(node)} (${(node / plain).toFixed(2)}) |`,
      );
    } finally {
      await got.close();
    }
  }
  return rows;
}

export async function benchGraph(): Promise<{ markdown: string; figures: Record<string, number> }> {
  const load = os.loadavg()[0];
  const tools = supportDeskTools();
  const rows: string[] = [];
  const figures: Record<string, number> = {};
  for (const [latency, n] of [
    [0, TURNS],
    [LATENCY_MS, SLOW_TURNS],
  ] as const) {
    for (const signals of [false, true]) {
      const agents = {
        plain: plainAgent(model(latency), tools),
        empty: plainAgent(model(latency), tools, true),
        node: lessonsAgent(model(latency), tools, false),
        subgraph: lessonsAgent(model(latency), tools, true),
      };
      const samples = await measure(agents, n, signals);
      const plain = median(samples.plain);
      const empty = median(samples.empty);
      const node = median(samples.node);
      const sub = median(samples.subgraph);
      if (latency === 0 && !signals) {
        figures.quietTurnVsAgentNode = round(node / plain);
        figures.quietTurnEmptyNodeVsAgentNode = round(empty / plain);
        figures.quietTurnSubgraphVsAgentNode = round(sub / plain);
      }
      rows.push(
        `| ${latency === 0 ? "instant" : `${latency} ms per step`} | ${signals ? "with signals" : "quiet"} | ${n} | ${ms(plain)} | ${ms(empty)} (${(empty / plain).toFixed(2)}) | ${ms(node)} (${(node / plain).toFixed(2)}) | ${ms(sub)} (${(sub / plain).toFixed(2)}) |`,
      );
    }
  }
  const storeRows = await sharedStoreRows(figures);
  const sizes = [...(await blockSizes())].sort((a, b) => a - b);
  const markdown = [
    "## Lessons subgraph: added latency and block size",
    "",
    "`npm run bench -- graph` (`bench/graph.ts`). The demo's eight support-desk tools and scripted model, one agent",
    "(agent → ToolNode → agent, MemorySaver, the recorder wired) without the lessons stages, with them served in the",
    "agent node (`createToolLessonsAgent`'s default, `withLessons`: no step of their own) and as the compiled subgraph (`subgraph: true`,",
    "`createLessonsGraph`), timed in the same run, interleaved; in-memory ledger (InMemoryStore) and index (lexical",
    "embeddings). A quiet turn is a fresh thread's first request; a turn with signals is the second request of a",
    "thread whose first had a refused call (classify → learn → inject; a review runs once a tool's evidence reaches a rule). Medians",
    "of the timed turns after 3 warm-up turns each. The machine is shared: single turns vary by tens of ms, so read",
    'the ratios within one row. "an empty node" is the same agent with a node that does nothing before the agent',
    "node: the floor of any step there (one more graph step, its checkpoint write, its callbacks). The target for a",
    "quiet turn with an instant model is at most 1.15 the agent node alone (`--json`: `graph.quietTurnVsAgentNode`).",
    `Load average (1 min) when the run started: ${load.toFixed(1)}, when it ended: ${os.loadavg()[0].toFixed(1)} (2 cores).`,
    "",
    "| model | turn | turns timed | without (ms) | an empty node (ms, ratio) | in the agent node (ms, ratio) | subgraph (ms, ratio) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "The same quiet turn (instant model) with the ledger over a store other processes share: every turn reads the",
    "partition's and the shared scope's versions (one store batch) and nothing else while they are unchanged",
    "(`--json`: `graph.quietTurnVsAgentNodeSqlite`, `graph.quietTurnVsAgentNodePostgres`).",
    "",
    "| store | turns timed | without (ms) | in the agent node (ms, ratio) |",
    "| --- | --- | --- | --- |",
    ...storeRows,
    "",
    `Injected block over the demo's traffic (${sizes.length} turns, two callers, lessons auto-applied as learned),`,
    `estimated tokens (characters / 4): p50 ${percentile(sizes, 50)}, p95 ${percentile(sizes, 95)}, max ${sizes.at(-1)}.`,
  ].join("\n");
  return { markdown, figures };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { markdown, figures } = await benchGraph();
  console.log(`${markdown}\n\n${JSON.stringify(figures)}`);
}
