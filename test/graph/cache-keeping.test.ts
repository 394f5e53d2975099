/**
 * Cache-keeping mode in the graph path (`createToolLessonsAgent({ cacheKeeping: true })`, a real
 * `ToolNode`): the tools bound for a thread only grow, in a stable order, each as first described,
 * over many turns whose routed sets differ; `search_tools` adds what it finds for the next call.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { END, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { bindKeptTools } from "../../src/graph/kept-tools.js";
import { createLessonsGraph, lessonsMessages } from "../../src/graph/lessons-graph.js";
import { createRouteNode } from "../../src/graph/route-node.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { createSearchToolsTool } from "../../src/serve/search-tools.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";
import { type CallView, DESK_THREAD, deskScript, isPrefix, SeekingModel } from "../../fixtures/seeking-model.js";
import { EMAIL_ASK, expectNarrowed, expectOnlyGrew, expectSearchAdded } from "../helpers/cache-keeping.js";

function deskGraph(cacheKeeping: boolean, extra: typeof DESK_THREAD = []) {
  const views: CallView[] = [];
  const failures: string[] = [];
  const store = new InMemoryStore();
  const agent = createToolLessonsAgent({
    model: new SeekingModel(deskScript(extra), views),
    tools: supportDeskTools(),
    store,
    checkpointer: new MemorySaver(),
    maxTools: 1,
    cacheKeeping,
    failureSink: (f) => failures.push(f.kind),
  });
  return { agent, views, failures };
}

const config = (thread: string) => ({ configurable: { thread_id: thread, user_id: "ann" } });

describe("createToolLessonsAgent with cacheKeeping", () => {
  it("never loses or reorders a bound tool across turns whose routed sets differ", async () => {
    const { agent, views, failures } = deskGraph(true);
    for (const { request } of DESK_THREAD) {
      await agent.invoke({ messages: [new HumanMessage(request)] }, config("keep-1"));
    }
    await agent.recorder.flush();
    expect(failures).toEqual([]);
    const last = expectOnlyGrew(await agent.ledger.listRoutes("u:ann"), views);
    // The thread's state holds the same set, in the same order (a checkpointer keeps it).
    const state = await agent.getState(config("keep-1"));
    expect(state.values.keptTools.map((t: { name: string }) => t.name)).toEqual(last.slice(1));
  });

  it("narrows instead without it: the same thread's tool list changes from call to call", async () => {
    const { agent, views } = deskGraph(false);
    for (const { request } of DESK_THREAD) {
      await agent.invoke({ messages: [new HumanMessage(request)] }, config("narrow-1"));
    }
    expectNarrowed(views);
  });

  it("keeps a tool's definition as first sent while a lesson lands; a new thread gets the new one", async () => {
    const { agent, views } = deskGraph(true);
    await agent.invoke({ messages: [new HumanMessage(DESK_THREAD[0].request)] }, config("frozen-1"));
    const first = views[0].tools.find((t) => t.name === "lookup_order")!;
    expect(first.description).toBe("Look up an order: its status, items and total.");
    const card = (await agent.ledger.getCard("u:ann", "lookup_order"))!;
    await agent.ledger.putCard({
      ...card,
      learned: { ...card.learned, notes: [{ text: "Order ids look like ORD-######.", revisionId: "rev-test" }] },
    });
    views.length = 0;
    await agent.invoke({ messages: [new HumanMessage(DESK_THREAD[5].request)] }, config("frozen-1"));
    for (const view of views) expect(view.tools.find((t) => t.name === "lookup_order")).toEqual(first);
    views.length = 0;
    await agent.invoke({ messages: [new HumanMessage(DESK_THREAD[5].request)] }, config("frozen-2"));
    expect(views[0].tools.find((t) => t.name === "lookup_order")!.description).toContain(
      "Learned from use:\n- Order ids look like ORD-######.",
    );
  });

  it("adds the tools search_tools finds to the thread's set, for the next model call", async () => {
    const { agent, views } = deskGraph(true, [EMAIL_ASK]);
    await agent.invoke({ messages: [new HumanMessage(DESK_THREAD[0].request)] }, config("search-1"));
    views.length = 0;
    const state = await agent.invoke({ messages: [new HumanMessage(EMAIL_ASK.request)] }, config("search-1"));
    const ran = expectSearchAdded(views, state.messages).map((m) => [
      m.name,
      (m as { status?: string }).status ?? "success",
    ]);
    expect(ran).toEqual([
      [SEARCH_TOOLS_NAME, "success"],
      ["send_email", "success"],
    ]);
    const answer = String(state.messages.find((m) => m.name === SEARCH_TOOLS_NAME)!.content);
    expect(answer).toContain("- send_email: send email; takes to, subject, body");
    // The answer names tools; it never echoes the query.
    expect(answer).not.toContain(EMAIL_ASK.query);
    expect(state.keptTools.map((t) => t.name)).toContain("send_email");
  });

  it.each(["lessons", "route"] as const)(
    "works the same in a graph of one's own (the %s node, bindKeptTools, a real ToolNode)",
    async (front) => {
      const views: CallView[] = [];
      const model = new SeekingModel(deskScript([EMAIL_ASK]), views);
      const tools = supportDeskTools();
      const ledger = new Ledger(new InMemoryStore());
      const index = new ToolIndex({ ledger });
      const search = createSearchToolsTool({ ledger, index }, tools);
      // The route node registers nothing: the tools are registered for the caller beforehand.
      if (front === "route") await registerTools(ledger, tools, { partition: "u:ann" });
      const graph = new StateGraph(ToolLessonsAnnotation)
        .addNode(
          "front",
          front === "lessons"
            ? createLessonsGraph({ tools, ledger, index, maxTools: 1, cacheKeeping: true })
            : createRouteNode({ router: new ToolRouter({ index, maxTools: 1 }), ledger, cacheKeeping: true }),
        )
        .addNode("agent", async (state, config) => {
          const { bound, keptTools } = bindKeptTools(model, tools, state, search);
          return {
            messages: [await bound.invoke(lessonsMessages(state), config)],
            ...(keptTools ? { keptTools } : {}),
          };
        })
        .addNode("tools", new ToolNode([...tools, search]))
        .addEdge(START, "front")
        .addEdge("front", "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile({ checkpointer: new MemorySaver() });
      for (const { request } of [...DESK_THREAD.slice(0, 4), EMAIL_ASK]) {
        await graph.invoke({ messages: [new HumanMessage(request)] }, config(`own-${front}`));
      }
      for (let i = 1; i < views.length; i++) {
        expect(isPrefix(views[i - 1].tools, views[i].tools), `call ${i}`).toBe(true);
      }
      const state = await graph.getState(config(`own-${front}`));
      const kept = state.values.keptTools.map((t: { name: string }) => t.name);
      const used = DESK_THREAD.slice(0, 4).map((t) => t.tool);
      expect(kept.slice(0, 4)).toEqual(used);
      expect(kept).toContain("send_email");
      // The last turn's routed tools: the thread's kept ones first, in order, then routing's one.
      expect(state.values.routedTools.slice(0, 4)).toEqual(used);
      const last = state.values.messages.at(-2);
      expect([last.name, last.status ?? "success"]).toEqual(["send_email", "success"]);
    },
  );
});
