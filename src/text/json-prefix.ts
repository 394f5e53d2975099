/**
 * The start of a long JSON text read as a value, for a tool input too large to parse whole within
 * the masking budget (`MASK_BUDGET.maxInputChars`): the containers still open where the reading
 * stops are closed, and a value cut off there is replaced by {@link Unread}. Pure; time linear in
 * the characters read, never in the text's length.
 */
import { Unread } from "./budget.js";

/** What {@link parseJsonPrefix} read. */
export interface JsonPrefix {
  value: unknown;
  /** True when the text went on past the characters read: `value` holds its start only. */
  cut: boolean;
}

type Frame = { list: unknown[] } | { record: Record<string, unknown>; key: string | undefined };

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const SPACE = /[ \t\r\n]*/y;
const NUMBER_TAIL = /[.eE+\-\d]*$/y;

/**
 * The value of the first `maxChars` characters of `text` read as JSON (all of it when shorter);
 * `undefined` when they are not the start of a JSON value (a syntax error before the cut).
 */
export function parseJsonPrefix(whole: string, maxChars: number): JsonPrefix | undefined {
  const cut = whole.length > maxChars;
  // Only the part read is scanned (a regex never runs on past it).
  const text = cut ? whole.slice(0, maxChars) : whole;
  const end = text.length;
  const stack: Frame[] = [];
  let root: unknown = Unread.instance;
  let i = 0;
  let expect: "value" | "key" | "after" = "value";
  const skipSpace = (): void => {
    SPACE.lastIndex = i;
    SPACE.exec(text);
    i = Math.min(SPACE.lastIndex, end);
  };
  const place = (value: unknown): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) root = value;
    else if ("list" in top) top.list.push(value);
    else if (top.key !== undefined) {
      top.record[top.key] = value;
      top.key = undefined;
    }
  };
  /** The string starting at `i` (a `"`), decoded; `undefined` when malformed. Sets `i` past it. */
  const readString = (): string | undefined => {
    let j = i + 1;
    while (j < end && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    const closed = j < end;
    const raw = closed
      ? text.slice(i, j + 1)
      : `${text.slice(i, Math.min(j, end)).replace(/\\(?:u[0-9a-fA-F]{0,3})?$/, "")}"`;
    i = closed ? j + 1 : end;
    try {
      return JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  };
  while (true) {
    skipSpace();
    if (i >= end) break;
    const c = text[i];
    const top = stack[stack.length - 1];
    if (expect === "after") {
      if (top === undefined) break;
      if (c === ",") {
        expect = "list" in top ? "value" : "key";
        i += 1;
      } else if ((c === "]" && "list" in top) || (c === "}" && !("list" in top))) {
        stack.pop();
        i += 1;
      } else return undefined;
    } else if (expect === "key") {
      if (c === "}" && top !== undefined && !("list" in top)) {
        stack.pop();
        expect = "after";
        i += 1;
        continue;
      }
      if (c !== '"' || top === undefined || "list" in top) return undefined;
      const key = readString();
      if (key === undefined) return undefined;
      skipSpace();
      if (i >= end) break;
      if (text[i] !== ":") return undefined;
      i += 1;
      top.key = key;
      expect = "value";
    } else if (c === "{" || c === "[") {
      const container = c === "{" ? {} : [];
      place(container);
      stack.push(Array.isArray(container) ? { list: container } : { record: container, key: undefined });
      expect = c === "{" ? "key" : "value";
      i += 1;
    } else if (c === "]" && top !== undefined && "list" in top && top.list.length === 0) {
      stack.pop();
      expect = "after";
      i += 1;
    } else if (c === '"') {
      const value = readString();
      if (value === undefined) return undefined;
      place(value);
      expect = "after";
    } else {
      NUMBER.lastIndex = i;
      const number = NUMBER.exec(text);
      const literal = ["true", "false", "null"].find((l) => text.startsWith(l, i));
      NUMBER_TAIL.lastIndex = NUMBER.lastIndex;
      // A number whose rest is cut off by the end of what is read ("20190." of "20190.91").
      const numberCut = number !== null && cut && NUMBER_TAIL.test(text);
      if (number !== null && !numberCut) {
        place(Number(number[0]));
        i = NUMBER.lastIndex;
      } else if (literal !== undefined && i + literal.length <= end) {
        place(literal === "null" ? null : literal === "true");
        i += literal.length;
      } else if (cut && (number !== null || end - i < 5)) {
        // A number or a literal cut off by the end of what is read: the values past here are unread.
        break;
      } else return undefined;
      expect = "after";
    }
  }
  if (!cut && (stack.length > 0 || root === Unread.instance)) return undefined;
  if (cut && expect === "value") place(Unread.instance);
  return { value: root, cut };
}
