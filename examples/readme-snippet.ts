/**
 * The usage snippet of README.md, kept here so tsc checks it and the example test runs it. Only
 * the import path differs: the README imports from "tool-lessons".
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { bindRoutedTools, createToolLessons, openLedger, ToolLessonsAnnotation } from "../src/index.js";
import { createRouteNode } from "../src/graph/index.js";

// readme:start
export async function agentThatLearns(model: BaseChatModel, tools: StructuredToolInterface[]) {
  const ledger = await openLedger(); // SQLite at .tool-lessons/ledger.db, or openLedger({ postgresUrl })
  // One app per process: the ledger, routing index and router, recorder, manager and one failure sink.
  const app = createToolLessons({ ledger, tools, maxTools: 5, singleTenant: true });
  await app.setup(); // registers one card per tool (the author's text, then what is learned), warms the index
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode("route", createRouteNode({ router: app.router(), ledger }))
    .addNode("agent", async (state, config) => {
      // The route node read the routed tools' cards for this caller: learned lines reach the prompt here.
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards);
      return { messages: [await bound.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "route")
    .addEdge("route", "agent")
    .addEdge("tools", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .compile();

  for (const text of ["Where is order 482913?", "Can you check on order 771204?"]) {
    // app.recorder records every tool call (one caller here: singleTenant).
    await graph.invoke({ messages: [{ role: "user", content: text }] }, { callbacks: [app.recorder] });
  }
  await app.recorder.flush();

  const manager = app.manager(); // the operator's side (and the CLI's), over the same index
  for (const r of (await manager.review()).revisions) await manager.apply(r.id, { approvedBy: "you" });
  await manager.undo("lookup_order", { approvedBy: "you" }); // any change can be taken back
  const history = await manager.history("lookup_order");
  await ledger.close();
  return history;
}
// readme:end
