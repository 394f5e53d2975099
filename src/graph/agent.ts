/**
 * `createToolLessonsAgent`: a ready agent that learns, as one compiled graph: the agent node,
 * which serves the lessons stages in its own step on a new user turn (`withLessons`: no extra
 * graph step) and then calls the model (the routed tools bound, each described by its card; the
 * app's own system prompt, then the lessons block, as one system message) → LangGraph's
 * `ToolNode` → back to the agent, with the recorder wired into every run. With `subgraph: true`
 * the lessons subgraph runs as a node of its own before the agent node.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { type BaseCheckpointSaver, type BaseStore, END, InMemoryStore, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { InvalidInput } from "../errors.js";
import { Ledger } from "../ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../record/handler.js";
import { ledgerOn, unwrapStore } from "../ledger/on-store.js";
import { SHOW_EXAMPLES } from "../prompt/describe.js";
import { DEFAULT_SERVE } from "../serve/options.js";
import { createSearchToolsTool } from "../serve/search-tools.js";
import { withLessonsBlock } from "../serve/system-message.js";
import { ToolIndex } from "../routing/tool-index.js";
import { type LessonsGraphOptions, LessonsRuntime } from "./context.js";
import { bindKeptTools } from "./kept-tools.js";
import { createLessonsGraph } from "./lessons-graph.js";
import { bindRoutedTools } from "./route-node.js";
import { ToolLessonsAnnotation, type ToolLessonsState } from "./state.js";
import { withLessons } from "./with-lessons.js";

/** Options of {@link createToolLessonsAgent}: those of the lessons subgraph, plus the agent's. */
export interface ToolLessonsAgentOptions extends Omit<LessonsGraphOptions, "tools" | "ledger" | "recorder"> {
  /** The agent's chat model (must support tool calling). */
  model: BaseChatModel;
  /**
   * The app's own system prompt: first in the system message, the lessons block after it.
   * @default none: the lessons block alone (no system message on a turn without one)
   */
  systemPrompt?: string | SystemMessage;
  /**
   * Run the three stages as the compiled lessons subgraph before the agent node (each a node of
   * its own in traces and streams) instead of inside the agent node's step.
   * @default false (served in the agent node: no graph step of their own; see docs/benchmarks.md)
   */
  subgraph?: boolean;
  /** The agent's tools. */
  tools: StructuredToolInterface[];
  /**
   * The store the graph is compiled with (the app's tools reach it through `getStore()`); the
   * ledger is written through it.
   * @default a new InMemoryStore for the ledger alone (nothing outlives the process); the graph is
   * then compiled without a store, since a compiled store costs every run LangGraph's batching
   * timer (docs/benchmarks.md)
   */
  store?: BaseStore;
  /**
   * The checkpointer the graph is compiled with (threads remember their messages and the lessons
   * fields).
   * @default none
   */
  checkpointer?: BaseCheckpointSaver;
}

/**
 * A compiled agent graph whose agent node serves the lessons stages (or, with `subgraph`, the
 * lessons subgraph before its agent node), with the recorder wired
 * (`graph.recorder`: call `await graph.recorder.flush()` before the process exits; `await
 * graph.setup(config)` at start-up warms a partition, so its first turn pays no registration or
 * index build). The ledger is
 * `graph.ledger`, over `store`.
 */
export function createToolLessonsAgent(options: ToolLessonsAgentOptions) {
  const { model, tools, store: given, checkpointer, subgraph, systemPrompt, ...rest } = options;
  if (!model.bindTools) {
    throw new InvalidInput(
      `The chat model ${model.getName()} cannot bind tools; use a model that supports tool calling.`,
      {
        context: { model: model.getName() },
      },
    );
  }
  const store = given ?? new InMemoryStore();
  const sink = rest.failureSink;
  // The app's sink hears the ledger's and the recorder's failures too. A ledger of its own is safe to
  // make: what other objects over the store must see of its writes, they read from the store.
  const ledger: Ledger = sink ? new Ledger(unwrapStore(store), { failureSink: sink }) : ledgerOn(store);
  // Its callbacks only buffer (a store that hangs holds no run up); synthesize flushes it within `timeoutMs`.
  const recorder = new ToolLessonsCallbackHandler({ ledger, ...(sink ? { failureSink: sink } : {}) });
  const keeping = rest.cacheKeeping ?? DEFAULT_SERVE.cacheKeeping;
  // Cache-keeping: serving and search_tools route over one index.
  const index = keeping ? (rest.index ?? new ToolIndex({ ledger })) : rest.index;
  const lessonsOptions = { ...rest, ...(index ? { index } : {}), tools, ledger, recorder };
  // One runtime, one turn server: the lessons stages, search_tools and setup() share them.
  const runtime = new LessonsRuntime(lessonsOptions);
  const search = keeping ? createSearchToolsTool(runtime.server, tools) : undefined;
  const agent = async (state: ToolLessonsState, config: RunnableConfig) => {
    const system = withLessonsBlock(systemPrompt, state.lessonsPrompt ?? "");
    const messages = system ? [system, ...state.messages] : state.messages;
    if (!search) {
      // The routed tools, each described by its card (what was learned goes into the tool's own definition).
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards, SHOW_EXAMPLES);
      return { messages: [await bound.invoke(messages, config)] };
    }
    // The thread's kept tools, grown by what search_tools found this turn, each as first sent; search_tools first.
    const { bound, keptTools } = bindKeptTools(model, tools, state, search as unknown as StructuredToolInterface);
    return { messages: [await bound.invoke(messages, config)], ...(keptTools ? { keptTools } : {}) };
  };
  const toolNodeTools = search ? [...tools, search] : tools;
  const compile = { ...(given ? { store: given } : {}), ...(checkpointer ? { checkpointer } : {}) };
  const graph = subgraph
    ? new StateGraph(ToolLessonsAnnotation)
        .addNode("lessons", createLessonsGraph(lessonsOptions, runtime))
        .addNode("agent", agent)
        .addNode("tools", new ToolNode(toolNodeTools))
        .addEdge(START, "lessons")
        .addEdge("lessons", "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile(compile)
        .withConfig({ callbacks: [recorder] })
    : new StateGraph(ToolLessonsAnnotation)
        .addNode("agent", withLessons(agent, lessonsOptions, runtime))
        .addNode("tools", new ToolNode(toolNodeTools))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile(compile)
        .withConfig({ callbacks: [recorder] });
  /**
   * Warm what a caller's first turn would otherwise pay for (see `TurnServer.setup`): the agent's
   * tools registered in the partition `config` names (as a run's config would), its routing index
   * built, its versions read. Call it once at start-up per partition to warm; it throws when the
   * store or index cannot be reached.
   */
  const setup = (config?: RunnableConfig) => runtime.server.setup({ tools, store }, config);
  return Object.assign(graph, { recorder, ledger, setup });
}
