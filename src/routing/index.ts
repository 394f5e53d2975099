/**
 * `tool-lessons/routing`: the tools offered for a request. `ToolIndex` (tool vectors derived from
 * the cards, per partition), `ToolRouter` (a `BaseRetriever`), the embeddings and in-memory
 * vector store used by default, the text routing searches, usage flags and the "no tool"
 * threshold. `ToolIndex` and `ToolRouter` are at the root too; Chroma has
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
export {
  ABSTAIN_FEATURES,
  abstainExamples,
  type AbstainExample,
  abstainFeatures,
  type AbstainModel,
  type AbstainModelOptions,
  type AbstainObservation,
  abstainProbability,
  DEFAULT_ABSTAIN_MODEL_OPTIONS,
  fitAbstainModel,
  type ScoreCalibration,
  scoreCalibration,
} from "./abstain-model.js";
export { InvalidEmbeddings, SentenceEncoderUnavailable, UnsupportedVectorStore } from "../errors.js";
export {
  BlendedEmbeddings,
  type BlendedEmbeddingsOptions,
  type BlendPart,
  DEFAULT_BLEND_WEIGHTS,
  fitsPerPartition,
  type PartitionFittedEmbeddings,
} from "./blended-embeddings.js";
export {
  DEFAULT_SEMANTIC_WORD_EMBEDDINGS,
  loadWordVectors,
  SemanticWordEmbeddings,
  type SemanticWordEmbeddingsOptions,
  WordVectorsUnavailable,
  type WordVectorTable,
} from "./word-embeddings.js";
export {
  DEFAULT_SENTENCE_ENCODER,
  DEFAULT_SENTENCE_ENCODER_ROUTING,
  loadSentenceEncoder,
  SENTENCE_ENCODER_PACKAGES,
  SentenceEncoderEmbeddings,
  type SentenceEncoderEmbeddingsOptions,
  type SentenceEncoderModel,
  type SentenceEncoderRouting,
  sentenceEncoderRouting,
  type SentenceEncoderRoutingOptions,
} from "./sentence-encoder.js";
export {
  ROUTING_PRESETS,
  type RoutingPreset,
  routingPreset,
  type RoutingPresetName,
  type RoutingPresetOptions,
  wordVectorRouting,
} from "./presets.js";
export { type EmbeddingsProblem, embeddingsProblem } from "./embeddings-check.js";
