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
import { appForView, createToolLessons, type ToolLessons } from "../app/app.js";
import type { ToolLessonsOptions } from "../app/options.js";
import { InvalidInput } from "../errors.js";
import { SHOW_EXAMPLES } from "../prompt/describe.js";
import { DEFAULT_SERVE } from "../serve/options.js";
import { withLessonsBlock } from "../serve/system-message.js";
import { bindKeptTools } from "./kept-tools.js";
import { createLessonsGraph } from "./lessons-graph.js";
import { bindRoutedTools } from "./route-node.js";
import { ToolLessonsAnnotation, type ToolLessonsState } from "./state.js";
import { withLessons } from "./with-lessons.js";

/** Options of {@link createToolLessonsAgent}: those of the lessons subgraph, plus the agent's. */
export interface ToolLessonsAgentOptions extends Omit<ToolLessonsOptions, "tools" | "ledger" | "recorder"> {
  /**
   * The app this agent is a view over (`createToolLessons({ store, tools, ... })`), when several
   * views share one (a middleware, a manager, `search_tools`). With it, pass only the agent's own
   * options here (`model`, `tools`, `systemPrompt`, `subgraph`, `checkpointer`): the app's are the app's.
   * @default one made from these options (`graph.app`)
   */
  app?: ToolLessons;
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
  const { model, tools, checkpointer, subgraph, systemPrompt, app: given, ...rest } = options;
  if (!model?.bindTools) {
    throw new InvalidInput(
      `The chat model ${model?.getName?.() ?? "given"} cannot bind tools; use a model that supports tool calling.`,
      { context: { model: model?.getName?.() ?? typeof model } },
    );
  }
  const app = given
    ? agentApp(given, tools, rest)
    : createToolLessons({ ...rest, tools, store: rest.store ?? new InMemoryStore() });
  // The graph is compiled with the user's store only: a compiled store costs every run LangGraph's batching timer.
  const store = given ? app.options.store : rest.store;
  const recorder = app.recorder;
  // Cache-keeping: search_tools serves through the app's turn server, so it routes over the same index.
  const search = (app.options.cacheKeeping ?? DEFAULT_SERVE.cacheKeeping) ? app.searchTools(tools) : undefined;
  // Provider-deferred with ChatAnthropic or ChatOpenAI on the Responses API (src/serve/provider-mode.ts), else append.
  const deferredLoading = app.options.deferredLoading ?? DEFAULT_SERVE.deferredLoading;
  const agent = async (state: ToolLessonsState, config: RunnableConfig) => {
    const system = withLessonsBlock(systemPrompt, state.lessonsPrompt ?? "");
    const messages = system ? [system, ...state.messages] : state.messages;
    if (!search) {
      // The routed tools, each described by its card (what was learned goes into the tool's own definition).
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards, SHOW_EXAMPLES);
      return { messages: [await bound.invoke(messages, config)] };
    }
    // The thread's kept tools, grown by what search_tools found this turn, each as first sent; search_tools first.
    const { bound, keptTools } = bindKeptTools(model, tools, state, search, deferredLoading);
    return { messages: [await bound.invoke(messages, config)], ...(keptTools ? { keptTools } : {}) };
  };
  const toolNodeTools = search ? [...tools, search] : tools;
  const compile = { ...(store ? { store } : {}), ...(checkpointer ? { checkpointer } : {}) };
  const graph = subgraph
    ? new StateGraph(ToolLessonsAnnotation)
        .addNode("lessons", createLessonsGraph({ app }))
        .addNode("agent", agent)
        .addNode("tools", new ToolNode(toolNodeTools))
        .addEdge(START, "lessons")
        .addEdge("lessons", "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile(compile)
        .withConfig({ callbacks: [recorder] })
    : new StateGraph(ToolLessonsAnnotation)
        .addNode("agent", withLessons(agent, { app }))
        .addNode("tools", new ToolNode(toolNodeTools))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile(compile)
        .withConfig({ callbacks: [recorder] });
  /**
   * Warm what a caller's first turn would otherwise pay for (see `ToolLessons.setup`): the agent's
   * tools registered in the partition `config` names (as a run's config would), its routing index
   * built, its versions read. Call it once at start-up per partition to warm; it throws when the
   * store or index cannot be reached.
   */
  const setup = (config?: RunnableConfig) => app.setup(config, tools);
  return Object.assign(graph, { app, recorder, ledger: app.ledger, setup });
}

/**
 * The app given to the agent, checked against what the agent was given: its options are the
 * app's alone, and its tools are the agent's.
 * @throws InvalidInput when app options are given beside `app`, or the app was made with other tools
 */
function agentApp(app: ToolLessons, tools: readonly StructuredToolInterface[], rest: ToolLessonsOptions): ToolLessons {
  appForView("createToolLessonsAgent", app, rest);
  const names = (list: readonly { name: string }[]) =>
    list
      .map((t) => t.name)
      .sort()
      .join("\u0000");
  if (names(app.tools) !== names(tools)) {
    throw new InvalidInput(
      "The app was made with other tools than the agent's: createToolLessons({ tools, ... }) with the agent's tools.",
    );
  }
  return app;
}
