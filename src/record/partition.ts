import { DEFAULT_PARTITION } from "../ledger/keys.js";

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
 * An id is a non-empty string or a finite number (user ids are often numeric); anything else is
 * ignored. A plain check rather than a schema: this runs once per run, in the run's path.
 */
function asId(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim();
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
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
    const value = partition[field];
    if (typeof value === "string" && value.trim() !== "") parts.push(`${label}:${escapePart(value.trim())}`);
  }
  return parts.length === 0 ? DEFAULT_PARTITION : parts.join("/");
}

function readId(...sources: (Record<string, unknown> | undefined)[]): (key: string) => string | undefined {
  return (key) => {
    for (const source of sources) {
      const id = asId(source?.[key]);
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
 */
export function resolvePartition(
  metadata: Record<string, unknown> = {},
  configurable?: Record<string, unknown>,
  resolver?: PartitionResolver,
): string {
  if (resolver) {
    const answer = resolver({ metadata, ...(configurable ? { configurable } : {}) });
    if (typeof answer === "string" && answer.trim() !== "") return answer.trim();
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
