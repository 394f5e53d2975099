/**
 * A tool's output as the recorder keeps it: captured bounded and raw while its run is open
 * ({@link captureToolOutput}), then masked for storage once the run's argument values are known
 * ({@link maskToolOutput}); and the `ToolMessage`s a chain's outputs carry ({@link toolMessagesIn}).
 */
import type { OutputSummary } from "../ledger/schema.js";
import { gateText } from "../text/gate.js";
import type { Masker } from "../text/mask.js";
import { isRecord, oneLine } from "../internal.js";
import { messageRole } from "../caller/request.js";

/** Longest output summary kept on a call record, in characters (after masking). */
export const MAX_OUTPUT_LENGTH = 400;
/** Of a long output, the characters of the summary taken from its end (the rest from its start). */
const OUTPUT_TAIL_LENGTH = 96;
/** Raw characters held of an output's start, and of its end, until its run ends. */
const RAW_OUTPUT_HEAD = 800;
const RAW_OUTPUT_TAIL = 400;
/** Longest output read as JSON for the `empty` flag (a longer one is not empty). */
const MAX_JSON_CHECK = 4096;

/**
 * A successful call's output as held until its run ends: a bounded slice of the raw text (its
 * start, and its end when long) and the flags read from the whole of it. Raw: never stored; it
 * is masked by {@link maskToolOutput} with every argument value of the run, once they are known.
 */
export interface CapturedOutput {
  /** The output's start (all of it when short). */
  head: string;
  /** The output's end when it is longer than what `head` holds; "" otherwise. */
  tail: string;
  chars: number;
  empty: boolean;
  truncated: boolean;
  zeroCount: boolean;
}

const TRUNCATED = [
  /(?:\.\.\.|…)[\s\])}"']*$/u,
  /\btruncated\b/i,
  /\b(?:and|plus) \d[\d,]* more\b/i,
  /\bshowing (?:the )?(?:first|top) \d+ of \d+\b/i,
];
const ZERO_COUNT = [
  /(?:^|[^\p{L}\p{N}.,])0\s+(?:results?|matches|hits|items?|records?|rows|entries|documents|docs|files|pages|products|orders|options)\b/iu,
  /\b(?:found|returned|total|count|results?|matches|hits)\s*["']?\s*[:=]?\s*0(?!\p{N}|[.,]\p{N})/iu,
];

/**
 * What is held of a tool's output until its run ends: the text of a `ToolMessage`'s content, a
 * string, content blocks or any other value (as JSON), bounded, with its flags. Pure; nothing here
 * is masked yet.
 */
export function captureToolOutput(output: unknown): CapturedOutput {
  const text = outputText(output);
  const long = text.length > RAW_OUTPUT_HEAD + RAW_OUTPUT_TAIL;
  const head = long ? text.slice(0, RAW_OUTPUT_HEAD) : text;
  const tail = long ? text.slice(-RAW_OUTPUT_TAIL) : "";
  const ends = (tail || head).slice(-200);
  return {
    head,
    tail,
    chars: text.length,
    empty: isEmptyOutput(text),
    truncated: TRUNCATED.some((p, i) => (i === 0 ? p.test(ends) : p.test(head) || p.test(tail))),
    zeroCount: ZERO_COUNT.some((p) => p.test(head)),
  };
}

/**
 * The one place a tool's output is made fit for storage: through the gate as a stored text, with
 * the run's masker (every argument value of the run at any depth, the detectors, every remaining
 * digit; as error messages are), whitespace collapsed, clipped to {@link MAX_OUTPUT_LENGTH}
 * characters (the start, and the end of a long output). Text aimed at the model is kept as data
 * and its label recorded in `aimed`, like an error's.
 */
export function maskToolOutput(captured: CapturedOutput, masker: Masker): OutputSummary {
  const gate = (text: string) => gateText(text, { kind: "stored", masker });
  const head = gate(captured.head);
  const tail = captured.tail === "" ? undefined : gate(captured.tail);
  const headText = oneLine(head.text);
  const whole = tail === undefined ? headText : `${headText} ${oneLine(tail.text)}`;
  const text =
    tail === undefined && whole.length <= MAX_OUTPUT_LENGTH
      ? whole
      : `${headText.slice(0, MAX_OUTPUT_LENGTH - OUTPUT_TAIL_LENGTH - 3)} … ${whole.slice(-OUTPUT_TAIL_LENGTH)}`;
  const aimed = head.aimed ?? tail?.aimed;
  return {
    text,
    chars: captured.chars,
    empty: captured.empty,
    truncated: captured.truncated,
    zeroCount: captured.zeroCount,
    ...(aimed !== undefined ? { aimed } : {}),
  };
}

/** The text of a tool's output: a string as is, text content blocks joined, anything else as JSON. */
function outputText(output: unknown): string {
  if (output === undefined || output === null) return "";
  if (typeof output === "string") return output;
  if (Array.isArray(output) && output.length > 0 && output.every((b) => isRecord(b) && typeof b.type === "string")) {
    return output
      .map((b: Record<string, unknown>) =>
        b.type === "text" && typeof b.text === "string" ? b.text : `[${String(b.type)}]`,
      )
      .join("\n");
  }
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return String(output);
  }
}

/** Blank, `null`, `[]`, `{}`, `""`, or an object with lists that are all empty. */
function isEmptyOutput(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed === "") return true;
  if (trimmed.length > MAX_JSON_CHECK || !/^[[{"n]/.test(trimmed)) return false;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return false;
  }
  if (value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (!isRecord(value)) return false;
  const values = Object.values(value);
  if (values.length === 0) return true;
  const lists = values.filter(Array.isArray);
  return lists.length > 0 && lists.every((l) => l.length === 0);
}

/** What the recorder reads of a `ToolMessage`. */
export interface ToolMessageLike {
  status?: unknown;
  tool_call_id?: unknown;
  name?: unknown;
  content?: unknown;
}

/** A `ToolMessage` (a class instance or its plain form). */
export function isToolMessage(value: unknown): value is ToolMessageLike & Record<string, unknown> {
  return isRecord(value) && messageRole(value) === "tool";
}

/** ToolMessages in a chain's outputs: a message, a list, `{ messages }`, or a Command's `update`. */
export function toolMessagesIn(outputs: unknown, depth = 0): ToolMessageLike[] {
  if (depth > 3 || !isRecord(outputs)) return [];
  if (Array.isArray(outputs)) return outputs.flatMap((o) => toolMessagesIn(o, depth + 1));
  if (isToolMessage(outputs)) return [outputs];
  const out: ToolMessageLike[] = [];
  if (Array.isArray(outputs.messages)) out.push(...toolMessagesIn(outputs.messages, depth + 1));
  if (isRecord(outputs.update)) out.push(...toolMessagesIn(outputs.update, depth + 1));
  return out;
}
