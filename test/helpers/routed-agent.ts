import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import {
  bindRoutedTools,
  createRouteNode,
  ToolLessonsAnnotation,
  type ToolLessonsState,
} from "../../src/graph/index.js";
import type { ToolRouter } from "../../src/routing/router.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { ToolLessonsCallbackHandler } from "../../src/record/handler.js";

/**
 * The agent the README teaches, as a test builds it around any chat model: route → agent (the
 * routed tools bound, described as their cards say) → LangGraph's own ToolNode → agent.
 */
export function routedAgent(options: {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  router: ToolRouter;
  ledger: Ledger;
}) {
  const { model, tools, router, ledger } = options;
  return new StateGraph(ToolLessonsAnnotation)
    .addNode(
      "route",
      createRouteNode({
        router,
        ledger,
        failureSink: (failure) => console.error("route node:", failure.message, failure.error),
      }),
    )
    .addNode("agent", async (state: ToolLessonsState, config: RunnableConfig) => {
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards);
      return { messages: [await bound.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "route")
    .addEdge("route", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

/** One tool call of a turn, as the thread shows it. */
export interface TurnCall {
  tool: string;
  ok: boolean;
  args: Record<string, unknown>;
}

let threads = 0;

/** Runs one user message in a new thread with the recorder; returns the turn's calls and answer. */
export async function ask(
  graph: ReturnType<typeof routedAgent>,
  recorder: ToolLessonsCallbackHandler,
  request: string,
  metadata: Record<string, unknown> = {},
): Promise<{ calls: TurnCall[]; answer: string; routed: string[] }> {
  const state = await graph.invoke(
    { messages: [new HumanMessage(request)] },
    { configurable: { thread_id: `thread-${++threads}` }, metadata, callbacks: [recorder] },
  );
  await recorder.flush();
  return { ...turnOf(state.messages), routed: state.routedTools };
}

/** The calls and answer after the newest human message. */
export function turnOf(messages: readonly BaseMessage[]): { calls: TurnCall[]; answer: string } {
  let start = messages.length - 1;
  while (start >= 0 && messages[start].getType() !== "human") start -= 1;
  const turn = messages.slice(start + 1);
  const args = new Map<string, Record<string, unknown>>();
  for (const m of turn) if (m instanceof AIMessage) for (const c of m.tool_calls ?? []) args.set(c.id ?? "", c.args);
  const calls = turn
    .filter((m): m is ToolMessage => m instanceof ToolMessage)
    .map((m) => ({ tool: m.name ?? "", ok: m.status !== "error", args: args.get(m.tool_call_id) ?? {} }));
  const last = turn[turn.length - 1];
  return { calls, answer: last instanceof AIMessage ? last.text : "" };
}
