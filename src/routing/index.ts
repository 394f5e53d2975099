/**
 * `tool-lessons/routing`: the tools offered for a request. `ToolIndex` (tool vectors derived from
 * the cards, per partition), `ToolRouter` (a `BaseRetriever`), the embeddings and in-memory
 * vector store used by default, the text routing searches, usage flags and the "no tool"
 * threshold. `ToolIndex`, `ToolRouter` and `LexicalEmbeddings` are at the root too; Chroma has
 * its own entry point (`tool-lessons/chroma`).
 */
export {
  type IndexMode,
  type RouteQuery,
  ToolIndex,
  type ToolIndexExamplesOptions,
  type ToolIndexOptions,
} from "./tool-index.js";
export {
  DEFAULT_TOOL_ROUTER,
  type RoutedTools,
  type RouteOptions,
  type RoutingFailureContext,
  type RoutingFailureKind,
  type RoutingSkipped,
  ToolRouter,
  type ToolRouterOptions,
} from "./router.js";
export { type ScoreKind, type ScoreKindOption } from "./vector-store-contract.js";
export { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
export {
  InMemoryVectorIndex,
  type InMemoryVectorIndexOptions,
  type MetadataFilter,
  SPARSE_MAX_NONZERO_SHARE,
  type VectorLayout,
} from "./memory-vector-store.js";
export { routingText, routingTexts, type RoutingTexts } from "./routing-text.js";
export { type UsageFlag, type UsageFlagKind, usageFlags, type UsageFlagsInput } from "./usage-flags.js";
export {
  abstainThreshold,
  type AbstainOptions,
  type AbstainSample,
  calibrateAbstain,
  DEFAULT_ABSTAIN_OPTIONS,
} from "./abstain.js";
