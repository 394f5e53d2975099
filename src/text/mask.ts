import { clip } from "../internal.js";
import { findPrivateData, type NamedDetector } from "./detectors.js";
import { normalizeText } from "./normalize.js";
import { allTerms, DEFAULT_MASK_OPTIONS, fold, MASK_BUDGET, type MaskOptions } from "./values.js";
import { commonWords } from "./vocabulary.js";
import { JoinedValues } from "./joined-values.js";

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

export {
  type ArgKind,
  FINGERPRINT_HEX_LENGTH,
  isFieldName,
  MAX_NGRAM,
  type MaskedArg,
  maskArgs,
  MIN_TOKEN_LENGTH,
  MIN_VALUE_LENGTH,
  normalise,
  shapeOf,
  tokens,
} from "./mask-shape.js";
export {
  type CollectedValues,
  collectValues,
  DEFAULT_MASK_OPTIONS,
  MASK_BUDGET,
  type MaskOptions,
  scalarLeaves,
  Unread,
  type ValueTerms,
  valueTerms,
} from "./values.js";
export {
  containsFingerprint,
  fingerprint,
  type FingerprintMemo,
  textFingerprints,
  valueCheckOf,
  valueFingerprints,
} from "./fingerprint.js";

const TEXT_TOKEN = /[\p{L}\p{N}]+/gu;
/** Most separator characters between two tokens of one value found in a text ("ORD - 12"). */
const MAX_GAP = 3;
/** Most characters between two pieces of one value split in a text (`Whit - field`, a line break). */
const MAX_JOIN_GAP = 3;
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
export interface Masker {
  (text: string): MaskResult;
  /**
   * Some of its values were past the budget and never read (`oversize`, an input read in part):
   * any word of a text may be one of them, a common word included ("Rose Baker"), so what keeps
   * free text must not keep a word for being common.
   */
  readonly strict: boolean;
}

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
  /** Some values were past the budget and not read: every uncommon word of a text is masked. */
  strict: boolean;
  /** The values joined, to find them split or spelled out (`joined-values.ts`). */
  joined: JoinedValues;
}

function prepare(values: unknown, maxNodes: number): PreparedValues {
  const prepared: PreparedValues = {
    wholes: new Set(),
    tokens: new Set(),
    grams: new Set(),
    longest: 1,
    longestEchoSource: 0,
    strict: false,
    joined: new JoinedValues(),
  };
  if (values === undefined) return prepared;
  const { terms, bulkTokens, bulkWholes, oversize } = allTerms(values, maxNodes);
  prepared.strict = oversize;
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
      prepared.joined.add(folded);
      prepared.wholes.add(folded.join(" "));
      prepared.longest = Math.max(prepared.longest, Math.min(MAX_PHRASE_TOKENS, folded.length));
    }
    for (const token of t.tokens) {
      addToken(token);
      prepared.joined.add([fold(token)]);
    }
  }
  for (const token of bulkTokens) {
    addToken(token);
    prepared.joined.add([fold(token)]);
  }
  for (const whole of bulkWholes) {
    const folded = whole.split(" ").map(fold);
    prepared.joined.add(folded);
    prepared.wholes.add(folded.join(" "));
    prepared.longest = Math.max(prepared.longest, Math.min(MAX_PHRASE_TOKENS, folded.length));
  }
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
  const hasValues = v.strict || v.wholes.size > 0 || v.tokens.size > 0;
  const words = v.strict ? commonWords() : undefined;
  const isValue = (phrase: string, n: number): boolean =>
    v.wholes.has(phrase) ||
    (n === 1 && (v.tokens.has(phrase) || isEcho(phrase, v) || (words !== undefined && !words.has(phrase))));

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
      // The value split or spelled out: `Whit-field`, `Q X Z T`, "four one double one".
      if (matched === 0 && !v.joined.empty) matched = v.joined.match(toks, i, MAX_JOIN_GAP);
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

  const mask = (raw: string): MaskResult => {
    const text = normalizeText(withinBudget(raw));
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
  return Object.assign(mask, { strict: v.strict });
}

/**
 * A text cut to {@link MASK_BUDGET}`.maxTextChars` (at the last space in its second half, so no
 * word is cut in two), "…" marking the cut; a shorter text as it is. What is masked and stored of
 * a huge text is its beginning: masking it costs a bounded time.
 */
export function withinBudget(text: string): string {
  if (text.length <= MASK_BUDGET.maxTextChars) return text;
  const head = text.slice(0, MASK_BUDGET.maxTextChars);
  const space = head.search(/\s\S*$/);
  return `${space > MASK_BUDGET.maxTextChars / 2 ? head.slice(0, space) : head} …`;
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
  const text = normalizeText(withinBudget(raw));
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
