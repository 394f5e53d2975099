import { createHmac } from "node:crypto";

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
 * whole text. A text contains a value exactly when the two sets intersect.
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

function shapeAt(value: unknown, depth: number): string {
  if (value === null || value === undefined) return "<null>";
  if (typeof value === "boolean") return "<boolean>";
  if (typeof value === "number" || typeof value === "bigint") return "<number>";
  if (typeof value === "string") return stringShape(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (depth >= MAX_DEPTH) return "[…]";
    const shapes = [...new Set(value.slice(0, 20).map((v) => shapeAt(v, depth + 1)))];
    return `[${shapes.slice(0, 3).join("|")}${shapes.length > 3 ? "|…" : ""}]`;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return "{}";
    if (depth >= MAX_DEPTH) return "{…}";
    const parts = entries
      .slice(0, 8)
      .map(([k, v]) => `${IDENTIFIER_KEY.test(k) ? k : "<key>"}:${shapeAt(v, depth + 1)}`);
    return `{${parts.join(",")}${entries.length > 8 ? ",…" : ""}}`;
  }
  return "<text>";
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
    .map((segment, i) => (i % 2 === 1 ? segment : segmentShape(segment)))
    .join("");
}

function segmentShape(segment: string): string {
  if (segment === "") return "";
  if (/^\d+$/.test(segment)) return "#".repeat(segment.length);
  if (/^[A-Za-z]+$/.test(segment)) return letterShape(segment);
  const prefixed = /^([A-Za-z]+)(\d+)$/.exec(segment);
  if (prefixed) return letterShape(prefixed[1]) + "#".repeat(prefixed[2].length);
  const suffixed = /^(\d+)([A-Za-z]+)$/.exec(segment);
  if (suffixed) return "#".repeat(suffixed[1].length) + letterShape(suffixed[2]);
  return "*".repeat(segment.length);
}

function letterShape(letters: string): string {
  return isFixedPart(letters) ? letters : "*".repeat(letters.length);
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
  return Object.entries(args).map(([name, value]) => ({
    name,
    kind: jsonKind(value),
    shape: shapeOf(value),
  }));
}

function truncate(shape: string): string {
  return shape.length > MAX_SHAPE_LENGTH ? `${shape.slice(0, MAX_SHAPE_LENGTH - 1)}…` : shape;
}

// ---------------------------------------------------------------- value terms

/** What one value contributes to fingerprints and to text masking. */
export interface ValueTerms {
  /** The value as written (trimmed), for masking it where it appears verbatim. */
  raw: string;
  /** Its normalised whole form, or undefined when shorter than {@link MIN_VALUE_LENGTH}. */
  whole: string | undefined;
  /** Its value tokens: at least {@link MIN_TOKEN_LENGTH} chars, not part of its shape. */
  tokens: string[];
}

/** The scalar leaves (strings and numbers) of a value, walked to a bounded depth. */
export function scalarLeaves(value: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof value === "string") {
    if (value.trim() !== "") out.push(value);
  } else if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value !== "number" || Number.isFinite(value)) out.push(String(value));
  } else if (value !== null && typeof value === "object" && depth < MAX_DEPTH + 1) {
    const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
    for (const child of children.slice(0, 200)) scalarLeaves(child, out, depth + 1);
  }
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
 * Fingerprints of every argument value (strings and numbers, nested ones too): of each whole
 * value and of each of its value tokens (see {@link valueTerms}). Sorted, without repeats.
 * A `memo` shared across the calls of a batch saves recomputing repeated values (it holds
 * normalised values: keep it no longer than the batch).
 */
export function valueFingerprints(args: Record<string, unknown>, key: string, memo?: FingerprintMemo): string[] {
  const texts = new Set<string>();
  for (const leaf of scalarLeaves(args)) {
    const terms = valueTerms(leaf);
    if (terms.whole !== undefined) texts.add(terms.whole);
    for (const t of terms.tokens) texts.add(t);
  }
  const out = new Set<string>();
  for (const text of texts) out.add(hmac(text, key, memo));
  return [...out].sort();
}

/**
 * Fingerprints of a text: each token, each run of 2..{@link MAX_NGRAM} adjacent tokens, and
 * the whole text. `textFingerprints(t, k)` intersects `valueFingerprints(args, k)` exactly
 * when `t` contains one of the values (or one of their value tokens).
 */
export function textFingerprints(text: string, key: string): string[] {
  const toks = tokens(text);
  const out = new Set<string>();
  for (let i = 0; i < toks.length; i += 1) {
    for (let n = 1; n <= MAX_NGRAM && i + n <= toks.length; n += 1) {
      out.add(hmac(toks.slice(i, i + n).join(" "), key));
    }
  }
  if (toks.length > 0) out.add(hmac(toks.join(" "), key));
  return [...out];
}

/** True when a text contains any value whose fingerprints are given. */
export function containsFingerprint(text: string, fingerprints: Iterable<string>, key: string): boolean {
  const known = fingerprints instanceof Set ? (fingerprints as Set<string>) : new Set(fingerprints);
  return textFingerprints(text, key).some((f) => known.has(f));
}

// ---------------------------------------------------------------- text masking

const EMAIL_OR_URL = /([^\s@<>()"',;]+@[^\s@<>()"',;]+\.[A-Za-z]{2,})|(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s<>"']+/giu;
const TEXT_TOKEN = /[\p{L}\p{N}]+/gu;
/** Most separator characters between two tokens of one value found in a text ("ORD - 12"). */
const MAX_GAP = 3;
/** Longest value, in tokens, matched as a phrase (longer ones are masked token by token). */
const MAX_PHRASE_TOKENS = 8;

/** Masks texts against a fixed set of argument values; see {@link maskText}. */
export type TextMasker = (text: string) => string;

interface TextToken {
  start: number;
  end: number;
  norm: string;
}

/**
 * A masker for many texts against the same values (a run's error messages and its request):
 * the values are prepared once. See {@link maskText} for what is masked.
 */
export function createTextMasker(values?: unknown): TextMasker {
  const wholes = new Set<string>();
  const valueTokens = new Set<string>();
  let longest = 1;
  for (const leaf of values === undefined ? [] : scalarLeaves(values)) {
    const terms = valueTerms(leaf);
    if (terms.whole !== undefined) {
      wholes.add(terms.whole);
      longest = Math.max(longest, Math.min(MAX_PHRASE_TOKENS, terms.whole.split(" ").length));
    }
    for (const t of terms.tokens) valueTokens.add(t);
  }
  const isValue = (phrase: string, n: number) => wholes.has(phrase) || (n === 1 && valueTokens.has(phrase));

  const maskPlain = (segment: string): string => {
    if (wholes.size === 0 && valueTokens.size === 0) return segment.replace(/\d/g, "#");
    const toks: TextToken[] = [];
    for (const m of segment.matchAll(TEXT_TOKEN)) {
      toks.push({ start: m.index, end: m.index + m[0].length, norm: m[0].toLowerCase() });
    }
    let out = "";
    let kept = 0;
    for (let i = 0; i < toks.length;) {
      let matched = 0;
      for (let n = Math.min(longest, toks.length - i); n >= 1 && matched === 0; n -= 1) {
        let phrase = toks[i].norm;
        let contiguous = true;
        for (let j = i + 1; j < i + n; j += 1) {
          if (toks[j].start - toks[j - 1].end > MAX_GAP) contiguous = false;
          phrase += ` ${toks[j].norm}`;
        }
        if (contiguous && isValue(phrase, n)) matched = n;
      }
      if (matched === 0) {
        i += 1;
        continue;
      }
      out += segment.slice(kept, toks[i].start).replace(/\d/g, "#") + "<value>";
      kept = toks[i + matched - 1].end;
      i += matched;
    }
    return out + segment.slice(kept).replace(/\d/g, "#");
  };

  return (raw) => {
    const text = raw.normalize("NFKC");
    let out = "";
    let last = 0;
    for (const m of text.matchAll(EMAIL_OR_URL)) {
      out += maskPlain(text.slice(last, m.index)) + (m[1] !== undefined ? "<email>" : "<url>");
      last = m.index + m[0].length;
    }
    return out + maskPlain(text.slice(last));
  };
}

/**
 * Mask a free text (an error message, a user's request) for storage: emails `<email>`, URLs
 * `<url>`, every argument value (as a phrase of its normalised tokens, so `ORD-12345`,
 * `ord 12345` and `Ord_12345` all match) and every value token (see {@link valueTerms})
 * `<value>`, then every remaining digit `#`. Matching uses the normalisation of the
 * fingerprints, so a text is masked exactly where the vet would find a value.
 *
 * `values` may be any argument object or list: its string and number leaves are used.
 */
export function maskText(text: string, values?: unknown): string {
  return createTextMasker(values)(text);
}
