/**
 * Serving a turn: one function at the door ({@link TurnServer.serve}) that the lessons graph's
 * inject node, the route node and the `createAgent` middleware adapt.
 */
export { TurnBudget, type StepResult } from "./budget.js";
export { ServeBackends } from "./backends.js";
export { DEFAULT_SERVE, type ServeOptions } from "./options.js";
export { SERVE_FAILURES, TurnServer } from "./turn-server.js";
export type { ServeConfig, ServedTurn, ServeInput, ServeStatus } from "./types.js";
export { withLessonsBlock } from "./system-message.js";
export { createSearchToolsTool, SEARCH_TOOLS_DESCRIPTION, SearchToolsInputSchema } from "./search-tools.js";
export {
  describerOf,
  foundBySearch,
  growKept,
  keptBinding,
  keptForCall,
  type KeptTool,
  SEARCH_TOOLS_NAME,
  type SearchToolsArtifact,
} from "./tool-set.js";
