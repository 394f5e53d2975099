import { Embeddings } from "@langchain/core/embeddings";
import { HumanMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { END, InMemoryStore, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bindRoutedTools, createRouteNode } from "../../src/graph/route-node.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { toResolver } from "../../src/caller/partition.js";
import { planScript, ScriptedChatModel } from "../helpers/record-agent.js";

/**
 * One request, one partition: a real LangGraph StateGraph (route node → agent → ToolNode) with the
 * recorder, the caller's ids given in one place only. Every record of the request (route record,
 * calls, turn) lands in the same partition, whichever place that is.
 */

class CapturingModel extends ScriptedChatModel {
  bound: string[][] = [];
  override bindTools(tools: unknown[] = []): this {
    this.bound.push(tools.map((t) => (t as { name: string }).name));
    return this;
  }
}

/** Embeddings that fail on demand, like a remote service answering 503. */
class FlakyEmbeddings extends Embeddings {
  failing = false;
  private readonly inner = new LexicalEmbeddings({ dimension: 256 });
  constructor() {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    if (this.failing) throw new Error("embeddings service unavailable (503)");
    return this.inner.embedDocuments(texts);
  }
  async embedQuery(text: string): Promise<number[]> {
    if (this.failing) throw new Error("embeddings service unavailable (503)");
    return this.inner.embedQuery(text);
  }
}

const make = (name: string, description: string) =>
  tool(async ({ q }) => `${name}: ${q} found`, { name, description, schema: z.object({ q: z.string() }) });

const TOOLS: StructuredToolInterface[] = [
  make("lookup_order", "Look up an order and where it stands by its order number."),
  make("reset_password", "Send a password reset link to an account's email address."),
  make("refund_order", "Refund an order to the original payment method."),
  make("search_public_docs", "Search the published product documentation."),
];

interface BuildOptions {
  partitions?: string[];
  recorderPartition?: string;
  nodePartition?: string;
  embeddings?: Embeddings;
}

async function build(options: BuildOptions = {}) {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  for (const partition of options.partitions ?? ["default", "u:erin", "t:acme/u:erin"]) {
    await registerTools(ledger, TOOLS, { partition });
  }
  const index = new ToolIndex({ ledger, ...(options.embeddings ? { embeddings: options.embeddings } : {}) });
  const routingWarnings: ToolLessonsFailure[] = [];
  const router = new ToolRouter({ index, maxTools: 2, failureSink: (f) => routingWarnings.push(f) });
  const model = new CapturingModel(
    planScript((step, messages) => {
      const text = String(messages.findLast((m) => m.getType() === "human")?.content ?? "");
      const order = /order (\d+)/.exec(text)?.[1];
      return step === 0 && order ? [{ name: "lookup_order", args: { q: order } }] : undefined;
    }),
  );
  const nodeErrors: unknown[] = [];
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode(
      "route",
      createRouteNode({
        router,
        ledger,
        failureSink: (failure) => nodeErrors.push(failure.error ?? failure.message),
        ...(options.nodePartition ? { partition: toResolver(options.nodePartition) } : {}),
      }),
    )
    .addNode("agent", async (state, config) => ({
      messages: [
        await bindRoutedTools(model, TOOLS, state.routedTools, state.routedCards).invoke(state.messages, config),
      ],
    }))
    .addNode("tools", new ToolNode(TOOLS))
    .addEdge(START, "route")
    .addEdge("route", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const recorded: ToolLessonsFailure[] = [];
  const recorder = new ToolLessonsCallbackHandler({
    ledger,
    failureSink: (f) => recorded.push(f),
    ...(options.recorderPartition ? { partition: options.recorderPartition } : {}),
  });
  return { ledger, graph, model, recorder, recorded, routingWarnings, nodeErrors };
}

let threads = 0;

/** Every record of the ledger, per partition, as counts. */
async function where(ledger: Ledger, partitions: string[]) {
  const out: Record<string, { routes: number; calls: number; turns: number }> = {};
  for (const p of partitions) {
    const [routes, calls, turns] = await Promise.all([ledger.listRoutes(p), ledger.listCalls(p), ledger.listTurns(p)]);
    if (routes.length + calls.length + turns.length > 0) {
      out[p] = { routes: routes.length, calls: calls.length, turns: turns.length };
    }
  }
  return out;
}

const PLACES = ["default", "u:erin", "t:acme/u:erin", "t:acme"];

describe("one partition for every record of a request", () => {
  for (const [place, config] of [
    ["configurable", { configurable: { user_id: "erin" } }],
    ["v1 context", { context: { user_id: "erin" } }],
    ["metadata", { metadata: { user_id: "erin" } }],
  ] as const) {
    it(`ids only in ${place}: route record, calls and turn all in u:erin`, async () => {
      const { ledger, graph, recorder, recorded } = await build();
      const thread_id = `thread-${++threads}`;
      const state = await graph.invoke(
        { messages: [new HumanMessage("Where is order 12345?")] },
        {
          ...config,
          configurable: { thread_id, ...("configurable" in config ? config.configurable : {}) },
          callbacks: [recorder],
        },
      );
      await recorder.flush();
      expect(state.messages.at(-1)?.content).toBe("done");
      expect(await where(ledger, PLACES)).toEqual({ "u:erin": { routes: 1, calls: 1, turns: 1 } });
      const [route] = await ledger.listRoutes("u:erin");
      const [turn] = await ledger.listTurns("u:erin");
      const [call] = await ledger.listCalls("u:erin");
      expect(route.requestId).toBe(turn.requestId);
      expect(call.requestId).toBe(turn.requestId);
      expect(recorded).toEqual([]);
    });
  }

  it("a template given to the recorder and the node, ids only in context, files every record in one partition", async () => {
    const template = "t:{tenant_id}/u:{user_id}";
    const { ledger, graph, recorder, recorded } = await build({ recorderPartition: template, nodePartition: template });
    await graph.invoke(
      { messages: [new HumanMessage("Where is order 777?")] },
      {
        configurable: { thread_id: `thread-${++threads}` },
        context: { tenant_id: "acme", user_id: "erin" },
        callbacks: [recorder],
      },
    );
    await recorder.flush();
    expect(await where(ledger, PLACES)).toEqual({ "t:acme/u:erin": { routes: 1, calls: 1, turns: 1 } });
    expect(recorded).toEqual([]);
  });

  it("warns once per disagreeing pair, with what to change", async () => {
    const { ledger, graph, recorder, recorded } = await build();
    const thread_id = `thread-${++threads}`;
    // The recorder sees only metadata (u:erin); the node sees the tenant in configurable too.
    const config = {
      configurable: { thread_id, tenant_id: "acme" },
      metadata: { user_id: "erin" },
      callbacks: [recorder],
    };
    await graph.invoke({ messages: [new HumanMessage("Where is order 1?")] }, config);
    await graph.invoke({ messages: [new HumanMessage("And order 2?")] }, config);
    await recorder.flush();
    const warnings = recorded.filter((r) => r.kind === "partition_mismatch");
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/two partitions/);
    expect(warnings[0].message).toMatch(/metadata/);
    // Every record goes where the node said: it read the app's configurable, which beats the metadata.
    expect(await where(ledger, PLACES)).toEqual({ "t:acme/u:erin": { routes: 2, calls: 2, turns: 2 } });
  });

  it("a template the run cannot fill, with no node to name the caller, is reported and nothing is guessed", async () => {
    const { ledger, recorder, recorded } = await build();
    const bare = new ToolLessonsCallbackHandler({
      ledger,
      partition: "u:{user_id}",
      failureSink: (f) => recorded.push(f),
    });
    await TOOLS[0].invoke({ q: "1" }, { callbacks: [bare] });
    await bare.flush();
    await recorder.flush();
    expect(recorded.map((r) => r.error?.name)).toEqual(["PartitionUnresolved"]);
    expect(await where(ledger, PLACES)).toEqual({});
  });

  it("ids the node refuses, given only in configurable: the turn runs, nothing is filed under a guessed partition", async () => {
    const { ledger, graph, recorder, recorded, nodeErrors } = await build();
    const thread_id = `thread-${++threads}`;
    for (let turn = 0; turn < 2; turn++) {
      const state = await graph.invoke(
        { messages: [new HumanMessage("Where is order 12345?")] },
        { configurable: { thread_id, user_id: { id: "erin" } }, callbacks: [recorder] },
      );
      expect(state.messages.at(-1)?.content).toBe("done");
    }
    await recorder.flush();
    expect(await where(ledger, PLACES)).toEqual({});
    // Heard once (one sink, once per kind of failure), though both turns were refused.
    expect(nodeErrors.map((e) => (e as Error).name)).toEqual(["InvalidInput"]);
    // Said once, by the recorder, with what to do; the ids themselves are never quoted.
    const said = recorded.map((r) => r.message);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/refused the caller's ids/);
    expect(said[0]).not.toContain("erin");
    // The same thread with good ids afterwards is recorded again, in its own partition.
    await graph.invoke(
      { messages: [new HumanMessage("Where is order 777?")] },
      { configurable: { thread_id, user_id: "erin" }, callbacks: [recorder] },
    );
    await recorder.flush();
    expect(await where(ledger, PLACES)).toEqual({ "u:erin": { routes: 1, calls: 1, turns: 1 } });
  });

  it("an unknown partition routes the default tools, with a warning, never silently", async () => {
    const { ledger, graph, model, recorder, routingWarnings } = await build({ partitions: ["default"] });
    await graph.invoke(
      { messages: [new HumanMessage("Where is order 4?")] },
      { configurable: { thread_id: `thread-${++threads}`, user_id: "nobody" }, callbacks: [recorder] },
    );
    await recorder.flush();
    expect(model.bound[0]).toContain("lookup_order");
    expect(model.bound[0]).toHaveLength(2);
    expect(routingWarnings).toMatchObject([
      { stage: "serve", kind: "routing_fallback", context: { partition: "u:nobody", routedFrom: "default" } },
    ]);
    const [route] = await ledger.listRoutes("u:nobody");
    expect(route.allSent).toBe(false);
    expect((await where(ledger, PLACES.concat("u:nobody")))["u:nobody"]).toEqual({ routes: 1, calls: 1, turns: 1 });
  });
});

describe("routing degrades, never breaks", () => {
  it("embeddings throwing: the turn succeeds with every tool and its route record says routing was skipped", async () => {
    const embeddings = new FlakyEmbeddings();
    const { ledger, graph, model, recorder, routingWarnings, nodeErrors } = await build({
      embeddings,
      partitions: ["u:erin"],
    });
    const config = (n: number) => ({
      configurable: { thread_id: `thread-${++threads}`, user_id: "erin" },
      callbacks: [recorder],
      metadata: { n },
    });
    await graph.invoke({ messages: [new HumanMessage("reset my password")] }, config(1));
    expect(model.bound[0]).toHaveLength(2);
    embeddings.failing = true;
    const state = await graph.invoke({ messages: [new HumanMessage("Where is order 9?")] }, config(2));
    await graph.invoke({ messages: [new HumanMessage("Where is order 10?")] }, config(3));
    await recorder.flush();
    expect(state.messages.at(-1)?.content).toBe("done");
    expect(model.bound[1]).toEqual(TOOLS.map((t) => t.name));
    expect(routingWarnings.map((w) => [w.kind, w.context])).toEqual([
      ["routing_skipped", { partition: "u:erin", reason: "embeddings_failed", errorName: "Error" }],
    ]);
    expect(routingWarnings[0].message).not.toContain("embeddings service");
    // The node's sink hears the skipped routing once too, with no request text.
    expect(nodeErrors).toHaveLength(1);
    expect(String(nodeErrors[0])).toMatch(/routing failed/);
    const routes = await ledger.listRoutes("u:erin");
    expect(routes.map((r) => r.skipped)).toEqual([undefined, "embeddings_failed", "embeddings_failed"]);
    expect(routes[1]).toMatchObject({ allSent: true, offered: [] });
    // The error text, not "503": a random id or timestamp of a record may hold those digits.
    expect(JSON.stringify(routes)).not.toContain("embeddings service");
    expect(await ledger.listCalls("u:erin")).toHaveLength(2);
  });
});

describe("the ledger failing during a turn", () => {
  it("the store throwing: the turn succeeds with every tool, and each failure is reported, not thrown", async () => {
    const { ledger, graph, model, recorder, recorded, routingWarnings, nodeErrors } = await build({
      partitions: ["u:erin"],
    });
    ledger.store.batch = async () => {
      throw new Error("store down");
    };
    const state = await graph.invoke(
      { messages: [new HumanMessage("Where is order 5?")] },
      { configurable: { thread_id: `thread-${++threads}`, user_id: "erin" }, callbacks: [recorder] },
    );
    await recorder.flush();
    expect(state.messages.at(-1)?.content).toBe("done");
    // The index could not be built from the ledger: routing was skipped, every tool bound.
    expect(model.bound[0]).toEqual(TOOLS.map((t) => t.name));
    expect(routingWarnings.map((w) => w.context?.reason)).toEqual(["embeddings_failed"]);
    expect(nodeErrors.length).toBeGreaterThan(0);
    expect(recorded.some((r) => r.kind === "store_write")).toBe(true);
  });
});

describe("one masking of a request", () => {
  it("the turn and every call of a request hold the same masked text; the route record holds none", async () => {
    const { ledger, graph, recorder } = await build();
    await graph.invoke(
      { messages: [new HumanMessage("Where is order 12345? Mail me at erin@example.com")] },
      { configurable: { thread_id: `thread-${++threads}` }, metadata: { user_id: "erin" }, callbacks: [recorder] },
    );
    await recorder.flush();
    const [turn] = await ledger.listTurns("u:erin");
    const [call] = await ledger.listCalls("u:erin");
    const [route] = await ledger.listRoutes("u:erin");
    expect(turn.request).not.toContain("12345");
    expect(turn.request).not.toContain("erin@example.com");
    expect(call.request).toBe(turn.request);
    expect(route.request).toBeUndefined();
    expect(route.requestId).toBe(turn.requestId);
  });
});
