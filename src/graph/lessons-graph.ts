/**
 * The lessons subgraph: classify → learn → inject, compiled as one graph to put before the agent
 * node of any LangGraph agent. A quiet turn goes classify → inject.
 *
 * ```ts
 * const lessons = createLessonsGraph({ tools, ledger });
 * builder.addNode("lessons", lessons).addEdge(START, "lessons").addEdge("lessons", "agent");
 * // agent node: model.bindTools(routedToolsOf(tools, state.routedTools)).invoke(lessonsMessages(state), config)
 * ```
 */
import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, START, StateGraph } from "@langchain/langgraph";
import { EvidenceTally } from "../learn/review/tally.js";
import { createClassifyNode } from "./classify.js";
import { type LessonsGraphOptions, LessonsRuntime } from "./context.js";
import { createInjectNode } from "./inject.js";
import { LessonsStateFields, ToolLessonsAnnotation, type ToolLessonsState } from "./state.js";
import { createLearnNode } from "./learn.js";

/**
 * The three nodes, as plain `(state, config) => update` functions over one shared runtime and one
 * evidence tally (classify counts the partition's evidence in it; learn reviews what it found due).
 */
export function createLessonsNodes(options: LessonsGraphOptions) {
  const runtime = new LessonsRuntime(options);
  const tally = new EvidenceTally({ tools: options.tools.map((t) => t.name) });
  return {
    classify: createClassifyNode(runtime, tally),
    learn: runtime.bounded("learn", createLearnNode(runtime, tally)),
    inject: createInjectNode(runtime),
  };
}

/**
 * The lessons subgraph, compiled (no checkpointer of its own: it uses the parent's). Its state is
 * {@link ToolLessonsAnnotation}; spread `LessonsStateFields` into a state of your own.
 */
export function createLessonsGraph(options: LessonsGraphOptions) {
  const nodes = createLessonsNodes(options);
  return new StateGraph(ToolLessonsAnnotation)
    .addNode("classify", nodes.classify)
    .addNode("learn", nodes.learn)
    .addNode("inject", nodes.inject)
    .addEdge(START, "classify")
    .addConditionalEdges(
      "classify",
      (state: ToolLessonsState) => (state.lessonSignals.length > 0 ? "learn" : "inject"),
      ["learn", "inject"],
    )
    .addEdge("learn", "inject")
    .addEdge("inject", END)
    .compile({ name: "tool_lessons" });
}

/** The state one lessons node reads: the messages and the lessons fields. */
export type LessonsNodeState = { messages: ToolLessonsState["messages"] } & Partial<
  Pick<ToolLessonsState, keyof typeof LessonsStateFields>
>;

/**
 * The three stages as one node (classify, then learn when classify found something, then
 * inject), writing the same state fields as {@link createLessonsGraph}: one graph step per
 * turn instead of a subgraph's own run, for when the stages need not show as nodes of their own in
 * traces and streams (see docs/benchmarks.md for what each costs).
 */
export function createLessonsNode(options: LessonsGraphOptions) {
  const nodes = createLessonsNodes(options);
  const fields = Object.keys(LessonsStateFields) as (keyof typeof LessonsStateFields)[];
  return async function lessons(state: LessonsNodeState, config?: RunnableConfig) {
    let current: LessonsNodeState = { ...state };
    const merge = (update: object) => {
      current = { ...current, ...update };
    };
    merge(await nodes.classify(current, config));
    if ((current.lessonSignals ?? []).length > 0) {
      merge(await nodes.learn(current, config));
    }
    merge(await nodes.inject(current, config));
    const update: Partial<LessonsNodeState> = {};
    for (const field of fields) {
      if (current[field] !== state[field]) (update as Record<string, unknown>)[field] = current[field];
    }
    return update;
  };
}

/**
 * The messages for the model this turn: the lessons block as a system message first (when there
 * is one), then the thread. The block is not written into `messages`, so checkpoints do not grow.
 */
export function lessonsMessages(state: { messages: BaseMessage[]; lessonsPrompt?: string }): BaseMessage[] {
  const prompt = state.lessonsPrompt ?? "";
  return prompt === "" ? state.messages : [new SystemMessage(prompt), ...state.messages];
}

/** The tools to bind this turn: the routed ones, in the order given; every tool when none is routed. */
export function routedToolsOf<T extends { name: string }>(tools: readonly T[], routedTools: readonly string[]): T[] {
  if (routedTools.length === 0) return [...tools];
  const wanted = new Set(routedTools);
  return tools.filter((t) => wanted.has(t.name));
}
