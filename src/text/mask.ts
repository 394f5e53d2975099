import { createHmac } from "node:crypto";
import { clip } from "../internal.js";
import { findPrivateData, type NamedDetector, PII_DETECTORS } from "./detectors.js";
import { normalizeText, skeletonOfNormalized } from "./normalize.js";
import { splitWords } from "./tokenize.js";
import { commonWords } from "./vocabulary.js";

/**
 * Masking and fingerprinting of argument values. Pure functions: nothing here keeps state or
 * reads a store.
 *
 * Two things are kept of an argument instead of its value:
 *
 * - its **shape**: the format with every value part masked (`"ORD-12345"` → `"ORD-#####"`,
 *   `"bob@example.com"` → `"<email>"`, `"Sarah"` → `"<text>"`), which is what a lesson may say;
 * - its **fingerprints**: keyed hashes of the value and of its tokens, which let the vet ask
 *   "does this proposed text contain an argument value?" without the ledger holding the value.
 *
 * ## Normalisation (both sides use it; change it and old fingerprints stop matching)
 *
 * 1. Unicode NFKC, then lower case.
 * 2. Tokens are the maximal runs of letters and digits (`\p{L}` / `\p{N}`); everything else
 *    separates tokens. `"ORD-12345"` → `["ord", "12345"]`, `"bob@example.com"` →
 *    `["bob", "example", "com"]`, `4821.77` → `["4821", "77"]`.
 * 3. A normalised phrase is its tokens joined by one space: `"ORD-12345"`, `"ord 12345"` and
 *    `"Ord_12345"` all normalise to `"ord 12345"`.
 * 4. `fingerprint(x, key)` = first {@link FINGERPRINT_HEX_LENGTH} hex chars of
 *    HMAC-SHA256(key, normalise(x)).
 *
 * A value contributes the fingerprint of its whole normalised form (when at least
 * {@link MIN_VALUE_LENGTH} chars) and of each of its *value tokens*: tokens of at least
 * {@link MIN_TOKEN_LENGTH} chars that are not part of the value's shape (the `ord` of
 * `"ORD-12345"` is format: a note may say the prefix is required). A text contributes the
 * fingerprints of its tokens, of every run of 2 to {@link MAX_NGRAM} adjacent tokens, and of the
 * whole text. A text contains a value exactly when the two sets intersect. Both sides also add the
 * fingerprints of their gate-normalized, confusables-folded forms where those differ (see
 * `normalize.ts`), so `Sаrah` with a Cyrillic `а` still meets `Sarah`; the plain forms above are
 * unchanged, so fingerprints already stored keep matching.
 *
 * ## Which values (any depth, any length, keys too)
 *
 * The values of an argument are its strings and finite numbers (BigInts too) at any depth and any
 * array index, the messages of Error values, and the object keys that are not field names (a key
 * such as `Margaret_Whitfield` or an IBAN used as a key is a value; `billing_address` is a field
 * name: lower-case words of the common vocabulary). The keys of the arguments object itself are the
 * tool's argument names, never values. Cycles are visited once; functions, symbols and unreadable
 * properties have no value text. Past {@link DEFAULT_MASK_OPTIONS}`.maxNodes` nodes, nothing is cut
 * off: the rest of the argument counts as one text whose every token is a value token.
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

function stringShape(raw: string): string {
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

/** Names, JSON kinds and masked shapes of a call's arguments, in argument order. Never values. */
export function maskArgs(args: Record<string, unknown>): MaskedArg[] {
  const out: MaskedArg[] = [];
  for (const name of safeKeys(args)) {
    let value: unknown;
    try {
      value = args[name];
    } catch {
      out.push({ name, kind: "string", shape: "<unreadable>" });
      continue;
    }
    out.push({ name, kind: jsonKind(value), shape: shapeOf(value) });
  }
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

/** Options of the value walk and of text masking. */
export interface MaskOptions {
  /**
   * Nodes (values, keys, containers) of one `values` argument described leaf by leaf. Past it the
   * rest still counts, as one text whose every token is a value token: a budget, never a cut-off.
   * @default 10000
   */
  maxNodes?: number;
  /**
   * The detectors masked in free text, most specific first (see `detectors.ts`).
   * @default PII_DETECTORS
   */
  detectors?: readonly NamedDetector[];
}

/** The defaults of {@link MaskOptions}. */
export const DEFAULT_MASK_OPTIONS: Readonly<Required<MaskOptions>> = Object.freeze({
  maxNodes: 10_000,
  detectors: PII_DETECTORS,
});

/** The texts a `values` argument holds (see the module doc): leaves, value keys, and the bulk past the budget. */
export interface CollectedValues {
  /** String and number leaves, Error messages. */
  leaves: string[];
  /** Object keys that are values, not field names. */
  keys: string[];
  /** Leaves and keys met past `maxNodes`: their tokens are value tokens, nothing else. */
  bulk: string[];
}

interface Pending {
  value: unknown;
  /** True for the arguments object (or a list of them): its keys are argument names. */
  argsLevel: boolean;
}

/**
 * The texts of every value in `values`, at any depth and any array length, iteratively (a deep
 * value cannot overflow the stack), each object once (cycles end), never throwing.
 */
export function collectValues(values: unknown, maxNodes: number = DEFAULT_MASK_OPTIONS.maxNodes): CollectedValues {
  const out: CollectedValues = { leaves: [], keys: [], bulk: [] };
  const seen = new Set<object>();
  const stack: Pending[] = [{ value: values, argsLevel: true }];
  let nodes = 0;
  const text = (t: string, into: string[]): void => {
    if (t.trim() === "") return;
    (nodes > maxNodes ? out.bulk : into).push(t);
  };
  while (stack.length > 0) {
    const { value, argsLevel } = stack.pop() as Pending;
    nodes += 1;
    if (typeof value === "string") text(value, out.leaves);
    else if (typeof value === "number") {
      if (Number.isFinite(value)) text(String(value), out.leaves);
    } else if (typeof value === "bigint") text(value.toString(), out.leaves);
    else if (typeof value === "object" && value !== null && !seen.has(value)) {
      seen.add(value);
      const children: Pending[] = [];
      try {
        if (Array.isArray(value)) {
          for (const item of value) children.push({ value: item, argsLevel });
        } else if (value instanceof Map) {
          for (const [k, v] of value) children.push({ value: k, argsLevel: false }, { value: v, argsLevel: false });
        } else if (value instanceof Set) {
          for (const item of value) children.push({ value: item, argsLevel: false });
        } else if (value instanceof Error) {
          text(value.message, out.leaves);
        } else if (!(
          value instanceof Date ||
          value instanceof RegExp ||
          ArrayBuffer.isView(value) ||
          value instanceof ArrayBuffer
        )) {
          for (const key of Object.keys(value)) {
            nodes += 1;
            if (!argsLevel && !isFieldName(key)) text(key, out.keys);
            children.push({ value: (value as Record<string, unknown>)[key], argsLevel: false });
          }
        }
      } catch {
        // A throwing getter or proxy: what could not be read cannot be written anywhere either.
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  return out;
}

/** What one value contributes to fingerprints and to text masking. */
export interface ValueTerms {
  /** The value as written (trimmed), for masking it where it appears verbatim. */
  raw: string;
  /** Its normalised whole form, or undefined when shorter than {@link MIN_VALUE_LENGTH}. */
  whole: string | undefined;
  /** Its value tokens: at least {@link MIN_TOKEN_LENGTH} chars, not part of its shape. */
  tokens: string[];
}

/**
 * The scalar leaves (strings and numbers) of a value, at any depth and array length, with the
 * object keys that are values (see {@link collectValues}). `out` is appended to and returned.
 * The third parameter is kept for callers of the old signature; the walk is no longer bounded by depth.
 */
export function scalarLeaves(value: unknown, out: string[] = [], _depth = 0): string[] {
  const collected = collectValues(value);
  out.push(...collected.leaves, ...collected.keys, ...collected.bulk);
  return out;
}

/** The terms of one scalar value (a string, or a number's decimal string). */
export function valueTerms(value: string): ValueTerms {
  const raw = value.trim();
  const all = tokens(raw);
  const whole = all.join(" ");
  const format = new Set(tokens(stringShape(raw).replace(/<[a-z]+>/g, " ")));
  return {
    raw,
    whole: whole.length >= MIN_VALUE_LENGTH ? whole : undefined,
    tokens: [...new Set(all.filter((t) => t.length >= MIN_TOKEN_LENGTH && !format.has(t)))],
  };
}

/** The terms of a key that is a value: its common words are not (a key `customer_Whitfield` gives `whitfield`). */
function keyTerms(key: string): ValueTerms {
  const terms = valueTerms(key);
  const words = commonWords();
  return { ...terms, tokens: terms.tokens.filter((t) => !words.has(t)) };
}

/** A token as the masker compares it: lower case, confusables folded (ASCII takes the short way). */
function fold(token: string): string {
  return skeletonOfNormalized(token);
}

/** The gate's forms of a value text that differ from the plain one: normalized, and folded. */
function variants(text: string): string[] {
  const normalized = normalizeText(text);
  // For ASCII the fold is lower case, which the tokens already are: no new form.
  const folded = NON_ASCII.test(normalized) ? skeletonOfNormalized(normalized) : normalized;
  return [...new Set([normalized, folded])].filter((v) => v !== text);
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Every term of `values`, in the plain form and the gate's forms. */
function allTerms(values: unknown, maxNodes: number): { terms: ValueTerms[]; bulkTokens: string[] } {
  const collected = collectValues(values, maxNodes);
  const terms: ValueTerms[] = [];
  for (const leaf of collected.leaves) for (const form of [leaf, ...variants(leaf)]) terms.push(valueTerms(form));
  for (const key of collected.keys) for (const form of [key, ...variants(key)]) terms.push(keyTerms(form));
  const bulkTokens: string[] = [];
  for (const text of collected.bulk) {
    for (const form of [text, ...variants(text)]) {
      for (const t of tokens(form)) if (t.length >= MIN_TOKEN_LENGTH) bulkTokens.push(t);
    }
  }
  return { terms, bulkTokens };
}

// ---------------------------------------------------------------- fingerprints

/**
 * Keyed hash of a token or phrase: HMAC-SHA256 over its normalised form, truncated to
 * {@link FINGERPRINT_HEX_LENGTH} hex chars. `fingerprint("ORD-12345", k) ===
 * fingerprint("ord 12345", k)`.
 */
export function fingerprint(token: string, key: string): string {
  return hmac(normalise(token), key);
}

/** Fingerprints already computed, by normalised text. Pass one to reuse work within a batch. */
export type FingerprintMemo = Map<string, string>;

const keyBuffers = new Map<string, Buffer>();

function keyBuffer(key: string): Buffer {
  let buffer = keyBuffers.get(key);
  if (buffer === undefined) {
    if (keyBuffers.size >= 8) keyBuffers.clear();
    buffer = Buffer.from(key, "utf8");
    keyBuffers.set(key, buffer);
  }
  return buffer;
}

function hmac(normalised: string, key: string, memo?: FingerprintMemo): string {
  const known = memo?.get(normalised);
  if (known !== undefined) return known;
  const digest = createHmac("sha256", keyBuffer(key)).update(normalised).digest("hex").slice(0, FINGERPRINT_HEX_LENGTH);
  memo?.set(normalised, digest);
  return digest;
}

/**
 * Fingerprints of every argument value (at any depth, keys that are values too; see the module
 * doc): of each whole value and of each of its value tokens (see {@link valueTerms}), in the plain
 * and the gate's normalized and folded forms. Sorted, without repeats. A `memo` shared across the
 * calls of a batch saves recomputing repeated values (it holds normalised values: keep it no
 * longer than the batch).
 */
export function valueFingerprints(
  args: Record<string, unknown>,
  key: string,
  memo?: FingerprintMemo,
  options: MaskOptions = {},
): string[] {
  const { terms, bulkTokens } = allTerms(args, options.maxNodes ?? DEFAULT_MASK_OPTIONS.maxNodes);
  const texts = new Set<string>(bulkTokens);
  for (const t of terms) {
    if (t.whole !== undefined) texts.add(t.whole);
    for (const token of t.tokens) texts.add(token);
  }
  const out = new Set<string>();
  for (const text of texts) out.add(hmac(text, key, memo));
  return [...out].sort();
}

/** The n-gram fingerprints of one token list, into `out`. */
function addTextFingerprints(toks: readonly string[], key: string, out: Set<string>): void {
  for (let i = 0; i < toks.length; i += 1) {
    for (let n = 1; n <= MAX_NGRAM && i + n <= toks.length; n += 1) {
      out.add(hmac(toks.slice(i, i + n).join(" "), key));
    }
  }
  if (toks.length > 0) out.add(hmac(toks.join(" "), key));
}

/**
 * Fingerprints of a text: each token, each run of 2..{@link MAX_NGRAM} adjacent tokens, and
 * the whole text, in the plain form and in the gate's normalized, folded form. `textFingerprints(t,
 * k)` intersects `valueFingerprints(args, k)` exactly when `t` contains one of the values (or one
 * of their value tokens).
 */
export function textFingerprints(text: string, key: string): string[] {
  const out = new Set<string>();
  const plain = tokens(text);
  addTextFingerprints(plain, key, out);
  const folded = tokens(skeletonOfNormalized(normalizeText(text)));
  if (folded.join(" ") !== plain.join(" ")) addTextFingerprints(folded, key, out);
  return [...out];
}

/**
 * Whether a text holds an argument value of any of `rows` (records that keep their values'
 * keyed fingerprints): their fingerprints gathered once, then {@link containsFingerprint}.
 */
export function valueCheckOf(
  rows: Iterable<{ readonly fingerprints: readonly string[] }>,
  key: string,
): (text: string) => boolean {
  const fingerprints = new Set<string>();
  for (const row of rows) for (const f of row.fingerprints) fingerprints.add(f);
  return (text) => fingerprints.size > 0 && containsFingerprint(text, fingerprints, key);
}

/** True when a text contains any value whose fingerprints are given. */
export function containsFingerprint(text: string, fingerprints: Iterable<string>, key: string): boolean {
  const known = fingerprints instanceof Set ? (fingerprints as Set<string>) : new Set(fingerprints);
  return textFingerprints(text, key).some((f) => known.has(f));
}

// ---------------------------------------------------------------- text masking

const TEXT_TOKEN = /[\p{L}\p{N}]+/gu;
/** Most separator characters between two tokens of one value found in a text ("ORD - 12"). */
const MAX_GAP = 3;
/** Longest value, in tokens, matched as a phrase (longer ones are masked token by token). */
const MAX_PHRASE_TOKENS = 8;
/** Length of the pieces of long value tokens kept to find partial echoes ("…yUiOpAsDf"). */
const ECHO_GRAM = 6;
/** Value tokens at least this long are looked for in part (keys, long ids). */
const MIN_ECHO_SOURCE = 10;
/** Characters of one value token whose pieces are looked for (a key is far shorter). */
const MAX_ECHO_SOURCE = 4096;
/** Pieces kept over all of a masker's values. */
const MAX_ECHO_GRAMS = 200_000;

/** A masked text and what was masked in it, by kind (`value`, `email`, `api_key` ...), never the text itself. */
export interface MaskResult {
  text: string;
  masked: string[];
}

/** Masks texts against a fixed set of argument values; see {@link maskText}. */
export type TextMasker = (text: string) => string;

/** Like {@link TextMasker}, and says what it masked. */
export type Masker = (text: string) => MaskResult;

interface TextToken {
  start: number;
  end: number;
  norm: string;
}

/** The values of a masker, folded, ready to match text tokens against. */
interface PreparedValues {
  wholes: Set<string>;
  tokens: Set<string>;
  grams: Set<string>;
  longest: number;
  longestEchoSource: number;
}

function prepare(values: unknown, maxNodes: number): PreparedValues {
  const prepared: PreparedValues = {
    wholes: new Set(),
    tokens: new Set(),
    grams: new Set(),
    longest: 1,
    longestEchoSource: 0,
  };
  if (values === undefined) return prepared;
  const { terms, bulkTokens } = allTerms(values, maxNodes);
  let gramBudget = MAX_ECHO_GRAMS;
  const addToken = (raw: string): void => {
    const t = fold(raw);
    prepared.tokens.add(t);
    if (t.length < MIN_ECHO_SOURCE) return;
    // Pieces of keys and ids are looked for; a blob's pieces past the budget are not (its whole
    // and its tokens still are): the set of pieces stays bounded, so preparing stays linear.
    const end = Math.min(t.length, MAX_ECHO_SOURCE);
    prepared.longestEchoSource = Math.max(prepared.longestEchoSource, end);
    for (let i = 0; i + ECHO_GRAM <= end && gramBudget > 0; i++, gramBudget--)
      prepared.grams.add(t.slice(i, i + ECHO_GRAM));
  };
  for (const t of terms) {
    if (t.whole !== undefined) {
      const folded = t.whole.split(" ").map(fold);
      prepared.wholes.add(folded.join(" "));
      prepared.longest = Math.max(prepared.longest, Math.min(MAX_PHRASE_TOKENS, folded.length));
    }
    for (const token of t.tokens) addToken(token);
  }
  for (const token of bulkTokens) addToken(token);
  return prepared;
}

/** True when a text token is a piece of a long value token (a key echoed in part), not a word. */
function isEcho(token: string, values: PreparedValues): boolean {
  if (token.length < ECHO_GRAM || token.length > values.longestEchoSource) return false;
  for (let i = 0; i + ECHO_GRAM <= token.length; i++)
    if (!values.grams.has(token.slice(i, i + ECHO_GRAM))) return false;
  return !commonWords().has(token);
}

/**
 * A masker for many texts against the same values (a run's error messages and its request): the
 * values are prepared once. See {@link maskText} for what is masked.
 */
export function createMasker(values?: unknown, options: MaskOptions = {}): Masker {
  const detectors = options.detectors ?? DEFAULT_MASK_OPTIONS.detectors;
  const v = prepare(values, options.maxNodes ?? DEFAULT_MASK_OPTIONS.maxNodes);
  const hasValues = v.wholes.size > 0 || v.tokens.size > 0;
  const isValue = (phrase: string, n: number): boolean =>
    v.wholes.has(phrase) || (n === 1 && (v.tokens.has(phrase) || isEcho(phrase, v)));

  const maskPlain = (segment: string, masked: string[]): string => {
    if (!hasValues) return segment.replace(/\d/g, "#");
    const toks: TextToken[] = [];
    for (const m of segment.matchAll(TEXT_TOKEN))
      toks.push({ start: m.index, end: m.index + m[0].length, norm: fold(m[0]) });
    let out = "";
    let kept = 0;
    for (let i = 0; i < toks.length;) {
      let matched = 0;
      for (let n = Math.min(v.longest, toks.length - i); n >= 1 && matched === 0; n -= 1) {
        let phrase = toks[i].norm;
        let contiguous = true;
        for (let j = i + 1; j < i + n && contiguous; j += 1) {
          if (toks[j].start - toks[j - 1].end > MAX_GAP) contiguous = false;
          phrase += ` ${toks[j].norm}`;
        }
        if (contiguous && isValue(phrase, n)) matched = n;
      }
      if (matched === 0) {
        i += 1;
        continue;
      }
      out += `${segment.slice(kept, toks[i].start).replace(/\d/g, "#")}<value>`;
      masked.push("value");
      kept = toks[i + matched - 1].end;
      i += matched;
    }
    return out + segment.slice(kept).replace(/\d/g, "#");
  };

  return (raw) => {
    const text = normalizeText(raw);
    const masked: string[] = [];
    let out = "";
    let last = 0;
    for (const m of findPrivateData(text, detectors)) {
      out += maskPlain(text.slice(last, m.start), masked) + m.placeholder;
      masked.push(m.name);
      last = m.end;
    }
    return { text: out + maskPlain(text.slice(last), masked), masked };
  };
}

/**
 * Only the detectors' spans of a text, each replaced by its placeholder (`<email>`, `<key>`,
 * `<phone>` ...); words and digits are kept. For a text whose words and numbers are its meaning (a
 * user's rule: "never refund more than 500"), where secrets and contact data must still never be
 * kept. The text is normalized first, as {@link maskText} does.
 */
export function maskPrivateData(
  raw: string,
  detectors: readonly NamedDetector[] = DEFAULT_MASK_OPTIONS.detectors,
): { text: string; masked: string[] } {
  const text = normalizeText(raw);
  const masked: string[] = [];
  let out = "";
  let last = 0;
  for (const m of findPrivateData(text, detectors)) {
    out += text.slice(last, m.start) + m.placeholder;
    masked.push(m.name);
    last = m.end;
  }
  return { text: out + text.slice(last), masked };
}

/** {@link createMasker} returning the masked text only. */
export function createTextMasker(values?: unknown, options?: MaskOptions): TextMasker {
  const mask = createMasker(values, options);
  return (text) => mask(text).text;
}

/**
 * Mask a free text (an error message, a user's request) for storage. The text is normalized first
 * (`normalize.ts`: what is stored is the normalized text), then:
 *
 * 1. every span a detector finds becomes its placeholder (`<email>`, `<url>`, `<key>`, `<secret>`,
 *    `<card>`, `<iban>`, `<phone>`, `<jwt>`, `<ip>`, `<mac>`, `<uuid>`, `<address>`, `<credentials>`);
 * 2. every argument value (as a phrase of its normalised tokens, so `ORD-12345`, `ord 12345` and
 *    `Ord_12345` all match; confusables folded, so a Cyrillic `а` does not hide one), every value
 *    token (see {@link valueTerms}) and every partial echo of a long value (six characters or
 *    more of a key) becomes `<value>`;
 * 3. every remaining digit becomes `#`.
 *
 * Matching uses the normalisation of the fingerprints, so a text is masked where the vet would
 * find a value. Time is linear in the text and the values (no backtracking on long tokens).
 *
 * `values` may be any argument object or list: see the module doc for what counts as a value.
 */
export function maskText(text: string, values?: unknown, options?: MaskOptions): string {
  return createMasker(values, options)(text).text;
}

/** Options of {@link maskRequest}. */
export interface MaskRequestOptions extends MaskOptions {
  /**
   * The run's argument values (any object or list of them).
   * @default undefined (detectors and digits only)
   */
  values?: unknown;
  /**
   * A masker already prepared for the run's values; used instead of `values` when given, so one
   * run's request, calls and errors are masked by one preparation.
   * @default undefined
   */
  masker?: Masker;
  /**
   * Longest request kept, in characters, after masking ("…" ends a cut one).
   * @default 2000
   */
  maxLength?: number;
}

/** The defaults of {@link MaskRequestOptions} that have one. */
export const DEFAULT_MASK_REQUEST_OPTIONS: Readonly<Required<Pick<MaskRequestOptions, "maxLength">>> = Object.freeze({
  maxLength: 2000,
});

/**
 * The one way a user's request is masked for the ledger, whichever record holds it (a turn, a
 * call, a route): {@link maskText} with the run's values, clipped to `maxLength`. Two records of
 * one request masked with the same values hold the same text.
 */
export function maskRequest(request: string, options: MaskRequestOptions = {}): string {
  const mask = options.masker ?? createMasker(options.values, options);
  return clip(mask(request).text, options.maxLength ?? DEFAULT_MASK_REQUEST_OPTIONS.maxLength);
}
