/**
 * Whether a failed write failed on the way to the store (a dropped connection, a server going
 * away, a busy database) rather than on what was written. Such a write says nothing about its
 * rows: the writer retries it whole (its ids make a retry write the same keys, never doubles) and
 * never counts its rows as bad records.
 */
import { StoreUnavailable } from "../errors.js";
import { isRecord } from "../internal.js";

/**
 * SQLSTATE classes and codes of a connection or server fault: `08` connection exceptions,
 * `57P01`-`57P05` (backend terminated by an administrator, crash or idle timeout; cannot connect
 * now), `53300` too many connections, `40001` / `40P01` (serialization failure, deadlock: the
 * transaction did nothing and may be tried again).
 */
const SQLSTATE_CLASSES = ["08"];
const SQLSTATE_CODES: ReadonlySet<string> = new Set([
  "57P01",
  "57P02",
  "57P03",
  "57P04",
  "57P05",
  "53300",
  "40001",
  "40P01",
]);
/** Node's socket errors and SQLite's busy / locked database. */
const SYSTEM_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
]);
/** What node-postgres says, without a code, when a connection closes under a query. */
const CONNECTION_MESSAGES = [
  /\bconnection terminated\b/i,
  /\bterminating connection\b/i,
  /\bserver closed the connection\b/i,
  /\bnot queryable\b/i,
  /\btimeout exceeded when trying to connect\b/i,
  /\bconnection (?:error|reset|refused)\b/i,
];
/** Causes followed, at most. */
const MAX_CAUSES = 4;

/** True when `error` (or one of its causes) is a connection or server fault, not a fault of the rows. */
export function isConnectionFault(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined && current !== null; depth += 1) {
    if (current instanceof StoreUnavailable) return true;
    if (isRecord(current)) {
      const code = typeof current.code === "string" ? current.code : undefined;
      if (code !== undefined) {
        if (SYSTEM_CODES.has(code) || SQLSTATE_CODES.has(code)) return true;
        if (/^[0-9A-Z]{5}$/.test(code) && SQLSTATE_CLASSES.includes(code.slice(0, 2))) return true;
      }
      const message = typeof current.message === "string" ? current.message : "";
      if (CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true;
      current = current.cause;
    } else {
      return false;
    }
  }
  return false;
}
