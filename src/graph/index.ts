/**
 * The graph pieces: the lessons subgraph (classify → learn → inject) and its nodes,
 * `createToolLessonsAgent`, the state they write, the older route node and the binding of the
 * routed tools with their learned descriptions.
 */
export { createToolLessonsAgent, type ToolLessonsAgentOptions } from "./agent.js";
export { createClassifyNode, type TurnView } from "./classify.js";
export { type LessonsGraphInput, type LessonsGraphOptions } from "./context.js";
export { createToolLessons, type RunContext, ToolLessons } from "../app/app.js";
export { createInjectNode } from "./inject.js";
export { bindKeptTools, type KeptToolsState } from "./kept-tools.js";
export { createSearchToolsTool } from "../serve/search-tools.js";
export {
  createLessonsGraph,
  createLessonsNode,
  createLessonsNodes,
  type LessonsNodeState,
  lessonsMessages,
  routedToolsOf,
} from "./lessons-graph.js";
export { bindRoutedTools, createRouteNode, type RouteNodeOptions } from "./route-node.js";
export {
  type LessonSignal,
  type LessonsReport,
  LessonsStateFields,
  ToolLessonsAnnotation,
  type ToolLessonsState,
  ToolLessonsZodState,
} from "./state.js";
export { createLearnNode } from "./learn.js";
export { type AgentNode, withLessons } from "./with-lessons.js";
