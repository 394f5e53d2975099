/**
 * The usage snippet of README.md, kept here so tsc checks it and the example test runs it. Only
 * the import path differs: the README imports from "tool-lessons".
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import {
  bindRoutedTools,
  createRouteNode,
  LessonManager,
  openLedger,
  registerTools,
  ToolIndex,
  ToolLessonsAnnotation,
  ToolLessonsCallbackHandler,
  ToolRouter,
} from "../src/index.js";

// readme:start
export async function agentThatLearns(model: BaseChatModel, tools: StructuredToolInterface[]) {
  const ledger = await openLedger(); // SQLite at .tool-lessons/ledger.db, or openLedger({ postgresUrl })
  await registerTools(ledger, tools); // one card per tool: the author's text, then what is learned
  const index = new ToolIndex({ ledger });
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode("route", createRouteNode({ router: new ToolRouter({ index, maxTools: 5 }), ledger }))
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

  const recorder = new ToolLessonsCallbackHandler({ ledger, singleTenant: true }); // records every tool call (one caller)
  for (const text of ["Where is order 482913?", "Can you check on order 771204?"]) {
    await graph.invoke({ messages: [{ role: "user", content: text }] }, { callbacks: [recorder] });
  }
  await recorder.flush();

  const manager = new LessonManager({ ledger, index }); // the operator's side (and the CLI's)
  for (const r of (await manager.review()).revisions) await manager.apply(r.id, { approvedBy: "you" });
  await manager.undo("lookup_order", { approvedBy: "you" }); // any change can be taken back
  const history = await manager.history("lookup_order");
  await ledger.close();
  return history;
}
// readme:end
