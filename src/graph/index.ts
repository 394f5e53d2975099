/**
 * The graph pieces: the node that routes a turn, the state it writes, and the binding of the
 * routed tools with their learned descriptions (where a lesson reaches the prompt).
 */
export {
  bindRoutedTools,
  createRouteNode,
  DEFAULT_ROUTE_NODE,
  type RouteNodeOptions,
  toolsInUse,
} from "./route-node.js";
export { ToolLessonsAnnotation, type ToolLessonsState } from "./state.js";
