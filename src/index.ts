/**
 * tool-lessons: tools that get better with use.
 *
 * The public API, as named exports only, one block per stage of the data's way through the
 * package: record → ledger → index → learn → graph, plus cards, evaluation, settings and errors.
 *
 * Backends with native or optional dependencies are kept out of this barrel so that importing
 * the package never loads them:
 * - `tool-lessons/sqlite`: `SqliteStore`, the embedded ledger store. `openLedger()` loads it on
 *   demand, so most users never import it directly.
 * - `tool-lessons/postgres`: `openPostgresStore`, for a ledger shared by many processes.
 * - `tool-lessons/chroma`: `ChromaVectorIndex` and the bundled-server launcher.
 */

// ---------------------------------------------------------------- errors and settings
export {
  InvalidInput,
  ModelReplyRejected,
  NotFound,
  RevisionConflict,
  StoreUnavailable,
  ToolLessonsError,
  type ToolLessonsErrorOptions,
  VetRefusal,
} from "./errors.js";
export { DEFAULT_SETTINGS, parseSettings, type Settings, type SettingsInput, SettingsSchema } from "./settings.js";
export { ENV_VARIABLES, readEnv, type ToolLessonsEnv } from "./env.js";

// ---------------------------------------------------------------- ledger (the durable truth)
export { Ledger, type LedgerOptions, type ListOptions, type RuleInput, type WarningSink } from "./ledger/ledger.js";
export { DEFAULT_OPEN_LEDGER_OPTIONS, openLedger, type OpenLedgerOptions } from "./ledger/open.js";
export { DEFAULT_NAMESPACE_ROOT, DEFAULT_PARTITION, timeOrderedId } from "./ledger/keys.js";
export {
  type ArgShape,
  ArgShapeSchema,
  type CallRecord,
  CallRecordSchema,
  type ErrorClass,
  ErrorClassSchema,
  type Evidence,
  EvidenceSchema,
  type Example,
  ExampleSchema,
  type ExampleSource,
  ExampleSourceSchema,
  type Learned,
  type LearnedLine,
  LearnedLineSchema,
  LearnedSchema,
  type NewRecord,
  type Offer,
  OfferSchema,
  type Refusal,
  RefusalSchema,
  type Revision,
  RevisionSchema,
  type RevisionStatus,
  RevisionStatusSchema,
  type RouteRecord,
  RouteRecordSchema,
  type Rule,
  type RulePriority,
  RulePrioritySchema,
  RuleSchema,
  SCHEMA_VERSION,
  type ToolCard,
  ToolCardSchema,
  type TurnRecord,
  TurnRecordSchema,
} from "./ledger/schema.js";

// ---------------------------------------------------------------- cards (what routing searches, what the model sees)
export { cardFromTool, type ExampleWithSource, exampleSources, type ToolSource } from "./ledger/cards.js";
export { LEARNED_HEADING, modelDescription, withDescriptions } from "./prompt/describe.js";
export { routingText, routingTexts, type RoutingTexts } from "./index/routing-text.js";

// ---------------------------------------------------------------- record (where a tool call is recorded)
export {
  classifyError,
  DEFAULT_ERROR_RULES,
  DEFAULT_RECORDING_OPTIONS,
  type ErrorInfo,
  type ErrorRule,
  maskArgs,
  maskText,
  type Partition,
  type PartitionContext,
  type PartitionResolver,
  partitionKey,
  type RecordingErrorContext,
  type RecordingStats,
  requestIdFor,
  resolvePartition,
  shapeOf,
  ToolLessonsCallbackHandler,
  type ToolLessonsCallbackHandlerOptions,
} from "./record/index.js";

// ---------------------------------------------------------------- index (routing and retrieval)
export {
  examplesWeight,
  type IndexMode,
  type RouteQuery,
  ToolIndex,
  type ToolIndexOptions,
} from "./index/tool-index.js";
export { type RoutedTools, type RouteOptions, ToolRouter, type ToolRouterOptions } from "./index/router.js";
export {
  DEFAULT_LEXICAL_EMBEDDINGS,
  LexicalEmbeddings,
  type LexicalEmbeddingsOptions,
} from "./index/lexical-embeddings.js";
export {
  DEFAULT_IN_MEMORY_VECTOR_INDEX,
  InMemoryVectorIndex,
  type InMemoryVectorIndexOptions,
  type MetadataFilter,
} from "./index/memory-vector-store.js";
export { type UsageFlag, type UsageFlagKind, usageFlags, type UsageFlagsInput } from "./index/usage-flags.js";
export { tokenize } from "./text/tokenize.js";

// ---------------------------------------------------------------- learn (where a lesson is decided and checked)
export { registerTools, type RegisterResult, type RegisterToolsOptions } from "./learn/register.js";
export { augmentTool, type AugmentOptions, type AugmentResult } from "./learn/augment.js";
export {
  AUTO_APPROVER,
  LessonManager,
  type LessonManagerOptions,
  type Review,
  type ReviewOptions,
} from "./learn/manager.js";
export { DeterministicProposer, type DeterministicProposerOptions } from "./learn/deterministic-proposer.js";
export { ModelProposer, type ModelProposerOptions } from "./learn/model-proposer.js";
export { type Proposal, type Proposer, type ToolEvidence } from "./learn/proposer.js";
export {
  REFUSAL_REASONS,
  type RefusalReason,
  type TurnedDown,
  turnedDownOf,
  type VetContext,
  type VetResult,
  vetProposal,
} from "./learn/vet.js";
export { detect, type Detection, type DetectInput, type ToolDetection } from "./learn/detect.js";
export { buildExampleCall } from "./learn/example-call.js";
export { type CoveredMiss, rankByCoverage } from "./learn/coverage.js";
export { DEFAULT_EXAMPLE_OBJECTIVE, type ExampleObjective } from "./learn/what-if.js";

// ---------------------------------------------------------------- graph (where a lesson reaches the prompt)
export { bindRoutedTools, createRouteNode, type RouteNodeOptions, toolsInUse } from "./graph/route-node.js";
export { ToolLessonsAnnotation, type ToolLessonsState } from "./graph/state.js";

// ---------------------------------------------------------------- evaluate
export {
  type LabelledRequest,
  LabelledRequestSchema,
  type RoutingScores,
  simulate,
  type SimulateOptions,
  type SimulationReport,
  type ToolSpec,
  ToolSpecSchema,
} from "./evaluate/simulate.js";
export {
  auroc,
  hitAtK,
  mean,
  meanNdcgAtK,
  meanRecallAtK,
  ndcgAtK,
  type RankedCase,
  recallAtK,
  topKAccuracy,
} from "./evaluate/metrics.js";
