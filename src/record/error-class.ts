import type { ErrorClass } from "../ledger/schema.js";
import { MASK_BUDGET } from "../text/budget.js";
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
  /**
   * The message alone (see {@link cleanErrorText}): the tool nodes' wrappings ("Error: … Please fix
   * your mistakes.", `createAgent`'s "Error invoking tool …") and any stack trace removed.
   */
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

/**
 * The wrappings the tool nodes put around an error they turn into a `ToolMessage`. LangGraph's
 * prebuilt `ToolNode` sends `Error: <message>\n Please fix your mistakes.`; langchain's
 * `createAgent` sends `${error}` with the same suffix, or, for a schema refusal,
 * `Error invoking tool '<name>' with kwargs <args JSON> with error: <the error's stack>\n Please
 * fix the error and try again.` One refusal must read the same whichever node sent it: the
 * review groups failures by their text, and a text that differs by path is two groups of one.
 */
const TOOL_NODE_SUFFIXES = ["Please fix your mistakes", "Please fix the error and try again"];
const INVOCATION_HEAD = /^Error invoking tool '[^'\n]{0,256}' with kwargs /;
const INVOCATION_JOIN = " with error: ";
/** An error's name at the start of its text (`Error: `, `TypeError: `, `ToolInputParsingException: `). */
const ERROR_NAME = /^((?:[A-Za-z_$][\w$]{0,80})?(?:Error|Exception)):[ \t]*/;

/**
 * Where a stack trace begins: its first frame on a line of its own (V8 indents each frame:
 * `    at fn (file:///app.js:1:2)`, `    at async Promise.all (index 0)`, `    at file:///app.js:1:2`),
 * or, in a text whose lines were already joined, a frame that names a file and position. Only a
 * frame counts, so zod's `→ at order_id` and a message's own "at" are kept.
 */
const FRAME_LINE =
  /\n[ \t]+at (?:async )?(?:new )?(?:[^\s()]+ (?:\[as [^\]\n]+\] )?\([^\n]*\)|[^\s()]+:\d+(?::\d+)?|<anonymous>)[ \t]*(?=\n|$)/;
const FRAME_INLINE = /\sat (?:async )?(?:\S+ ){0,3}\(?(?:file:\/\/|node:|\/|[A-Za-z]:\\)[^\s()]*:\d+:\d+\)?/;

/**
 * The text of a tool error as it is classified and stored: the error's message alone. The tool
 * nodes' wrappings are taken off (so a refusal reads the same through `createAgent` and a graph),
 * and a stack trace is cut where it begins: frames hold file paths and line numbers that differ by
 * path, version and run, and would make one refusal many texts (and say nothing a lesson can use).
 * Whitespace is collapsed.
 */
export function cleanErrorText(text: string): string {
  const { message } = splitErrorText(text);
  return message;
}

/** The error's name (when its text starts with one) and its cleaned message; see {@link cleanErrorText}. */
function splitErrorText(text: string): { name?: string; message: string } {
  const unwrapped = unwrapInvocation(withoutSuffix(text));
  // Read as the masker reads a free text: a longer error is never stored or matched past it.
  const body = withoutStack(unwrapped.slice(0, MASK_BUDGET.maxTextChars));
  const named = ERROR_NAME.exec(body);
  const message = (named ? body.slice(named[0].length) : body).replace(/\s+/g, " ").trim();
  return named ? { name: named[1], message } : { message };
}

/** The text without a tool node's closing "Please fix …" (by comparison: no regex runs over a long text's end). */
function withoutSuffix(text: string): string {
  const trimmed = text.trimEnd();
  for (const suffix of TOOL_NODE_SUFFIXES) {
    for (const ending of [`${suffix}.`, suffix]) {
      if (trimmed.endsWith(ending)) return trimmed.slice(0, -ending.length);
    }
  }
  return text;
}

/** The error inside `createAgent`'s "Error invoking tool … with kwargs … with error: …", or the text as is. */
function unwrapInvocation(text: string): string {
  const head = INVOCATION_HEAD.exec(text);
  if (!head) return text;
  // The kwargs are JSON of the model's arguments: skipped as one value, whatever their strings say.
  const end = jsonValueEnd(text, head[0].length);
  if (end === undefined || !text.startsWith(INVOCATION_JOIN, end)) return text;
  return text.slice(end + INVOCATION_JOIN.length);
}

/** The text before its stack trace (all of it when it has none). */
function withoutStack(text: string): string {
  const line = FRAME_LINE.exec(text);
  const inline = FRAME_INLINE.exec(text);
  const at = Math.min(line?.index ?? text.length, inline?.index ?? text.length);
  return text.slice(0, at);
}

/**
 * The index just past the JSON object or array that starts at `from`, or `undefined` when none
 * does or it does not close. Strings are skipped with their escapes, so a bracket or a quote
 * inside an argument's value does not end it early.
 */
function jsonValueEnd(text: string, from: number): number | undefined {
  if (text[from] !== "{" && text[from] !== "[") return undefined;
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
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
  if (typeof error === "string") return fromText(error);
  if (Array.isArray(error)) {
    const text = error
      .map((part) =>
        typeof part === "string" ? part : isRecord(part) && typeof part.text === "string" ? part.text : "",
      )
      .join(" ");
    return fromText(text);
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
  return fromText(String(error));
}

/** What the rules see of an error known only as text: the name it starts with (else `Error`), its message. */
function fromText(text: string): ErrorInfo {
  const { name, message } = splitErrorText(text);
  return { name: name ?? "Error", message };
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
