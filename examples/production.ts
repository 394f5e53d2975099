/**
 * The production wiring: a hosted (or any OpenAI-compatible) chat model and embeddings, a
 * Postgres ledger shared by every agent process, a Chroma index, all configured from the
 * environment, which `readEnv()` (src/env.ts) reads in one place:
 *
 * | variable                        | what                                                        |
 * |---------------------------------|-------------------------------------------------------------|
 * | `OPENAI_API_KEY`                | the key (any non-empty text for a local server)             |
 * | `OPENAI_BASE_URL`               | an OpenAI-compatible server instead of the hosted API, e.g. Ollama's `http://localhost:11434/v1` |
 * | `TOOL_LESSONS_CHAT_MODEL`       | the chat model (default `gpt-4o-mini`)                      |
 * | `TOOL_LESSONS_EMBEDDINGS_MODEL` | the embeddings model (default `text-embedding-3-small`)     |
 * | `TOOL_LESSONS_POSTGRES_URL`     | the ledger's database, `postgresql://user:password@host:5432/db` |
 * | `TOOL_LESSONS_CHROMA_URL`       | the Chroma server, `http://host:8000`                       |
 * | `TOOL_LESSONS_KEY`              | the ledger's secret, the same in every process (`openssl rand -hex 32`) |
 *
 * What it runs: the support desk's tools are registered (each augmented by one model call), a
 * few requests go through the routed LangGraph agent with the recorder, the model proposes
 * lessons from what was recorded, they are applied, and the same kind of request runs again.
 * `docs/production.md` explains each piece; `test/examples/production.int.test.ts` runs this
 * file against a local OpenAI-compatible server, the real Postgres and a real Chroma server.
 *
 * Run: `OPENAI_API_KEY=... TOOL_LESSONS_POSTGRES_URL=... TOOL_LESSONS_CHROMA_URL=... TOOL_LESSONS_KEY=... npx tsx examples/production.ts`
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import {
  bindRoutedTools,
  InvalidInput,
  LessonManager,
  registerTools,
  type Revision,
  ToolIndex,
  ToolLessonsAnnotation,
  ToolLessonsCallbackHandler,
} from "../src/index.js";
import { createRouteNode } from "../src/graph/index.js";
import { ToolRouter } from "../src/routing/index.js";
import { ChromaVectorIndex } from "../src/routing/chroma.js";
import { modelDescription } from "../src/prompt/index.js";
import { readEnv, type ToolLessonsEnv } from "../src/schema.js";
import { PostgresLedger } from "../src/ledger/postgres.js";
import { supportDeskTools } from "./support-desk.js";

/** Options of {@link main}. */
export interface ProductionOptions {
  /**
   * The environment to configure from.
   * @default process.env
   */
  env?: Record<string, string | undefined>;
  /**
   * Print nothing (the test runs it this way).
   * @default false
   */
  quiet?: boolean;
  /**
   * Postgres schema of the ledger's tables.
   * @default "tool_lessons"
   */
  postgresSchema?: string;
  /**
   * Chroma collection of the routing index.
   * @default "tool-lessons-tools"
   */
  collectionName?: string;
}

/** The defaults of {@link ProductionOptions} (`env` excepted: process.env, read when called). */
export const DEFAULT_PRODUCTION_OPTIONS: Readonly<Required<Omit<ProductionOptions, "env">>> = Object.freeze({
  quiet: false,
  postgresSchema: "tool_lessons",
  collectionName: "tool-lessons-tools",
});

/** The model names used when the environment names none. */
export const DEFAULT_MODELS = Object.freeze({ chat: "gpt-4o-mini", embeddings: "text-embedding-3-small" });

/** What {@link main} did, for the test and for anyone scripting it. */
export interface ProductionSummary {
  /** The caller's partition. */
  partition: string;
  /** Tools registered, and those whose augmentation the vet accepted. */
  registered: string[];
  augmented: string[];
  /** Each request of the traffic: the calls it made, in order (`tool:ok`). */
  traffic: { request: string; calls: string[] }[];
  /** Revisions the model proposed and were applied. */
  applied: Pick<Revision, "tool" | "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample">[];
  /** What the model is shown for lookup_order after the lessons. */
  lookupOrderShown: string;
  /** The request run again after the lessons, and its calls. */
  again: { request: string; calls: string[] };
  /** Records in the ledger for the partition. */
  callRecords: number;
}

/** What the application is configured with: the environment, checked. */
export interface ProductionConfig {
  apiKey: string;
  baseURL?: string;
  chatModel: string;
  embeddingsModel: string;
  postgresUrl: string;
  /** The ledger's secret: the key of its fingerprints and word tokens, never kept in Postgres. */
  ledgerKey: string;
  chroma: { host: string; port: number };
}

/**
 * The configuration, from what {@link readEnv} read.
 * @throws InvalidInput naming the variable that is missing.
 */
export function productionConfig(env: ToolLessonsEnv): ProductionConfig {
  const missing = (name: string, why: string) =>
    new InvalidInput(`Set ${name}: ${why}.`, { context: { variable: name } });
  if (env.postgresUrl === undefined)
    throw missing(
      "TOOL_LESSONS_POSTGRES_URL",
      "the ledger's Postgres database, postgresql://user:password@host:5432/db",
    );
  if (env.chromaUrl === undefined)
    throw missing("TOOL_LESSONS_CHROMA_URL", "the Chroma server of the routing index, http://host:8000");
  if (env.ledgerKey === undefined)
    throw missing("TOOL_LESSONS_KEY", "the ledger's secret, the same in every process (e.g. `openssl rand -hex 32`)");
  // A local OpenAI-compatible server (Ollama, vLLM) takes any key; the hosted API needs a real one.
  const apiKey = env.openaiApiKey ?? (env.openaiBaseUrl !== undefined ? "unused" : undefined);
  if (apiKey === undefined)
    throw missing("OPENAI_API_KEY", "the key of the hosted API (or OPENAI_BASE_URL for a local server)");
  const chroma = new URL(env.chromaUrl);
  return {
    apiKey,
    ...(env.openaiBaseUrl !== undefined ? { baseURL: env.openaiBaseUrl } : {}),
    chatModel: env.chatModel ?? DEFAULT_MODELS.chat,
    embeddingsModel: env.embeddingsModel ?? DEFAULT_MODELS.embeddings,
    postgresUrl: env.postgresUrl,
    ledgerKey: env.ledgerKey,
    chroma: { host: chroma.hostname, port: Number(chroma.port || (chroma.protocol === "https:" ? 443 : 80)) },
  };
}

const TRAFFIC = [
  "Where is order 482913? It was a birthday present.",
  "Can you check on order 771204 for me?",
  "Track the parcel for order 660981 please.",
  "Send zelda.quackenbush@example.test an email that her refund went through.",
];
const AGAIN = "Where is order 319870?";
const CALLER = { user_id: "alice" };
const PARTITION = "u:alice";

/** Run the production wiring once. Returns a summary; prints as it goes unless `quiet`. */
export async function main(options: ProductionOptions = {}): Promise<ProductionSummary> {
  const quiet = options.quiet ?? DEFAULT_PRODUCTION_OPTIONS.quiet;
  const out = quiet ? () => undefined : (line = "") => console.log(line);
  const config = productionConfig(readEnv(options.env ?? process.env));
  const client = {
    apiKey: config.apiKey,
    configuration: config.baseURL !== undefined ? { baseURL: config.baseURL } : {},
  };
  const chat = new ChatOpenAI({ model: config.chatModel, temperature: 0, maxRetries: 3, timeout: 60_000, ...client });
  const embeddings = new OpenAIEmbeddings({ model: config.embeddingsModel, maxRetries: 3, timeout: 60_000, ...client });

  const ledger = PostgresLedger.fromConnString(config.postgresUrl, {
    secret: config.ledgerKey,
    schema: options.postgresSchema ?? DEFAULT_PRODUCTION_OPTIONS.postgresSchema,
  });
  await ledger.setup();
  try {
    const collectionName = options.collectionName ?? DEFAULT_PRODUCTION_OPTIONS.collectionName;
    const chroma = await ChromaVectorIndex.create({ ...config.chroma, collectionName, embeddings });
    const index = new ToolIndex({ ledger, embeddings, vectorStore: () => chroma });
    const tools = supportDeskTools();
    out(
      `chat model ${config.chatModel}, embeddings ${config.embeddingsModel}${config.baseURL ? ` at ${config.baseURL}` : ""}`,
    );
    out(
      `ledger: Postgres (schema ${options.postgresSchema ?? DEFAULT_PRODUCTION_OPTIONS.postgresSchema}); index: Chroma at ${config.chroma.host}:${config.chroma.port} (${collectionName})`,
    );

    const registered = await registerTools(ledger, tools, { partition: PARTITION, augment: true, model: chat });
    await index.reindex(PARTITION);
    out(
      `registered ${registered.registered.length + registered.updated.length + registered.unchanged.length} tools, ${registered.augmented.length} augmented`,
    );

    const recorder = new ToolLessonsCallbackHandler({ ledger });
    const graph = new StateGraph(ToolLessonsAnnotation)
      .addNode("route", createRouteNode({ router: new ToolRouter({ index, maxTools: 4 }), ledger }))
      .addNode("agent", async (state, runConfig) => {
        const bound = bindRoutedTools(chat, tools, state.routedTools, state.routedCards);
        return { messages: [await bound.invoke(state.messages, runConfig)] };
      })
      .addNode("tools", new ToolNode(tools))
      .addEdge(START, "route")
      .addEdge("route", "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver(), store: ledger.store });

    let thread = 0;
    const ask = async (request: string) => {
      const state = await graph.invoke(
        { messages: [new HumanMessage(request)] },
        { configurable: { thread_id: `production-${++thread}`, ...CALLER }, metadata: CALLER, callbacks: [recorder] },
      );
      await recorder.flush();
      const calls = state.messages
        .slice(state.messages.findLastIndex((m) => m.getType() === "human") + 1)
        .filter((m) => m.getType() === "tool")
        .map((m) => `${m.name ?? "?"}:${(m as { status?: string }).status === "error" ? "refused" : "ok"}`);
      out(`  ${JSON.stringify(request)} → ${calls.join(" → ") || "(no tool)"}`);
      return { request, calls };
    };

    out("traffic:");
    const traffic = [];
    for (const request of TRAFFIC) traffic.push(await ask(request));

    const manager = new LessonManager({ ledger, index, model: chat });
    const review = await manager.review({ partition: PARTITION });
    const applied: ProductionSummary["applied"] = [];
    for (const revision of review.revisions) {
      // An operator approves each revision; here the example stands in for them.
      const done = await manager.apply(revision.id, { partition: PARTITION, approvedBy: "production-example" });
      applied.push({
        tool: done.tool,
        notesAdded: done.notesAdded,
        queriesAdded: done.queriesAdded,
        avoidAdded: done.avoidAdded,
        callExample: done.callExample,
      });
      out(`applied ${done.tool}: ${[...done.notesAdded, ...(done.callExample ? [done.callExample] : [])].join(" | ")}`);
    }
    const lookupOrderShown = modelDescription((await ledger.getCard(PARTITION, "lookup_order"))!);
    out("again, after the lessons:");
    const again = await ask(AGAIN);
    return {
      partition: PARTITION,
      registered: [...registered.registered, ...registered.updated, ...registered.unchanged].sort(),
      augmented: [...registered.augmented].sort(),
      traffic,
      applied,
      lookupOrderShown,
      again,
      callRecords: (await ledger.listCalls(PARTITION)).length,
    };
  } finally {
    await ledger.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
