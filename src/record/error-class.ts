import type { ErrorClass } from "../ledger/schema.js";
import { isRecord } from "../internal.js";

/**
 * Classify a tool failure by an ordered rule table. Pure: the same error always gets the same
 * class. Extend it by passing extra rules (they are tried before the built-in ones):
 *
 * ```ts
 * classifyError(err, [{ errorClass: "permission", test: /account is frozen/i }]);
 * ```
 */

/** What a rule sees of an error: its name, its message, and an HTTP-like status if any. */
export interface ErrorInfo {
  /** `Error.name` (e.g. `"ToolInputParsingException"`, `"ZodError"`), or `"Error"` for text. */
  name: string;
  /** The message, with the `ToolNode` wrapping ("Error: … Please fix your mistakes.") removed. */
  message: string;
  /** `status`, `statusCode` or `response.status` of the error, when numeric. */
  status?: number;
  /** `code` of the error (e.g. `"ETIMEDOUT"`), when a string. */
  code?: string;
}

/** One row of the table: the first rule whose test passes gives the class. */
export interface ErrorRule {
  errorClass: ErrorClass;
  /** A regular expression tried on `"<name>: <message> <code>"`, or a predicate. */
  test: RegExp | ((error: ErrorInfo) => boolean);
}

const statusIn =
  (...ranges: [number, number][]) =>
  (e: ErrorInfo): boolean =>
    e.status !== undefined && ranges.some(([lo, hi]) => e.status! >= lo && e.status! <= hi);

/** A status code in an error text, only where it reads as one ("status 404", "HTTP 429"). */
function httpStatus(codes: string): RegExp {
  return new RegExp(`(?:status|http|code)\\W{0,3}(?:code\\W{0,3})?(?:${codes})\\b`, "i");
}

/**
 * The built-in table, in the order it is tried. Typed checks first (a parsing exception or a
 * zod error is a validation failure whatever it says), then statuses, then wording.
 */
export const DEFAULT_ERROR_RULES: readonly ErrorRule[] = Object.freeze([
  {
    errorClass: "validation",
    test: (e: ErrorInfo) =>
      e.name === "ToolInputParsingException" ||
      e.name === "ZodError" ||
      /did not match expected schema/i.test(e.message),
  },
  { errorClass: "rate_limit", test: statusIn([429, 429]) },
  { errorClass: "permission", test: statusIn([401, 401], [403, 403]) },
  { errorClass: "not_found", test: statusIn([404, 404], [410, 410]) },
  { errorClass: "timeout", test: statusIn([408, 408], [504, 504]) },
  { errorClass: "validation", test: statusIn([400, 400], [409, 409], [422, 422]) },
  { errorClass: "upstream", test: statusIn([500, 599]) },
  { errorClass: "rate_limit", test: httpStatus("429") },
  { errorClass: "permission", test: httpStatus("40[13]") },
  { errorClass: "not_found", test: httpStatus("404") },
  { errorClass: "timeout", test: httpStatus("408|504") },
  { errorClass: "validation", test: httpStatus("400|422") },
  { errorClass: "rate_limit", test: /rate[ -]?limit|too many requests|quota (?:exceeded|exhausted)|throttl/i },
  {
    errorClass: "timeout",
    test: /timed? ?out|timeout|deadline exceeded|ETIMEDOUT|ESOCKETTIMEDOUT|AbortError/i,
  },
  {
    errorClass: "permission",
    test: /permission|forbidden|unauthori[sz]ed|not (?:allowed|authori[sz]ed|permitted)|access denied|insufficient (?:scope|privileges?|rights)/i,
  },
  {
    errorClass: "not_found",
    test: /not found|no such|does(?: not|n't) exist|unknown (?:id|order|customer|user|account|record|tool)|no (?:matching )?(?:record|result|item|entry)s? (?:found|for|with)/i,
  },
  {
    errorClass: "upstream",
    test: /(?:status|http|code)\W{0,3}(?:code\W{0,3})?5\d\d\b|bad gateway|service unavailable|internal server error|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EPIPE|socket hang up|network error|fetch failed|upstream|temporarily unavailable/i,
  },
  {
    errorClass: "validation",
    test: /invalid|validation|malformed|must (?:be|have|contain|match|start|end|include)|expected .{1,40}(?:received|got)|is required|required (?:field|argument|parameter)|missing (?:required )?(?:field|argument|parameter)|bad request|unprocessable|wrong (?:format|type)|not a valid|out of range|too (?:long|short|large|small)/i,
  },
]);

/** The wrapping `ToolNode` puts around an error it turns into a `ToolMessage`. */
const TOOL_NODE_PREFIX = /^Error:\s*/;
const TOOL_NODE_SUFFIX = /\s*Please fix your mistakes\.?\s*$/;

/** Strip `ToolNode`'s wrapping from an error text and collapse whitespace. */
export function cleanErrorText(text: string): string {
  return text.replace(TOOL_NODE_PREFIX, "").replace(TOOL_NODE_SUFFIX, "").replace(/\s+/g, " ").trim();
}

function numeric(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^\d{3}$/.test(value)) return Number(value);
  return undefined;
}

/**
 * What the rules see of an error: an `Error` (any subclass), a `ToolMessage`'s content string,
 * a content array of text parts, or anything else (stringified).
 */
export function errorInfo(error: unknown): ErrorInfo {
  if (typeof error === "string") return { name: "Error", message: cleanErrorText(error) };
  if (Array.isArray(error)) {
    const text = error
      .map((part) =>
        typeof part === "string" ? part : isRecord(part) && typeof part.text === "string" ? part.text : "",
      )
      .join(" ");
    return { name: "Error", message: cleanErrorText(text) };
  }
  if (isRecord(error)) {
    const name = typeof error.name === "string" && error.name ? error.name : "Error";
    const message = typeof error.message === "string" ? error.message : String(error);
    const response = isRecord(error.response) ? error.response : undefined;
    const status = numeric(error.status) ?? numeric(error.statusCode) ?? numeric(response?.status);
    const code = typeof error.code === "string" ? error.code : undefined;
    return {
      name,
      message: cleanErrorText(message),
      ...(status !== undefined ? { status } : {}),
      ...(code !== undefined ? { code } : {}),
    };
  }
  return { name: "Error", message: cleanErrorText(String(error)) };
}

/**
 * The class of a failure: `validation`, `not_found`, `permission`, `rate_limit`, `timeout`,
 * `upstream`, or `unknown` when no rule matches. `extraRules` are tried first.
 */
export function classifyError(error: unknown, extraRules: readonly ErrorRule[] = []): ErrorClass {
  const info = isErrorInfo(error) ? error : errorInfo(error);
  const haystack = `${info.name}: ${info.message}${info.code ? ` ${info.code}` : ""}`;
  for (const rule of [...extraRules, ...DEFAULT_ERROR_RULES]) {
    const hit = rule.test instanceof RegExp ? matches(rule.test, haystack) : rule.test(info);
    if (hit) return rule.errorClass;
  }
  return "unknown";
}

/** `RegExp.test` without the `lastIndex` trap of global or sticky expressions. */
function matches(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  return re.test(text);
}

function isErrorInfo(value: unknown): value is ErrorInfo {
  return (
    isRecord(value) &&
    !(value instanceof Error) &&
    typeof value.name === "string" &&
    typeof value.message === "string" &&
    Object.keys(value).every((k) => k === "name" || k === "message" || k === "status" || k === "code")
  );
}
