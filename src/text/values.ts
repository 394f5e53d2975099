import { MASK_BUDGET, Unread } from "./budget.js";
import { type NamedDetector, PII_DETECTORS } from "./detectors.js";
import { isFieldName, MIN_TOKEN_LENGTH, MIN_VALUE_LENGTH, stringShape, tokens } from "./mask-shape.js";
import { normalizeText, skeletonOfNormalized } from "./normalize.js";
import { commonWords } from "./vocabulary.js";

/**
 * The values of an argument, at any depth, as texts and terms: the walk the masker and the
 * fingerprints share, and its budget. See `mask.ts` for what counts as a value.
 */

export { MASK_BUDGET, Unread } from "./budget.js";

/** Options of the value walk and of text masking. */
export interface MaskOptions {
  /**
   * Nodes (values, keys, containers) of one `values` argument described leaf by leaf. Past it the
   * rest still counts, as text whose every token is a value token (up to {@link MASK_BUDGET}).
   * @default 500
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
  maxNodes: 500,
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
  /**
   * True when the argument was larger than {@link MASK_BUDGET} lets the walk read (more nodes than
   * `maxWalkNodes`, a value longer than `maxLeafChars`, a bulk longer than `maxBulkChars`): some
   * values were not read, so a masker masks every uncommon word of the run's texts.
   */
  oversize: boolean;
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
  // A run's list of calls' arguments: each call gets its own budget, so one huge call does not
  // leave another's values unread.
  if (Array.isArray(values) && values.length > 1 && values.length <= MASK_BUDGET.maxCallsApart) {
    const out: CollectedValues = { leaves: [], keys: [], bulk: [], oversize: false };
    for (const one of values) {
      const part = collectOne([one], maxNodes);
      out.leaves.push(...part.leaves);
      out.keys.push(...part.keys);
      out.bulk.push(...part.bulk);
      out.oversize ||= part.oversize;
    }
    return out;
  }
  return collectOne(values, maxNodes);
}

function collectOne(values: unknown, maxNodes: number): CollectedValues {
  const out: CollectedValues = { leaves: [], keys: [], bulk: [], oversize: false };
  const seen = new Set<object>();
  const stack: Pending[] = [{ value: values, argsLevel: true }];
  let nodes = 0;
  let bulkChars = 0;
  let readChars = 0;
  const text = (t: string, into: string[]): void => {
    if (t.trim() === "") return;
    const room = Math.min(MASK_BUDGET.maxLeafChars, MASK_BUDGET.maxReadChars - readChars);
    let read = t;
    if (read.length > room) {
      read = read.slice(0, Math.max(0, room));
      out.oversize = true;
      if (read.trim() === "") return;
    }
    readChars += read.length;
    if (nodes <= maxNodes) into.push(read);
    else if (bulkChars < MASK_BUDGET.maxBulkChars) {
      bulkChars += read.length;
      out.bulk.push(read);
    } else out.oversize = true;
  };
  while (stack.length > 0) {
    if (nodes >= MASK_BUDGET.maxWalkNodes) {
      out.oversize = true;
      break;
    }
    const { value, argsLevel } = stack.pop() as Pending;
    nodes += 1;
    if (value === Unread.instance) out.oversize = true;
    else if (typeof value === "string") text(value, out.leaves);
    else if (typeof value === "number") {
      if (Number.isFinite(value)) text(String(value), out.leaves);
    } else if (typeof value === "bigint") text(value.toString(), out.leaves);
    else if (typeof value === "object" && value !== null && !seen.has(value)) {
      seen.add(value);
      const children: Pending[] = [];
      // Children past the walk's budget are never read: a list of a million numbers costs its first few thousand.
      const room = (): boolean => {
        if (nodes + stack.length + children.length < MASK_BUDGET.maxWalkNodes) return true;
        out.oversize = true;
        return false;
      };
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length && room(); i++) children.push({ value: value[i], argsLevel });
        } else if (value instanceof Map) {
          for (const [k, v] of value) {
            if (!room()) break;
            children.push({ value: k, argsLevel: false }, { value: v, argsLevel: false });
          }
        } else if (value instanceof Set) {
          for (const item of value) {
            if (!room()) break;
            children.push({ value: item, argsLevel: false });
          }
        } else if (value instanceof Error) {
          text(value.message, out.leaves);
        } else if (!(
          value instanceof Date ||
          value instanceof RegExp ||
          ArrayBuffer.isView(value) ||
          value instanceof ArrayBuffer
        )) {
          for (const key of Object.keys(value)) {
            if (!room()) break;
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
export function fold(token: string): string {
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
export function allTerms(
  values: unknown,
  maxNodes: number,
): { terms: ValueTerms[]; bulkTokens: string[]; bulkWholes: string[]; oversize: boolean } {
  const collected = collectValues(values, maxNodes);
  const terms: ValueTerms[] = [];
  for (const leaf of collected.leaves) for (const form of [leaf, ...variants(leaf)]) terms.push(valueTerms(form));
  for (const key of collected.keys) for (const form of [key, ...variants(key)]) terms.push(keyTerms(form));
  const bulkTokens: string[] = [];
  const bulkWholes: string[] = [];
  for (const text of collected.bulk) {
    for (const form of [text, ...variants(text)]) {
      const all = tokens(form);
      // A bulk value's whole phrase counts too: "Rose Baker" is a value though "rose" and "baker" are words.
      if (all.length > 1) bulkWholes.push(all.join(" "));
      for (const t of all) if (t.length >= MIN_TOKEN_LENGTH) bulkTokens.push(t);
    }
  }
  return { terms, bulkTokens, bulkWholes, oversize: collected.oversize };
}
