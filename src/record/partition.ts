import { InvalidInput } from "../errors.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import { isStorableName } from "../text/normalize.js";

/**
 * Partitions: whose traffic a record belongs to. Every ledger row lives in one partition, and
 * nothing is learned across partitions, so one tenant's (or user's) calls never shape another's
 * lessons.
 *
 * ## Where the ids come from
 *
 * `resolvePartition` reads `tenant_id`, `user_id` and `agent_id` from `metadata` first, then
 * from `configurable`. **Inside callbacks only `metadata` reliably carries them**: LangGraph
 * copies `thread_id` and a few of its own keys from `configurable` into callback metadata, not
 * yours. So pass them as metadata, or give the handler a resolver:
 *
 * ```ts
 * await graph.invoke(input, {
 *   configurable: { thread_id: "t-1" },
 *   metadata: { tenant_id: "acme", user_id: "42" },
 *   callbacks: [handler],
 * });
 * ```
 */

/** The parts of a partition. Only the parts present make up its key. */
export interface Partition {
  tenantId?: string;
  userId?: string;
  agentId?: string;
}

/** What a partition resolver is given. */
export interface PartitionContext {
  /** Callback metadata of the run (user metadata plus LangGraph's keys such as `thread_id`). */
  metadata: Record<string, unknown>;
  /** `configurable`, when the caller has it (nodes do; callbacks do not). */
  configurable?: Record<string, unknown>;
  /** The run being resolved, when known. */
  runId?: string;
}

/** A user function naming the partition: a ready key, or parts to build one from. */
export type PartitionResolver = (context: PartitionContext) => string | Partition | undefined;

/**
 * How an id becomes part of a partition key, written down because two callers must never share
 * a partition by accident:
 *
 * - only a string or a finite number is an id; a number is written in its decimal form (`42` and
 *   `"42"` are the same id);
 * - a string is kept exactly as given: no trimming, no case folding, no Unicode normalization, so
 *   two different non-blank ids always make two different keys (`"acme"`, `" acme"`, `"Acme"`
 *   and `"ａｃｍｅ"` are four partitions);
 * - an absent key (`undefined`) is no id: the part is left out;
 * - anything else present under an id key is refused with {@link InvalidInput} (never turned into
 *   `"default"`): `null`, `""` or a blank string, `NaN` or an infinite number, a boolean, a
 *   BigInt, an object or an array, and a string holding a control character or a lone UTF-16
 *   surrogate (no store can hold one as a key). The error names the key and the kind of value,
 *   never the value.
 */
function asId(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return String(value);
    throw refused(key, "a number that is not finite");
  }
  if (typeof value !== "string") throw refused(key, value === null ? "null" : `a ${kindOf(value)}`);
  if (value.trim() === "") throw refused(key, "a blank string");
  if (!isStorableName(value)) throw refused(key, "a string with a control character or a lone UTF-16 surrogate");
  return value;
}

function kindOf(value: unknown): string {
  return Array.isArray(value) ? "list" : typeof value;
}

function refused(key: string, what: string): InvalidInput {
  return new InvalidInput(
    `The partition id "${key}" is ${what}; only a non-blank string or a finite number names a partition. ` +
      "The run's records are not written (no partition is guessed for them).",
    { context: { key } },
  );
}

const PART_LABELS: readonly [keyof Partition, string][] = [
  ["tenantId", "t"],
  ["userId", "u"],
  ["agentId", "a"],
];

/** Keys read for each part, in `metadata` and `configurable`. */
const PART_KEYS: Record<keyof Partition, string> = {
  tenantId: "tenant_id",
  userId: "user_id",
  agentId: "agent_id",
};

/** `/` separates parts in a key; escape it (and `%`) inside a part so keys stay unambiguous. */
function escapePart(part: string): string {
  return part.replace(/%/g, "%25").replace(/\//g, "%2F");
}

/**
 * The partition's key: `"default"` when no part is present, else the present parts in a fixed
 * order, e.g. `{ tenantId: "acme", userId: "42", agentId: "desk" }` → `"t:acme/u:42/a:desk"`,
 * `{ userId: "42" }` → `"u:42"`.
 */
export function partitionKey(partition: Partition = {}): string {
  const parts: string[] = [];
  for (const [field, label] of PART_LABELS) {
    const value = asId(PART_KEYS[field], partition[field]);
    if (value !== undefined) parts.push(`${label}:${escapePart(value)}`);
  }
  return parts.length === 0 ? DEFAULT_PARTITION : parts.join("/");
}

function readId(...sources: (Record<string, unknown> | undefined)[]): (key: string) => string | undefined {
  return (key) => {
    for (const source of sources) {
      const id = asId(key, source?.[key]);
      if (id !== undefined) return id;
    }
    return undefined;
  };
}

/**
 * The partition key of a run. With a resolver, its answer wins (a string is used as the key
 * as is; parts are turned into one with {@link partitionKey}; `undefined` falls back to the
 * ids). Without one, `tenant_id`, `user_id` and `agent_id` are read from `metadata`, then
 * from `configurable`. Nothing found gives `"default"`.
 * @throws InvalidInput when an id key holds something that is not an id (see {@link asId}), or a
 * resolver answers a blank string: the caller is refused, never put in `"default"`.
 */
export function resolvePartition(
  metadata: Record<string, unknown> = {},
  configurable?: Record<string, unknown>,
  resolver?: PartitionResolver,
): string {
  if (resolver) {
    const answer = resolver({ metadata, ...(configurable ? { configurable } : {}) });
    if (typeof answer === "string") return asId("resolver", answer) as string;
    if (answer && typeof answer === "object") return partitionKey(answer);
  }
  const read = readId(metadata, configurable);
  const partition: Partition = {};
  for (const [field, key] of Object.entries(PART_KEYS) as [keyof Partition, string][]) {
    const value = read(key);
    if (value !== undefined) partition[field] = value;
  }
  return partitionKey(partition);
}

/** Where a run carries the caller's ids: the parts of a `RunnableConfig` the resolver reads. */
export interface CallerSources {
  metadata?: Record<string, unknown>;
  configurable?: Record<string, unknown>;
  /** LangGraph / langchain v1 runtime context (`invoke(input, { context })`). */
  context?: Record<string, unknown>;
}

/**
 * The one way every piece names the caller's partition from a run's config: `metadata` first,
 * then `configurable`, then v1 `context` (with a resolver, its answer first; see
 * {@link resolvePartition}).
 * @throws InvalidInput when an id is not one (see {@link resolvePartition}).
 */
export function partitionOf(config: CallerSources | undefined, resolver?: PartitionResolver): string {
  const configurable = config?.configurable;
  const context = config?.context;
  const merged = context || configurable ? { ...(context ?? {}), ...(configurable ?? {}) } : undefined;
  return resolvePartition(config?.metadata ?? {}, merged, resolver);
}

/** Threads remembered by {@link rememberCaller}, newest last; the oldest is forgotten beyond this. */
const REMEMBERED_THREADS = 10_000;
const callers = new Map<string, string>();

/**
 * Remember which partition a node or middleware resolved for a thread, so the recorder (whose
 * callbacks see only `metadata`, not `configurable` or v1 `context`) files the thread's calls and
 * turn in the same partition. Process-wide, bounded.
 */
export function rememberCaller(threadId: string | undefined, partition: string): void {
  if (threadId === undefined) return;
  callers.delete(threadId);
  callers.set(threadId, partition);
  if (callers.size > REMEMBERED_THREADS) callers.delete(callers.keys().next().value as string);
}

/** The partition last remembered for a thread by {@link rememberCaller}, if any. */
export function rememberedCaller(threadId: string | undefined): string | undefined {
  return threadId === undefined ? undefined : callers.get(threadId);
}
