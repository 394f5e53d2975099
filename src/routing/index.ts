/**
 * `tool-lessons/routing`: the tools offered for a request. `ToolIndex` (tool vectors derived from
 * the cards, per partition), `ToolRouter` (a `BaseRetriever`), the embeddings and in-memory
 * vector store used by default, the text routing searches and usage flags (the "no tool"
 * threshold is fitted by the measuring kit, `tool-lessons/evaluate`). `ToolIndex` is at the root too; Chroma has
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
  type VectorLayout,
} from "./memory-vector-store.js";
export { routingText, routingTexts, type RoutingTexts } from "./routing-text.js";
export { type UsageFlag, type UsageFlagKind, usageFlags, type UsageFlagsInput } from "./usage-flags.js";
export { InvalidEmbeddings, SentenceEncoderUnavailable, UnsupportedVectorStore } from "../errors.js";
export {
  BlendedEmbeddings,
  type BlendedEmbeddingsOptions,
  type BlendPart,
  type PartitionFittedEmbeddings,
} from "./blended-embeddings.js";
export {
  SemanticWordEmbeddings,
  type SemanticWordEmbeddingsOptions,
  WordVectorsUnavailable,
  type WordVectorTable,
} from "./word-embeddings.js";
export {
  SentenceEncoderEmbeddings,
  type SentenceEncoderEmbeddingsOptions,
  type SentenceEncoderModel,
  type SentenceEncoderRouting,
  sentenceEncoderRouting,
  type SentenceEncoderRoutingOptions,
} from "./sentence-encoder.js";
export {
  type RoutingPreset,
  routingPreset,
  type RoutingPresetName,
  type RoutingPresetOptions,
  wordVectorRouting,
} from "./presets.js";
export { type EmbeddingsProblem } from "./embeddings-check.js";
