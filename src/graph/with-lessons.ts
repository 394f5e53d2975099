/**
 * `withLessons(agentNode, options)`: the lessons stages served inside the agent's own node, so a
 * quiet turn adds no graph step at all (a LangGraph step costs about as much as the lessons code
 * itself with an instant model, see docs/benchmarks.md). On a new user turn the wrapper runs what
 * {@link createLessonsNode} runs (classify, learn only on a signal, serve), then calls the agent
 * node with the state those fields give, and returns the lessons fields that changed together
 * with the agent's own update. A later model step of the same turn goes straight to the agent.
 *
 * ```ts
 * const agent = withLessons(async (state, config) => ({
 *   messages: [await bindRoutedTools(model, tools, state.routedTools, state.routedCards).invoke(lessonsMessages(state), config)],
 * }), { tools, ledger });
 * builder.addNode("agent", agent).addEdge(START, "agent");
 * ```
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { LessonsGraphInput } from "./context.js";
import { createLessonsNode, type LessonsNodeState } from "./lessons-graph.js";

/** An agent node: the state in, a partial update out (a plain object). */
export type AgentNode<S, U extends object> = (state: S, config: RunnableConfig) => U | Promise<U>;

/**
 * Wrap an agent node so the lessons stages run in its step (see the module comment). The state
 * must hold `messages` and the lessons fields (`ToolLessonsAnnotation`, or `LessonsStateFields`
 * spread into your own). The agent's update wins over a lessons field of the same name.
 */
export function withLessons<S extends LessonsNodeState, U extends object>(
  node: AgentNode<S, U>,
  input: LessonsGraphInput,
): (state: S, config: RunnableConfig) => Promise<U & Partial<LessonsNodeState>> {
  const lessons = createLessonsNode(input);
  return async function agentWithLessons(state: S, config: RunnableConfig) {
    const update = await lessons(state, config);
    if (Object.keys(update).length === 0) return node(state, config);
    const own = await node({ ...state, ...update }, config);
    return { ...update, ...own };
  };
}
