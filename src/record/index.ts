/**
 * `tool-lessons/record`: where a tool call is recorded. The callback handler with its flush and
 * stats, the error classes it files failures under, the one partition resolver (who the caller
 * is) and the thread → caller memory shared with the nodes (both defined in `src/caller/`, below
 * every stage). The root re-exports the handler; the rest is here, with the errors recording throws.
 */
export { ToolLessonsCallbackHandler } from "./handler.js";
export {
  type FlushOptions,
  type FlushResult,
  type RecordingStats,
  type ToolLessonsCallbackHandlerOptions,
} from "./options.js";
export type { RecordingFailureKind } from "./failures.js";
export { classifyError, type ErrorRule } from "./error-class.js";
export {
  type CallerIdsOptions,
  type CallerOrder,
  type CallerSources,
  type Partition,
  type PartitionContext,
  partitionKey,
  partitionOf,
  type PartitionResolver,
  type PartitionSource,
  type PartitionSpec,
  partitionTemplate,
  type ResolvedCaller,
  resolvePartition,
} from "../caller/partition.js";
export { ThreadCallers, type ThreadCallersOptions } from "../caller/thread-callers.js";
export { requestIdFor } from "../caller/request.js";
export { PartitionUnresolved, RecordingDropped, RecordsPending } from "../errors.js";
