import { MASK_BUDGET, Unread } from "./budget.js";
import { commonWords } from "./vocabulary.js";
import { splitWords } from "./tokenize.js";

/**
 * The shapes of argument values (what a record keeps instead of a value) and the normalisation
 * fingerprints use. See `mask.ts` for the whole picture.
 */

/** The JSON kind of an argument value, as an argument shape records it. */
export type ArgKind = "string" | "number" | "boolean" | "null" | "array" | "object";

/** What is kept of one argument instead of its value (the ledger's `ArgShape` row has this shape). */
export interface MaskedArg {
  name: string;
  kind: ArgKind;
  /** The format with every value part masked. */
  shape: string;
}

/** Hex characters kept of each HMAC (64 bits: collisions are negligible at ledger scale). */
export const FINGERPRINT_HEX_LENGTH = 16;
/** Shortest token fingerprinted or masked as a value. */
export const MIN_TOKEN_LENGTH = 3;
/** Shortest whole value (normalised) fingerprinted or masked as a value. */
export const MIN_VALUE_LENGTH = 2;
/** Longest run of adjacent text tokens fingerprinted, so multi-token values are found. */
export const MAX_NGRAM = 4;
/** Longest string still considered an id-like value (longer ones are `<text>`). */
const MAX_ID_LENGTH = 64;
/** Longest shape kept for an array or object argument. */
const MAX_SHAPE_LENGTH = 160;
/** How deep nested objects and arrays are described or walked. */
const MAX_DEPTH = 3;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+$/i;
const TOKEN = /[\p{L}\p{N}]+/gu;
/** Characters an id-like string is made of: letters, digits and these separators. */
const ID_CHARS = /^[A-Za-z0-9\-_./:#]+$/;
const ID_SEPARATOR = /([\-_./:#])/;
/** Digits with punctuation and spaces only: phone numbers, amounts, dates, times. */
const DIGITS_AND_PUNCT = /^[\d\s+().,:/\-]+$/;
const IDENTIFIER_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

/** Normalise a token or a phrase the way fingerprints do (see the module doc). */
export function normalise(text: string): string {
  return tokens(text).join(" ");
}

/** The normalised tokens of a text: NFKC, lower case, runs of letters and digits. */
export function tokens(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(TOKEN) ?? [];
}

/**
 * The masked shape of one value: its format with every value part replaced.
 *
 * - numbers `<number>`, booleans `<boolean>`, null/undefined `<null>`, `""` `<empty>`;
 * - emails `<email>`, URLs `<url>`;
 * - digits with punctuation only (dates, amounts, phones): each digit `#`
 *   (`"2024-01-31"` → `"####-##-##"`, `"4821.77"` → `"####.##"`);
 * - id-like strings (no spaces, at most 64 chars, at least one digit, letters/digits and
 *   `- _ . / : #`): separators kept, digit runs `#`, short fixed letter parts kept (at most 4
 *   letters, or at most 6 upper-case ones: `ORD`, `cus`, `INV`, `v`), other letter runs and
 *   letters mixed with digits `*` per character (`"ORD-12345"` → `"ORD-#####"`,
 *   `"cus_A1b2"` → `"cus_****"`, `"v2.3.1"` → `"v#.#.#"`);
 * - anything else (free text, names, single words) `<text>`;
 * - arrays `[shape]` (distinct element shapes joined by `|`), objects `{key:shape,…}` (keys
 *   that are not plain identifiers shown as `<key>`), both bounded in depth and length.
 */
export function shapeOf(value: unknown): string {
  return truncate(shapeAt(value, 0));
}

function shapeAt(value: unknown, depth: number, seen: Set<object> = new Set()): string {
  if (value === null || value === undefined) return "<null>";
  if (typeof value === "boolean") return "<boolean>";
  if (typeof value === "number" || typeof value === "bigint") return "<number>";
  if (typeof value === "string") return stringShape(value);
  if (typeof value === "function") return "<function>";
  if (typeof value === "symbol") return "<symbol>";
  if (typeof value !== "object") return "<text>";
  if (value === Unread.instance) return "…";
  if (seen.has(value)) return "<circular>";
  const special = specialShape(value);
  if (special !== undefined) return special;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      if (value.length === 0) return "[]";
      if (depth >= MAX_DEPTH) return "[…]";
      const shapes = [...new Set(value.slice(0, 20).map((v) => shapeAt(v, depth + 1, seen)))];
      return `[${shapes.slice(0, 3).join("|")}${shapes.length > 3 ? "|…" : ""}]`;
    }
    const keys = Object.keys(value);
    if (keys.length === 0) return "{}";
    if (depth >= MAX_DEPTH) return "{…}";
    const parts = keys
      .slice(0, 8)
      .map(
        (k) =>
          `${IDENTIFIER_KEY.test(k) && isFieldName(k) ? k : "<key>"}:${shapeAt((value as Record<string, unknown>)[k], depth + 1, seen)}`,
      );
    return `{${parts.join(",")}${keys.length > 8 ? ",…" : ""}}`;
  } catch {
    // A getter or a proxy that throws: the value cannot be read, so there is nothing to describe.
    return "<unreadable>";
  } finally {
    seen.delete(value);
  }
}

/** Shapes of objects that are not plain records or arrays. */
function specialShape(value: object): string | undefined {
  if (value instanceof Date) return "<date>";
  if (value instanceof Map) return "<map>";
  if (value instanceof Set) return "<set>";
  if (value instanceof Error) return "<error>";
  if (value instanceof RegExp) return "<regexp>";
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return "<bytes>";
  return undefined;
}

/**
 * A key that names a field rather than holding a value: a lower-case identifier (`snake_case`,
 * `kebab-case` or `camelCase`) whose words are all common words (`billing_address`, `zip`,
 * `orderId`; words of one or two letters count, as `x`, `id`, `mb`). `Margaret_Whitfield`,
 * `margaret_whitfield`, `DE89370400440532013000` are values.
 */
export function isFieldName(key: string): boolean {
  if (!/^[a-z][a-z0-9]*(?:[_\-][a-z0-9]+)*$/.test(key) && !/^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/.test(key))
    return false;
  const words = commonWords();
  return splitWords(key).every((w) => words.has(w) || /^[a-z]{1,2}$/.test(w) || /^\d{1,3}$/.test(w));
}

/** The shape of one string value (see {@link shapeOf}). */
export function stringShape(raw: string): string {
  const value = raw.trim();
  if (value === "") return "<empty>";
  if (EMAIL.test(value)) return "<email>";
  if (URL_LIKE.test(value)) return "<url>";
  if (value.length > MAX_ID_LENGTH) return "<text>";
  if (/\d/.test(value) && DIGITS_AND_PUNCT.test(value)) return value.replace(/\d/g, "#");
  if (/\d/.test(value) && ID_CHARS.test(value)) return idShape(value);
  return "<text>";
}

function idShape(value: string): string {
  return value
    .split(ID_SEPARATOR)
    .map((segment, i) => (i % 2 === 1 ? segment : segmentShape(segment, i === 0)))
    .join("");
}

/** One part of an id-like value; `leading` for the value's first part, where a prefix sits. */
function segmentShape(segment: string, leading: boolean): string {
  if (segment === "") return "";
  if (/^\d+$/.test(segment)) return "#".repeat(segment.length);
  if (/^[A-Za-z]+$/.test(segment)) return letterShape(segment, leading);
  const prefixed = /^([A-Za-z]+)(\d+)$/.exec(segment);
  if (prefixed) return letterShape(prefixed[1], leading) + "#".repeat(prefixed[2].length);
  const suffixed = /^(\d+)([A-Za-z]+)$/.exec(segment);
  if (suffixed) return "#".repeat(suffixed[1].length) + letterShape(suffixed[2], false);
  return "*".repeat(segment.length);
}

/**
 * Letters kept as format: a short prefix at the start of the value (`ORD`, `cus`, `v`), and
 * elsewhere at most two letters (`T` and `Z` of a timestamp). A longer run after the start is
 * value, however short: a piece of a key echoed as `2VZHSQ` must not keep its letters.
 */
function letterShape(letters: string, leading: boolean): string {
  const kept = leading ? isFixedPart(letters) : letters.length <= 2;
  return kept ? letters : "*".repeat(letters.length);
}

/** A letter run short enough to be format (a prefix like `ORD`, `cus`, `v`) rather than value. */
function isFixedPart(letters: string): boolean {
  return letters.length <= 4 || (letters.length <= 6 && letters === letters.toUpperCase());
}

function jsonKind(value: unknown): ArgKind {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "boolean";
    case "object":
      return "object";
    default:
      return "string";
  }
}

/**
 * Names, JSON kinds and masked shapes of a call's arguments, in argument order. Never values. At
 * most {@link MASK_BUDGET}`.maxArgs` arguments are described, each name cut to `maxArgNameChars`;
 * past them one last entry named `…` counts the rest (`<N more>`), so a record stays small.
 */
export function maskArgs(args: Record<string, unknown>): MaskedArg[] {
  const out: MaskedArg[] = [];
  const names = safeKeys(args);
  for (const name of names.slice(0, MASK_BUDGET.maxArgs)) {
    const kept =
      name.length > MASK_BUDGET.maxArgNameChars ? `${name.slice(0, MASK_BUDGET.maxArgNameChars - 1)}…` : name;
    let value: unknown;
    try {
      value = args[name];
    } catch {
      out.push({ name: kept, kind: "string", shape: "<unreadable>" });
      continue;
    }
    out.push({ name: kept, kind: jsonKind(value), shape: shapeOf(value) });
  }
  if (names.length > MASK_BUDGET.maxArgs)
    out.push({ name: "…", kind: "object", shape: `<${names.length - MASK_BUDGET.maxArgs} more>` });
  return out;
}

function safeKeys(value: object): string[] {
  try {
    return Object.keys(value);
  } catch {
    return [];
  }
}

function truncate(shape: string): string {
  return shape.length > MAX_SHAPE_LENGTH ? `${shape.slice(0, MAX_SHAPE_LENGTH - 1)}…` : shape;
}

// ---------------------------------------------------------------- values
