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
import { requestIdFor } from "../caller/request.js";
import { createClassifier, createClassifyNode } from "./classify.js";
import { appOf, type LessonsGraphInput } from "./context.js";
import { createInjectNode, injectTurn } from "./inject.js";
import { emptyReport, LessonsStateFields, ToolLessonsAnnotation, type ToolLessonsState } from "./state.js";
import { createLearnNode } from "./learn.js";

/**
 * The three nodes, as plain `(state, config) => update` functions, views over one app (its
 * evidence tally: classify counts the partition's evidence in it; learn reviews what it found due).
 */
export function createLessonsNodes(input: LessonsGraphInput) {
  const app = appOf(input);
  return {
    classify: createClassifyNode(app),
    learn: app.bounded("learn", createLearnNode(app)),
    inject: createInjectNode(app),
  };
}

/**
 * The lessons subgraph, compiled (no checkpointer of its own: it uses the parent's). Its state is
 * {@link ToolLessonsAnnotation}; spread `LessonsStateFields` into a state of your own.
 */
export function createLessonsGraph(input: LessonsGraphInput) {
  const nodes = createLessonsNodes(input);
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
 * The lessons stages as one node before the agent node: one graph step per turn, writing the
 * same state fields as {@link createLessonsGraph} (`withLessons` runs this inside the agent node
 * instead, with no step of its own: what `createToolLessonsAgent` does). It finds the request and
 * resolves the caller once; classifies (code only: the evidence tally, the new turn's edicts, the
 * thread's call count); runs the learn stage only when classify found something; then serves the
 * turn. A quiet turn is classify and serve in this one step, and writes only the fields whose
 * value changed (on a new thread: the routed tools and the turn's id).
 */
export function createLessonsNode(input: LessonsGraphInput) {
  const app = appOf(input);
  const classify = createClassifier(app);
  const learn = app.bounded("learn", createLearnNode(app));
  return async function lessons(state: LessonsNodeState, config?: RunnableConfig): Promise<Partial<LessonsNodeState>> {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const requestId = requestIdFor(threadId, state.messages);
    // Once per user turn: a later model step of the same turn (a pre-model hook) changes nothing.
    if (requestId === undefined || requestId === state.lessonsTurn) return {};
    // Refused ids: serving resolves them again and reports it; nothing is learned for this turn.
    const context = app.tryContext(config);
    const { signals, callsSince } = classify(state, context);
    let report = emptyReport();
    if (signals.length > 0) {
      const learned = await learn({ messages: state.messages, lessonSignals: signals, lessonsReport: report }, config);
      report = learned.lessonsReport ?? report;
    }
    const served = await injectTurn(
      app,
      { messages: state.messages, lessonsReport: report, ...(state.keptTools ? { keptTools: state.keptTools } : {}) },
      config,
      context?.partition,
    );
    return changedFields(state, { lessonSignals: signals, lessonsCalls: callsSince, lessonsReport: report, ...served });
  };
}

/** The fields of `next` whose value differs from the state's (an unchanged field is not written). */
function changedFields(state: LessonsNodeState, next: Partial<LessonsNodeState>): Partial<LessonsNodeState> {
  const update: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(next)) {
    if (!sameValue(value, (state as Record<string, unknown>)[field] ?? defaults[field]?.())) update[field] = value;
  }
  return update as Partial<LessonsNodeState>;
}

/** The lessons fields' defaults, for a state that does not hold them yet. */
const defaults: Readonly<Record<string, (() => unknown) | undefined>> = Object.freeze({
  routedTools: () => [],
  routedCards: () => [],
  keptTools: () => [],
  lessonsPrompt: () => "",
  lessonsTurn: () => "",
  lessonSignals: () => [],
  lessonsCalls: () => 0,
  lessonsReport: emptyReport,
});

/** Deep equality of plain JSON-like values (the lessons fields). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
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
