import { randomBytes } from "node:crypto";
import { InvalidInput } from "../errors.js";

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
  const known = ENCODED.get(name);
  if (known !== undefined) return known;
  const label = encodeNew(name);
  // Every read and write names its partition (and a call its tool): the few names a process sees, encoded once.
  if (ENCODED.size >= MAX_ENCODED) ENCODED.clear();
  ENCODED.set(name, label);
  return label;
}

/** Names encoded by {@link encodeLabel}, kept up to {@link MAX_ENCODED} (then forgotten all at once). */
const ENCODED = new Map<string, string>();
const MAX_ENCODED = 4096;

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

let lastMs = 0;
let seq = 0;

/** Random bytes drawn from the system in one call and handed out 5 at a time (one call costs microseconds). */
const POOL_IDS = 512;
const ID_RANDOM_BYTES = 5;
let pool = Buffer.alloc(0);
let poolAt = 0;

function randomHex(): string {
  if (poolAt + ID_RANDOM_BYTES > pool.length) {
    pool = randomBytes(POOL_IDS * ID_RANDOM_BYTES);
    poolAt = 0;
  }
  poolAt += ID_RANDOM_BYTES;
  return pool.toString("hex", poolAt - ID_RANDOM_BYTES, poolAt);
}

/**
 * A time-ordered, collision-free id: milliseconds (base 36, fixed width), a per-process
 * sequence for ids made in the same millisecond, and random bits for other processes (from a
 * pool refilled every 512 ids: each id still has 40 fresh bits of its own).
 * Lexicographic order is creation order within a process and by millisecond across processes.
 */
export function timeOrderedId(now: number = Date.now()): string {
  if (now === lastMs) {
    seq += 1;
  } else {
    lastMs = now;
    seq = 0;
  }
  return idTime(now) + seq.toString(36).padStart(4, "0") + randomHex();
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
