/**
 * One agent process of the Postgres recording test: RUNS graph runs in parallel, each STEPS
 * model steps of CALLS parallel tool calls, users alternating, recorded through one handler
 * into the shared PostgresStore. Prints its handler's stats as one JSON line and exits 0, or
 * prints the error and exits 1.
 *
 * env: POSTGRES_URL, PG_SCHEMA, WORKER (a label for thread ids), RUNS, STEPS, CALLS.
 */
import { HumanMessage } from "@langchain/core/messages";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { buildAgent, echoTool, planScript, ScriptedChatModel } from "./record-agent.js";

const url = process.env.POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
const schema = process.env.PG_SCHEMA;
const worker = process.env.WORKER ?? "w";
const runs = Number(process.env.RUNS ?? 10);
const steps = Number(process.env.STEPS ?? 10);
const calls = Number(process.env.CALLS ?? 5);
const users = ["alice", "bob"];

async function main(): Promise<void> {
  if (!schema) throw new Error("PG_SCHEMA is required");
  const store = PostgresStore.fromConnString(url, { schema });
  await store.setup();
  try {
    const ledger = new Ledger(store);
    const errors: string[] = [];
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      failureSink: (f) => errors.push(`${f.kind}: ${f.message}`),
    });
    const model = new ScriptedChatModel(
      planScript((step) =>
        step < steps
          ? Array.from({ length: calls }, (_, i) => ({ name: "echo", args: { n: step * 10 + i } }))
          : undefined,
      ),
    );
    const graph = buildAgent({ model, tools: [echoTool] });
    await Promise.all(
      Array.from({ length: runs }, (_, run) =>
        graph.invoke(
          { messages: [new HumanMessage(`${worker} run ${run}`)] },
          {
            configurable: { thread_id: `${worker}-${run}` },
            metadata: { user_id: users[run % 2] },
            callbacks: [handler],
            recursionLimit: 4 * steps + 10,
          },
        ),
      ),
    );
    await handler.flush();
    process.stdout.write(`${JSON.stringify({ worker, stats: handler.stats(), errors })}\n`);
  } finally {
    await store.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
