/**
 * `tool-lessons/middleware`: the langchain v1 `createAgent` middleware. Its own entry point, so
 * the root `tool-lessons` never loads `langchain` (an optional peer).
 */
export { toolLessonsMiddleware, type ToolLessonsMiddlewareOptions } from "./middleware.js";
export { type DescribedToolDefinition, type RequestTool } from "./tools-view.js";
