/**
 * Whose records a run's are, as far as the recorder can know: callbacks see only `metadata`
 * (LangGraph copies `thread_id` and a few of its own keys from `configurable` into it, never the
 * app's ids, never v1 `context`), so the caller is read from the metadata, else taken from the
 * route node or middleware that resolved it for the run's thread (`ThreadCallers`). A run whose
 * caller is found nowhere is never filed with other callers in `default`: only an app that says
 * it names no caller at all (`singleTenant`) records such runs there. `docs/partitions.md`.
 */
import { PartitionUnresolved } from "../errors.js";
import type { ThreadCallers } from "../caller/thread-callers.js";
import type { RecordingFailures } from "./failures.js";
import { callerIdOf, type PartitionSource, type PartitionSpec, resolveCaller } from "../caller/partition.js";

/** The caller as a run's callback metadata names it. */
export interface CallerSeen {
  /** Undefined when the ids were refused or a template's id is missing. */
  partition: string | undefined;
  /** Where `partition` came from; `"none"`: the metadata names no caller (`partition` is then `default`). */
  from: PartitionSource;
  /** A template's missing id: the node may still know the thread's caller. */
  unresolved?: PartitionUnresolved;
  /** Who the caller is within the partition, by the ids the metadata carries (`callerIdOf`). */
  caller?: string;
}

/**
 * A settled run: its partition and who the caller is within it (`callerIdOf`, when known), or why
 * its records are not written (`failed`: refused; `withheld`: unseen).
 */
export type SettledCaller =
  { partition: string; caller?: string; lost?: undefined } | { partition?: undefined; lost: "failed" | "withheld" };

/** What {@link settleCaller} consults. */
export interface AttributionContext {
  callers: ThreadCallers;
  singleTenant: boolean;
  failures: RecordingFailures;
}

/** The caller a run's metadata names (read when the run opens). A refused id is reported once. */
export function callerInMetadata(
  metadata: Record<string, unknown> | undefined,
  resolver: PartitionSpec | undefined,
  failures: RecordingFailures,
): CallerSeen {
  const caller = callerIdOf({ metadata });
  const known = caller === undefined ? {} : { caller };
  try {
    return { ...resolveCaller(metadata ?? {}, undefined, resolver), ...known };
  } catch (error) {
    // A template's id may live in configurable / context, which a node sees: settled at the end.
    if (error instanceof PartitionUnresolved)
      return { partition: undefined, from: "none", unresolved: error, ...known };
    failures.report(
      "caller_refused",
      "A run's records are not written: the recorder's partition resolver refused the caller's ids in its " +
        "metadata (see the error; nothing is filed under a guessed partition). Every later run refused is " +
        "counted in stats().failed.",
      error,
    );
    return { partition: undefined, from: "resolver" };
  }
}

/**
 * Settle a finished run's partition. A node or middleware that resolved the thread's caller read
 * the run's whole config, whose app ids (`configurable`, `context`, LangGraph's authenticated
 * user) beat the client's `metadata` (`caller/partition.ts`, "Trust order"): its partition wins,
 * and a metadata naming another is reported, once. Without one, a run whose metadata names its
 * caller keeps it; failing that, `default` only with `singleTenant`. Otherwise it is withheld:
 * callbacks cannot tell a run that names no caller from one that names it where they cannot see,
 * and the safe choice is never to pool it.
 */
export function settleCaller(
  caller: CallerSeen,
  threadId: string | undefined,
  records: number,
  { callers, singleTenant, failures }: AttributionContext,
): SettledCaller {
  const node = callers.partitionOf(threadId);
  if (caller.from !== "none") {
    if (caller.partition === undefined) return { lost: "failed" };
    if (node !== undefined && node !== caller.partition) {
      failures.report(
        "partition_mismatch",
        "One request, two partitions: the run's callback metadata names one caller, and the route node or " +
          "middleware resolved another from the run's config. The records are filed under the node's: the app's " +
          "ids (configurable, context, LangGraph's authenticated user) beat a client's metadata. If the metadata " +
          "is right, give the recorder and the node the same partition resolver or template.",
      );
    }
    // The node's answer, from the whole config, wins over the metadata's (the client's) and its caller with it.
    if (node !== undefined) return withCaller(node, callers.callerOf(threadId), { ...caller, caller: undefined });
    return withCaller(caller.partition, undefined, caller);
  }
  if (callers.isRefused(threadId)) {
    failures.report(
      "caller_refused",
      "A run's records were not written: the route node or middleware refused the caller's ids in its config " +
        "(see its own error), and the run's callback metadata names no caller. Fix the ids passed on invoke; " +
        "nothing is filed under a guessed partition.",
      undefined,
      { records },
    );
    return { lost: "failed" };
  }
  if (node !== undefined) return withCaller(node, callers.callerOf(threadId), caller);
  if (caller.unresolved) {
    failures.report(
      "caller_unresolved",
      "A run's records were not written: the partition template names an id the run's callback metadata does " +
        "not carry, and no node named the thread's caller.",
      caller.unresolved,
      { records },
    );
    return { lost: "failed" };
  }
  if (singleTenant && caller.partition !== undefined) return withCaller(caller.partition, undefined, caller);
  failures.report(
    "caller_unseen",
    "A run's records were not written: its callback metadata names no caller (tenant_id, user_id, agent_id) " +
      "and no route node or middleware named one for its thread. Callbacks never see `configurable` or v1 " +
      "`context`, so the recorder cannot tell an app that names no caller from one that names it there, and " +
      "it never files callers together in `default`. Pass the caller's ids in `metadata` on invoke, or give " +
      "the recorder `singleTenant: true` if the app has one caller. Every later run like it is counted in " +
      "stats().withheld.",
    undefined,
    { records, thread: threadId !== undefined },
  );
  return { lost: "withheld" };
}

/**
 * A settled partition and who the caller is within it: the caller a node resolved for the thread
 * from the run's whole config (it read the metadata first), else the one the metadata names.
 */
function withCaller(partition: string, named: string | undefined, seen: CallerSeen): SettledCaller {
  const caller = named ?? seen.caller;
  return caller === undefined ? { partition } : { partition, caller };
}
