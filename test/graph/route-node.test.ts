import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { END, InMemoryStore, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as FakeModels from "@langchain/core/utils/testing";
import { InvalidInput } from "../../src/errors.js";
import { createRouteNode, bindRoutedTools, toolsInUse } from "../../src/graph/route-node.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { planScript, ScriptedChatModel } from "../helpers/record-agent.js";

/** A scripted model that remembers which tools each turn bound. */
class CapturingModel extends ScriptedChatModel {
  bound: string[][] = [];
  described: Record<string, string>[] = [];
  override bindTools(tools: unknown[] = []): this {
    this.bound.push(tools.map((t) => (t as { name: string }).name));
    this.described.push(
      Object.fromEntries(tools.map((t) => [(t as { name: string }).name, (t as { description: string }).description])),
    );
    return this;
  }
}

const make = (name: string, description: string) =>
  tool(async () => `${name} ok`, { name, description, schema: z.object({ q: z.string() }) });

const TOOLS: StructuredToolInterface[] = [
  make("reset_password", "Send a password reset link to an account's email address."),
  make("track_shipment", "Track a parcel with the carrier's tracking number."),
  make("refund_order", "Refund an order to the original payment method."),
  make("search_public_docs", "Search the published product documentation."),
  make("send_email", "Send an email to a customer."),
];

async function build(ledger = new Ledger(new InMemoryStore()), onError?: (error: unknown) => void) {
  for (const partition of ["u:ann", "u:bob", "default"]) await registerTools(ledger, TOOLS, { partition });
  const index = new ToolIndex({ ledger });
  const router = new ToolRouter({ index, maxTools: 2 });
  const model = new CapturingModel(
    planScript((step, messages) =>
      step === 0 && /password/.test(String(messages.at(-1)?.content))
        ? [{ name: "reset_password", args: { q: "x" } }]
        : undefined,
    ),
  );
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode(
      "route",
      createRouteNode({
        router,
        ledger,
        ...(onError ? { failureSink: (failure) => onError(failure.error ?? failure.message) } : {}),
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
    .compile();
  return { ledger, model, graph };
}

describe("route node", () => {
  it("binds only the routed tools and records what routing offered, joined to the run's turn", async () => {
    const { ledger, model, graph } = await build();
    const handler = new ToolLessonsCallbackHandler({ ledger });
    await graph.invoke(
      { messages: [new HumanMessage("I forgot my password, please reset it")] },
      { configurable: { thread_id: "t1", user_id: "ann" }, metadata: { user_id: "ann" }, callbacks: [handler] },
    );
    await handler.flush();
    expect(model.bound[0]).toHaveLength(2);
    expect(model.bound[0][0]).toBe("reset_password");
    const routes = await ledger.listRoutes("u:ann");
    expect(routes).toHaveLength(1);
    expect(routes[0].offered[0]).toMatchObject({ tool: "reset_password", rank: 1 });
    expect(routes[0].allSent).toBe(false);
    const turns = await ledger.listTurns("u:ann");
    expect(turns.map((t) => t.requestId)).toContain(routes[0].requestId);
    expect(await ledger.listRoutes("u:bob")).toHaveLength(0);
  });

  it("keeps tools the thread already used visible on later turns", async () => {
    const { model, graph } = await build();
    const config = { configurable: { thread_id: "t2" }, metadata: {} };
    const first = await graph.invoke({ messages: [new HumanMessage("reset my password")] }, config);
    const messages: BaseMessage[] = [
      ...first.messages,
      new HumanMessage("and where is my parcel, tracking number please"),
    ];
    expect(toolsInUse(messages)).toEqual(["reset_password"]);
    await graph.invoke({ messages }, config);
    const last = model.bound.at(-1)!;
    expect(last).toContain("track_shipment");
    expect(last).toContain("reset_password");
  });

  it("with cacheKeeping, puts the thread's kept tools first, in their kept order, then what routing adds", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "u:ann" });
    const router = new ToolRouter({ index: new ToolIndex({ ledger }), maxTools: 1 });
    const state = {
      messages: [new HumanMessage("I forgot my password, send me a reset link.")],
      // Kept from earlier turns though never called: only the kept set holds them.
      keptTools: [
        { name: "send_email", description: "Send an email to a customer." },
        { name: "search_public_docs", description: "Search the published product documentation." },
      ],
    };
    const config = { configurable: { thread_id: "k-1", user_id: "ann" } };
    const keeping = await createRouteNode({ router, ledger, cacheKeeping: true })(state, config);
    expect(keeping.routedTools).toEqual(["send_email", "search_public_docs", "reset_password"]);
    const narrowing = await createRouteNode({ router, ledger })(state, config);
    expect(narrowing.routedTools).toEqual(["reset_password"]);
  });

  it("carries the routed tools' cards of the caller's partition: a lesson of one caller reaches only that caller's prompt", async () => {
    const { ledger, model, graph } = await build();
    const card = (await ledger.getCard("u:ann", "reset_password"))!;
    const note = "Reset links expire after # hours; send a new one rather than reusing an old link.";
    await ledger.putCard({ ...card, learned: { ...card.learned, notes: [{ text: note, revisionId: "r1" }] } });

    const ask = (user: string) =>
      graph.invoke(
        { messages: [new HumanMessage("I forgot my password, please reset it")] },
        { configurable: { thread_id: `t-${user}` }, metadata: { user_id: user } },
      );
    await ask("ann");
    expect(model.described.at(-1)!.reset_password).toContain(`Learned from use:\n- ${note}`);
    // Both model steps of the turn (the tool call, then the answer) saw the same description.
    expect(model.described).toHaveLength(2);
    expect(model.described[0]).toEqual(model.described[1]);
    await ask("bob");
    expect(model.described.at(-1)!.reset_password).toBe(TOOLS[0].description);
  });

  it("reports a failure to read the cards and runs on with the authors' descriptions", async () => {
    const errors: unknown[] = [];
    const ledger = new Ledger(new InMemoryStore());
    const { model, graph } = await build(ledger, (error) => errors.push(error));
    // A first turn builds the routing index; then the card store goes down.
    await graph.invoke({ messages: [new HumanMessage("where is my parcel")] }, { configurable: { thread_id: "t0" } });
    model.described = [];
    ledger.getCards = async () => {
      throw new Error("store down");
    };
    const result = await graph.invoke(
      { messages: [new HumanMessage("I forgot my password, please reset it")] },
      { configurable: { thread_id: "t3" } },
    );
    expect(result.messages.at(-1)?.content).toBeTruthy();
    expect(errors.map(String)).toContain("Error: store down");
    expect(model.described[0].reset_password).toBe(TOOLS[0].description);
  });
});

describe("bindRoutedTools", () => {
  it("refuses a model that cannot bind tools with InvalidInput naming it", () => {
    const { FakeListChatModel } = FakeModels;
    const model = new FakeListChatModel({ responses: ["hi"] });
    Object.defineProperty(model, "bindTools", { value: undefined });
    expect(() => bindRoutedTools(model, TOOLS, [])).toThrow(InvalidInput);
    expect(() => bindRoutedTools(model, TOOLS, [])).toThrow(/cannot bind tools/);
  });
});

describe("route node and partitions", () => {
  it("a caller whose ids are refused gets every tool, nothing recorded, and the run goes on", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const index = new ToolIndex({ ledger });
    await registerTools(ledger, TOOLS);
    const errors: unknown[] = [];
    const node = createRouteNode({
      router: new ToolRouter({ index, maxTools: 1 }),
      ledger,
      failureSink: (failure) => errors.push(failure.error),
    });
    const update = await node(
      { messages: [new HumanMessage("where is my order")] },
      { configurable: { thread_id: "t" }, metadata: { user_id: { nested: "Margaret" } } },
    );
    expect(update).toEqual({ routedTools: [], routedCards: [] });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(InvalidInput);
    expect(String(errors[0])).not.toContain("Margaret");
    expect(await ledger.listRoutes("default")).toEqual([]);
  });
});
