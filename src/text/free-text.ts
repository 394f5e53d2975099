import { createHmac } from "node:crypto";
import { skeleton } from "./normalize.js";
import { allowedWords, type AllowedWords, wordRuns } from "./vocabulary.js";

/**
 * Stored free text (an error message, a tool's output, the user's request) keeps only words that
 * may be kept. Pure functions: the state that decides when a word is released lives in the
 * recorder (`record/word-releases.ts`), the released words in the ledger.
 *
 * A text reaches this stage already masked (detectors, argument values, digits). Then each word is
 *
 * - kept when the **static allow-list** has it: the common-word vocabulary, stopwords, the run's
 *   tool names and argument names and their parts, single letters, the letter prefix of a masked
 *   shape (`ORD` of `ORD-#####`);
 * - kept when it was **released** in the partition: shown by records of two different threads (and
 *   two different callers, where several share the partition);
 * - otherwise stored as a **word token** `<w:…>`: a keyed hash of its folded form, never the word.
 *
 * Reading rows, the ledger turns each token into its released word, or into `<word>` when the word
 * was never released ({@link resolveWordTokens}), so a note or a lesson can quote only text that passed.
 */

/** Letters of a word token's hash (`a`-`p`, four bits each): no digit, so nothing masks it again. */
export const WORD_TOKEN_LENGTH = 12;
/** A word token in a stored text. */
export const WORD_TOKEN = /<w:([a-p]{12})>/g;
/** What a token of a word that was never released reads as. */
export const UNRELEASED_WORD = "<word>";

/** A word as tokens and released words compare it: normalized, confusables folded, lower case. */
export function foldWord(word: string): string {
  return skeleton(word);
}

/**
 * The keyed hash of one word (folded first): HMAC-SHA256 with the ledger's fingerprint key, over a
 * label that no argument fingerprint uses, written in the letters `a`-`p`.
 */
export function wordHash(word: string, key: string): string {
  const hex = createHmac("sha256", key).update(`free-text-word\u0000${foldWord(word)}`).digest("hex");
  let out = "";
  for (let i = 0; i < WORD_TOKEN_LENGTH; i++) out += String.fromCharCode(97 + parseInt(hex[i], 16));
  return out;
}

/** The token stored for a word that may not be kept: `<w:` + {@link wordHash} + `>`. */
export function wordToken(hash: string): string {
  return `<w:${hash}>`;
}

/** The static allow-list of stored free text for one run: see the module doc. */
export function staticAllowedWords(toolNames: readonly string[], argNames: readonly string[]): AllowedWords {
  return allowedWords({ card: argNames, toolNames });
}

/** A word of a text the static allow-list does not hold. */
export interface UnlistedWord {
  /** Its {@link wordHash}. */
  hash: string;
  /** The word as written (held in memory while the record is built, never stored unless released). */
  word: string;
}

/** What {@link keepFreeText} made of a text. */
export interface KeptFreeText {
  /** The text with every word that may not be kept replaced by its token. */
  text: string;
  /** The words outside the static allow-list, released or not, in order (repeats once). */
  unlisted: UnlistedWord[];
}

/**
 * A masked text with only words that may be kept: words on the static list (`allowed`) and words
 * `isReleased` says were released stay; any other word becomes its {@link wordToken}. Placeholders
 * put in by masking (`<value>`, `<email>`) are left as they are. Time linear in the text.
 */
export function keepFreeText(
  text: string,
  allowed: AllowedWords,
  key: string,
  isReleased: (hash: string) => boolean,
): KeptFreeText {
  const unlisted = new Map<string, UnlistedWord>();
  let out = "";
  let last = 0;
  for (const run of wordRuns(text, allowed)) {
    if (run.verdict === "allowed") continue;
    const word = text.slice(run.start, run.end);
    const hash = wordHash(word, key);
    if (!unlisted.has(hash)) unlisted.set(hash, { hash, word });
    if (isReleased(hash)) continue;
    out += text.slice(last, run.start) + wordToken(hash);
    last = run.end;
  }
  return { text: out + text.slice(last), unlisted: [...unlisted.values()] };
}

/**
 * A stored text as it may be read: each token becomes its released word (`released`: hash → word),
 * or `<word>` when it was never released; adjacent `<word>`s read as one.
 */
export function resolveWordTokens(text: string, released: ReadonlyMap<string, string>): string {
  if (!text.includes("<w:")) return text;
  return text
    .replace(WORD_TOKEN, (_, hash: string) => released.get(hash) ?? UNRELEASED_WORD)
    .replace(/<word>(?:[ \t]+<word>)+/g, UNRELEASED_WORD);
}
