import { createHmac } from "node:crypto";
import { FINGERPRINT_HEX_LENGTH, MAX_NGRAM, normalise, tokens } from "./mask-shape.js";
import { normalizeText, skeletonOfNormalized } from "./normalize.js";
import { allTerms, DEFAULT_MASK_OPTIONS, MASK_BUDGET, type MaskOptions } from "./values.js";

/**
 * Keyed fingerprints of values and texts (see `mask.ts`, "Normalisation"). The key is a
 * partition's (`Ledger.fingerprintKey(partition)`, derived from the app's secret and the
 * partition), so one value fingerprints differently in two partitions. No state of its own.
 */

/**
 * Keyed hash of a token or phrase: HMAC-SHA256 over its normalised form, truncated to
 * {@link FINGERPRINT_HEX_LENGTH} hex chars. `fingerprint("ORD-12345", k) ===
 * fingerprint("ord 12345", k)`.
 */
export function fingerprint(token: string, key: string): string {
  return hmac(normalise(token), key);
}

/**
 * Fingerprints already computed, by key (a partition's: `Ledger.fingerprintKey`), then by
 * normalised text. Pass one to reuse work within a batch, whose runs may be of several partitions.
 */
export type FingerprintMemo = Map<string, Map<string, string>>;

function hmac(normalised: string, key: string, memo?: FingerprintMemo): string {
  let known: Map<string, string> | undefined;
  if (memo !== undefined) {
    known = memo.get(key);
    if (known === undefined) memo.set(key, (known = new Map()));
    const digest = known.get(normalised);
    if (digest !== undefined) return digest;
  }
  const digest = createHmac("sha256", key).update(normalised).digest("hex").slice(0, FINGERPRINT_HEX_LENGTH);
  known?.set(normalised, digest);
  return digest;
}

/**
 * Fingerprints of every argument value (at any depth, keys that are values too; see the module
 * doc): of each whole value and of each of its value tokens (see {@link valueTerms}), in the plain
 * and the gate's normalized and folded forms. Sorted, without repeats. A `memo` shared across the
 * calls of a batch saves recomputing repeated values (it holds normalised values: keep it no
 * longer than the batch). At most {@link MASK_BUDGET}`.maxFingerprints` (the whole values first,
 * then their tokens, then the bulk's tokens, in walk order): a huge argument keeps a bounded sample.
 */
export function valueFingerprints(
  args: Record<string, unknown>,
  key: string,
  memo?: FingerprintMemo,
  options: MaskOptions = {},
): string[] {
  const { terms, bulkTokens, bulkWholes } = allTerms(args, options.maxNodes ?? DEFAULT_MASK_OPTIONS.maxNodes);
  const texts = new Set<string>();
  const add = (text: string): void => {
    if (texts.size < MASK_BUDGET.maxFingerprints) texts.add(text);
  };
  for (const t of terms) if (t.whole !== undefined) add(t.whole);
  for (const t of terms) for (const token of t.tokens) add(token);
  for (const whole of bulkWholes) add(whole);
  for (const token of bulkTokens) add(token);
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
export function textFingerprints(whole: string, key: string): string[] {
  const text = whole.length > MASK_BUDGET.maxTextChars ? whole.slice(0, MASK_BUDGET.maxTextChars) : whole;
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
