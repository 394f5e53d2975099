import { InvalidInput } from "../errors.js";
import { PureMemo } from "../memo.js";

/**
 * Key layout of the ledger inside a LangGraph `BaseStore`. The partition is part of every
 * namespace, so nothing is read across partitions by accident:
 *
 * ```
 * [root, partition, "calls", tool]   time-ordered id → CallRecord   (append-only)
 * [root, partition, "turns"]         time-ordered id → TurnRecord   (append-only)
 * [root, partition, "routes"]        time-ordered id → RouteRecord  (append-only)
 * [root, partition, "cards"]         tool name       → ToolCard
 * [root, partition, "revisions"]     revision id     → Revision
 * [root, partition, "rules"]         rule id         → Rule
 * [root, partition, "settings"]      "current"       → Settings
 * [root, partition, "reviews"]       tool name       → { through }   (review watermark)
 * [root, partition, "memory", tool]  call record id  → EvaluatedCall (the tool's memory window)
 * [root, partition, "guidelines"]    tool name       → ToolMemoryState (evaluation watermark, guideline)
 * [root, partition, "words"]         word hash       → { word }      (released words of stored free text)
 * [root, partition, "version"]       "current"       → PartitionVersion (what changed, for every process)
 * [root, "~meta"]                    "fingerprint-key" → { key }     (ledger-wide)
 * [root, "~meta", "fingerprint-key-candidates"]  time-ordered id → { key }
 * ```
 *
 * Each collection has its module under `collections/`, which documents its rows' invariants.
 */

/** The partition used when the caller names none. */
export const DEFAULT_PARTITION = "default";

/** The longest id (`tenant_id`, `user_id`, `agent_id`, a template's key, a kept thread id), in UTF-16 code units. */
export const MAX_ID_LENGTH = 256;

/** The first namespace label of every ledger row. */
export const DEFAULT_NAMESPACE_ROOT = "tool-lessons";

/** The collections of a partition: the third label of every partition's namespace. */
export const COLLECTIONS = [
  "calls",
  "turns",
  "routes",
  "cards",
  "revisions",
  "rules",
  "settings",
  "reviews",
  "memory",
  "guidelines",
  "words",
  "version",
] as const;

export type Collection = (typeof COLLECTIONS)[number];

/**
 * Second namespace label of the ledger-wide rows (the fingerprint key). Not a partition: in an
 * encoded label every "~" is followed by two hex digits (see {@link encodeLabel}). Every store
 * accepts it (`PostgresStore` refuses "_" in labels).
 */
export const META_LABEL = "~meta";

/**
 * Encode a name (tool, partition) as one namespace label, losslessly, using only characters
 * every store accepts: `BaseStore` refuses `.` and `:` (MCP tools are often `server.tool`),
 * `PostgresStore` also refuses `%`, `_` and `\` (its prefix search is a SQL `LIKE`), and
 * `InMemoryStore`/`SqliteStore` read `*` as a wildcard in `listNamespaces`. The name is
 * percent-encoded with `~` in place of `%`, and `. _ * ~` are escaped too, so `send_email` is
 * stored as `send~5Femail` and `server.tool` as `server~2Etool`.
 *
 * Every `~` of an encoded label is followed by two hex digits, so no encoded name equals the
 * ledger's own `~meta` label.
 * @throws InvalidInput for an empty name or one with a lone UTF-16 surrogate.
 */
export function encodeLabel(name: string): string {
  // Every read and write names its partition (and a call its tool): the few names a process sees, encoded once.
  return ENCODED.get(name, encodeNew);
}

/** Names encoded by {@link encodeLabel}, kept up to 4,096 (then forgotten all at once). */
const ENCODED = new PureMemo<string, string>(4096);

function encodeNew(name: string): string {
  if (name === "") throw new InvalidInput("A tool or partition name cannot be empty.");
  let encoded: string;
  try {
    encoded = encodeURIComponent(name);
  } catch (error) {
    throw new InvalidInput(`Cannot use ${JSON.stringify(name)} as a tool or partition name: it is not valid Unicode.`, {
      cause: error,
    });
  }
  return encoded.replace(/[%._*~]/g, (c) => (c === "%" ? "~" : `~${c.charCodeAt(0).toString(16).toUpperCase()}`));
}

/** Inverse of {@link encodeLabel}. */
export function decodeLabel(label: string): string {
  return decodeURIComponent(label.replace(/~/g, "%"));
}

export function namespaceFor(root: string, partition: string, collection: Collection, tool?: string): string[] {
  const ns = [root, encodeLabel(partition), collection];
  if (tool !== undefined) ns.push(encodeLabel(tool));
  return ns;
}

/** Random bits of an id, for ids other processes make in the same millisecond (40 bits). */
function randomHex(): string {
  return Math.floor(Math.random() * 2 ** 40)
    .toString(16)
    .padStart(10, "0");
}

/** Nanoseconds of the process's monotonic clock, fixed width: later calls sort after earlier ones. */
function monotonicPart(): string {
  // Decimal digits only: letters in an id could spell a fragment of a value the privacy probes look for.
  return process.hrtime.bigint().toString().padStart(20, "0");
}

/**
 * A time-ordered, collision-free id: milliseconds (base 36, fixed width), then the process's
 * monotonic clock in nanoseconds (so ids made in the same millisecond sort in the order made,
 * with no counter kept), then 40 random bits for other processes. Lexicographic order is creation
 * order within a process and by millisecond across processes.
 */
export function timeOrderedId(now: number = Date.now()): string {
  return idTime(now) + monotonicPart() + randomHex();
}

/**
 * The bound below every id made at or after `ms` and above every id made before it: for
 * `ListOptions.after`, "the records since `ms`".
 */
export function idFloorAt(ms: number): string {
  return `${idTime(Math.max(0, ms - 1))}~`;
}

/** The millisecond part that starts every {@link timeOrderedId}, fixed width so ids sort by time. */
function idTime(ms: number): string {
  return ms.toString(36).padStart(9, "0");
}
