/**
 * Serving a turn: one function at the door ({@link TurnServer.serve}) that the lessons graph's
 * inject node, the route node and the `createAgent` middleware adapt.
 */
export { type StepResult } from "./budget.js";
export { type ServeOptions } from "./options.js";
export { TurnServer } from "./turn-server.js";
export type { ServeConfig, ServedTurn, ServeInput, ServeStatus } from "./types.js";
export { createSearchToolsTool } from "./search-tools.js";
export { type KeptTool, SEARCH_TOOLS_NAME, type SearchToolsArtifact } from "./tool-set.js";
