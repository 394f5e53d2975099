/**
 * The record stage: the callback handler that records tool calls and turns, and the pure
 * functions it is built from (masking, fingerprints, error classes, partitions, request ids).
 * Named re-exports for the package barrel.
 */
export {
  DEFAULT_RECORDING_OPTIONS,
  type RecordingErrorContext,
  type RecordingStats,
  ToolLessonsCallbackHandler,
  type ToolLessonsCallbackHandlerOptions,
} from "./handler.js";
export {
  classifyError,
  cleanErrorText,
  DEFAULT_ERROR_RULES,
  type ErrorInfo,
  type ErrorRule,
  errorInfo,
} from "./error-class.js";
export {
  containsFingerprint,
  createTextMasker,
  fingerprint,
  type FingerprintMemo,
  FINGERPRINT_HEX_LENGTH,
  MAX_NGRAM,
  MIN_TOKEN_LENGTH,
  MIN_VALUE_LENGTH,
  maskArgs,
  maskText,
  normalise,
  shapeOf,
  type TextMasker,
  textFingerprints,
  tokens,
  valueFingerprints,
  valueTerms,
  type ValueTerms,
} from "../text/mask.js";
export {
  type Partition,
  type PartitionContext,
  type PartitionResolver,
  partitionKey,
  resolvePartition,
} from "./partition.js";
export {
  hashedRequestId,
  type HumanTurn,
  latestHumanTurn,
  messageId,
  messageRole,
  messagesOf,
  messageText,
  requestIdFor,
} from "./request.js";
