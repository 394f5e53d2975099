/**
 * tool-lessons: tools that get better with use.
 *
 * The public API, as named exports only, one block per stage of the data's way through the
 * package: record → ledger → index → learn → rules → memory → graph. It holds what the README and docs/ teach,
 * with the types of those APIs' options and results; the helpers they are built from stay inside.
 *
 * Other entry points:
 * - `tool-lessons/schema`: the zod schemas of the ledger's rows and of the settings.
 * - `tool-lessons/evaluate`: `simulate` and the ranking metrics (what learning does for routing).
 * - `tool-lessons/privacy`: the gate every untrusted text passes, and its detectors.
 * - `tool-lessons/sqlite`: `SqliteStore`, the embedded ledger store. `openLedger()` loads it on
 *   demand, so most users never import it directly.
 * - `tool-lessons/postgres`: `openPostgresStore`, for a ledger shared by many processes.
 * - `tool-lessons/chroma`: `ChromaVectorIndex` and the bundled-server launcher.
 * Backends with native or optional dependencies are kept out of this barrel so that importing
 * the package never loads them.
 */

// ---------------------------------------------------------------- errors, settings, environment
export {
  InvalidInput,
  ModelReplyRejected,
  NotFound,
  RevisionConflict,
  StoreUnavailable,
  ToolLessonsError,
  UnsupportedVectorStore,
  VetRefusal,
} from "./errors.js";
export { DEFAULT_SETTINGS, type Settings, type SettingsInput } from "./settings.js";
export { readEnv, type ToolLessonsEnv } from "./env.js";

// ---------------------------------------------------------------- record (where a tool call is recorded)
export {
  type RecordingErrorContext,
  type RecordingStats,
  ToolLessonsCallbackHandler,
  type ToolLessonsCallbackHandlerOptions,
} from "./record/handler.js";
export { classifyError, type ErrorRule } from "./record/error-class.js";
export {
  type Partition,
  type PartitionContext,
  type PartitionResolver,
  partitionKey,
  resolvePartition,
} from "./record/partition.js";
export { ThreadCallers, threadCallersOf, type ThreadCallersOptions } from "./record/callers.js";
export { requestIdFor } from "./record/request.js";

// ---------------------------------------------------------------- ledger (the durable truth) and its rows
export { Ledger, type LedgerOptions, type ListOptions, type RuleInput, type WarningSink } from "./ledger/ledger.js";
export { openLedger, type OpenLedgerOptions } from "./ledger/open.js";
export type {
  ArgShape,
  CallRecord,
  ErrorClass,
  Evidence,
  Example,
  ExampleSource,
  Learned,
  LearnedLine,
  NewRecord,
  Offer,
  OutputSummary,
  Refusal,
  RefusalKind,
  RefusalReason,
  Revision,
  RevisionStatus,
  RouteRecord,
  Rule,
  RulePriority,
  ToolCard,
  TurnRecord,
} from "./ledger/schema.js";

// ---------------------------------------------------------------- cards (what routing searches, what the model sees)
export { cardFromTool, type ExampleWithSource, exampleSources, type ToolSource } from "./ledger/cards.js";
export { modelDescription, withDescriptions } from "./prompt/describe.js";
export { routingText, routingTexts, type RoutingTexts } from "./routing/routing-text.js";

// ---------------------------------------------------------------- index (routing)
export {
  type IndexMode,
  type RouteQuery,
  ToolIndex,
  type ToolIndexExamplesOptions,
  type ToolIndexOptions,
} from "./routing/tool-index.js";
export { type RoutedTools, type RouteOptions, ToolRouter, type ToolRouterOptions } from "./routing/router.js";
export { type ScoreKind, type ScoreKindOption } from "./routing/vector-store-contract.js";
export { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./routing/lexical-embeddings.js";
export {
  InMemoryVectorIndex,
  type InMemoryVectorIndexOptions,
  type MetadataFilter,
} from "./routing/memory-vector-store.js";
export { type UsageFlag, type UsageFlagKind, usageFlags, type UsageFlagsInput } from "./routing/usage-flags.js";

// ---------------------------------------------------------------- learn (where a lesson is decided and checked)
export { registerTools, type RegisterResult, type RegisterToolsOptions } from "./learn/register.js";
export { LessonManager, type LessonManagerOptions, type Review, type ReviewOptions } from "./learn/manager.js";
export { DeterministicProposer, type DeterministicProposerOptions } from "./learn/deterministic-proposer.js";
export { ModelProposer, type ModelProposerOptions } from "./learn/model-proposer.js";
export type {
  NeighbourTool,
  Proposal,
  ProposalRejection,
  ProposalRejectionReason,
  ProposedExample,
  ProposedNote,
  ProposedNotFor,
  Proposer,
  ToolEvidence,
} from "./learn/proposer.js";
export type { AimedPattern, VetOptions } from "./learn/vet.js";
export { DEFAULT_EXAMPLE_OBJECTIVE, type ExampleObjective } from "./learn/what-if.js";

// ---------------------------------------------------------------- rules (tool-scoped: captured, pinned, recalled)
export { captureEdicts, type CaptureEdictsOptions, type EdictCandidate } from "./rules/capture.js";
export { DEFAULT_TOOL_ALIASES, type ToolAlias } from "./rules/aliases.js";
export {
  isPinned,
  type RuleScope,
  type RuleSource,
  type RuleView,
  SHARED_SCOPE,
  UNSCOPED_TOOL,
} from "./rules/model.js";
export { observeRepeatedFailures } from "./rules/observe.js";
export { type RecordedEdicts, recordEdicts, type RecordEdictsOptions, recordObservations } from "./rules/store.js";
export { LessonRetriever, type LessonRetrieverOptions } from "./rules/retriever.js";
export { createRecallRulesTool, type RecallRulesToolOptions } from "./rules/recall-tool.js";
export { renderRulesBlock, type RulesBlock, type RulesBlockOptions } from "./prompt/rules-block.js";
// ---------------------------------------------------------------- memory (each call evaluated, statistics, guidelines)
export {
  type CallEvaluation,
  type CallEvaluator,
  DeterministicEvaluator,
  type DeterministicEvaluatorOptions,
  DeterministicSynthesizer,
  type EvaluationInput,
  type EvaluationOutcome,
  type EvaluationReport,
  type GuidelineDraft,
  type GuidelineSynthesizer,
  type MemoryPassOptions,
  ModelEvaluator,
  type ModelEvaluatorOptions,
  ModelSynthesizer,
  type ModelSynthesizerOptions,
  type SummarizeOptions,
  type SummaryReport,
  type SummaryStatus,
  type SynthesisInput,
  type SynthesisOutcome,
  type ToolEvaluationReport,
  ToolMemory,
  type ToolMemoryOptions,
  type ToolMemoryView,
  toolStats,
  type ToolSummaryReport,
  type UnevaluatedReason,
} from "./memory/index.js";
export type {
  EvaluatedCall,
  EvaluationScore,
  EvaluationSignal,
  Guideline,
  GuidelineRefusal,
  GuidelineRefusalReason,
  ToolMemoryState,
  ToolStats,
} from "./ledger/schema.js";
export type { SummarizeToolsOptions, ToolMemoryReport } from "./learn/manager.js";
export {
  MEMORY_HEADING,
  renderGuideline,
  renderMemoryBlock,
  renderStatsBlock,
  type ToolGuidelineEntry,
} from "./prompt/memory.js";

export { type ServedTurn, type ServeInput, type ServeOptions, TurnServer } from "./serve/index.js";
// ---------------------------------------------------------------- graph (where a lesson reaches the prompt)
export {
  bindRoutedTools,
  createRouteNode,
  type RouteNodeOptions,
  ToolLessonsAnnotation,
  type ToolLessonsState,
} from "./graph/index.js";

// ---------------------------------------------------------------- partitions (one resolver) and routing that degrades
export { PartitionUnresolved } from "./errors.js";
export {
  callerOf,
  type CallerSources,
  type PartitionSource,
  type PartitionSpec,
  partitionOf,
  partitionTemplate,
  type ResolvedCaller,
  resolveCaller,
} from "./record/partition.js";
export { DEFAULT_TOOL_ROUTER, type RoutingSkipped, type RoutingWarning } from "./routing/router.js";

// ---------------------------------------------------------------- the lessons nodes (classify → synthesize → vet → inject) and the ready agent
export {
  classifyTurn,
  createClassifyNode,
  createInjectNode,
  createLessonsGraph,
  createLessonsNode,
  createLessonsNodes,
  createSynthesizeNode,
  createToolLessonsAgent,
  createVetNode,
  DEFAULT_LESSONS_GRAPH,
  emptyReport,
  ledgerOn,
  type LessonSignal,
  type LessonsGraphOptions,
  type LessonsNodeState,
  type LessonsReport,
  lessonsMessages,
  LessonsStateFields,
  routedToolsOf,
  type ToolLessonsAgentOptions,
  ToolLessonsZodState,
} from "./graph/index.js";
export {
  type BlockRule,
  CUT_ORDER,
  type CutStep,
  DEFAULT_LESSONS_BLOCK,
  estimateTokens,
  type LessonsBlock,
  type LessonsBlockInput,
  type LessonsBlockOptions,
  renderLessonsBlock,
} from "./prompt/lessons-block.js";

// ---------------------------------------------------------------- races settled by the store (compare-and-set), for stores of your own
export {
  type CasCheck,
  type CasFailure,
  type CasOutcome,
  type CasValue,
  type CompareAndSetStore,
  compareAndSet,
} from "./ledger/cas.js";
export type { RevisionClaim } from "./ledger/collections/commit.js";

// ---------------------------------------------------------------- recording under load and faults: flush results, close
export { RecordingDropped, RecordsPending } from "./errors.js";
export { type FlushOptions, type FlushResult } from "./record/handler.js";
export { DEFAULT_LEDGER_CLOSE_OPTIONS, type LedgerCloseOptions, type LedgerRecorder } from "./ledger/ledger.js";

// ---------------------------------------------------------------- the in-memory index's layouts (sparse vectors as an inverted index)
export { SPARSE_MAX_NONZERO_SHARE, type VectorLayout } from "./routing/memory-vector-store.js";

// ---------------------------------------------------------------- examples chosen as a set, the "no tool" path
export {
  abstainThreshold,
  type AbstainOptions,
  type AbstainSample,
  calibrateAbstain,
  DEFAULT_ABSTAIN_OPTIONS,
} from "./routing/abstain.js";
export { type ChosenSet, type ExampleSlots } from "./learn/what-if.js";
