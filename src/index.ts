/**
 * tool-lessons: tools that get better with use.
 *
 * The root holds what the README and docs/getting-started.md teach, as named exports only: the
 * app object (`createToolLessons`) and its views (the ready agent, the lessons subgraph for a
 * graph of your own), the recorder and the routed-tools binding for wiring by hand, the ledger,
 * the index, the manager, the error base with its guard and
 * the errors most callers catch, with the types of those APIs' options and results. Everything
 * else is in an entry point named for what it holds, each a small named barrel:
 *
 * - `tool-lessons/graph`: every graph piece (the four lessons nodes, the state in its three
 *   forms, the route node).
 * - `tool-lessons/record`: the recorder, error classes, the partition resolver, thread callers.
 * - `tool-lessons/ledger`: the ledger, its rows, cards from tools, compare-and-set for stores.
 * - `tool-lessons/routing`: the index, the router, embeddings, the in-memory store, usage flags.
 * - `tool-lessons/learn`: registration, `LessonManager`, the proposers and their shapes.
 * - `tool-lessons/rules`: tool-scoped rules: capture, aliases, observations, recall.
 * - `tool-lessons/memory`: tool memory: evaluators, synthesizers, statistics.
 * - `tool-lessons/prompt`: what the model sees: descriptions, the rules, memory and lessons blocks.
 * - `tool-lessons/schema`: the zod schemas of the ledger's rows and of the settings, the defaults.
 * - `tool-lessons/evaluate`: `simulate`, the ranking metrics, selection accuracy.
 * - `tool-lessons/privacy`: the gate every untrusted text passes, and its detectors.
 * - `tool-lessons/middleware`: `toolLessonsMiddleware` for langchain v1 `createAgent`.
 * - `tool-lessons/sqlite`, `tool-lessons/postgres`, `tool-lessons/chroma`: the backends.
 * Backends with native or optional dependencies are kept out of this barrel so that importing
 * the package never loads them.
 */

// ---------------------------------------------------------------- errors a caller can catch
export {
  InvalidInput,
  isToolLessonsError,
  RevisionConflict,
  StoreUnavailable,
  TimeBoundExceeded,
  ToolLessonsError,
  type ToolLessonsErrorOptions,
  VetRefusal,
} from "./errors.js";
export type { FailureSink, FailureStage, ToolLessonsFailure } from "./failure.js";
export type { Settings, SettingsInput } from "./settings.js";

// ---------------------------------------------------------------- the app object: one per process, the views over it
export { createToolLessons, ToolLessons } from "./app/app.js";
export { type ToolLessonsOptions } from "./app/options.js";

// ---------------------------------------------------------------- the ready agent and the lessons subgraph (graph)
export { createToolLessonsAgent, type ToolLessonsAgentOptions } from "./graph/agent.js";
export { createLessonsGraph, lessonsMessages } from "./graph/lessons-graph.js";
export { type LessonsGraphOptions } from "./graph/context.js";

// ---------------------------------------------------------------- by hand: binding the routed tools, and the state
export { bindRoutedTools } from "./graph/route-node.js";
export { type LessonsReport, ToolLessonsAnnotation, type ToolLessonsState } from "./graph/state.js";

// ---------------------------------------------------------------- record (where a tool call is recorded)
export { ToolLessonsCallbackHandler } from "./record/handler.js";
export {
  type FlushOptions,
  type FlushResult,
  type RecordingStats,
  type ToolLessonsCallbackHandlerOptions,
} from "./record/options.js";
export type { Partition, PartitionContext, PartitionResolver } from "./caller/partition.js";

// ---------------------------------------------------------------- ledger (the durable truth) and its rows
export { Ledger, type LedgerOptions, type ListOptions, type RuleInput } from "./ledger/ledger.js";
export { openLedger, type OpenLedgerOptions } from "./ledger/open.js";
export type {
  CallRecord,
  ErrorClass,
  Evidence,
  Example,
  Learned,
  Revision,
  RevisionStatus,
  RouteRecord,
  Rule,
  RulePriority,
  ToolCard,
  TurnRecord,
} from "./ledger/schema.js";

// ---------------------------------------------------------------- routing
export { ToolIndex, type ToolIndexOptions } from "./routing/tool-index.js";
export type { RoutedTools, RouteOptions } from "./routing/router.js";

// ---------------------------------------------------------------- learn (the operator's side)
export { registerTools, type RegisterResult, type RegisterToolsOptions } from "./learn/register.js";
export { LessonManager, type LessonManagerOptions, type Review, type ReviewOptions } from "./learn/manager.js";
