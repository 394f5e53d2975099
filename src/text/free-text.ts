import { createHmac } from "node:crypto";
import { skeleton } from "./normalize.js";
import { allowedWords, type AllowedWords, keepAllowedWords, wordRuns } from "./vocabulary.js";

/**
 * Stored free text (an error message, a tool's output, the user's request) keeps only words that
 * may be kept. Pure functions: the state that decides when a word is released lives in the
 * recorder (`record/word-releases.ts`), the released words in the ledger.
 *
 * A text reaches this stage already masked (detectors, argument values, digits). Numbers written in
 * words are masked as digits are ({@link maskNumberWords}). Then each word is
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
  const hex = createHmac("sha256", key)
    .update(`free-text-word\u0000${foldWord(word)}`)
    .digest("hex");
  let out = "";
  for (let i = 0; i < WORD_TOKEN_LENGTH; i++) out += String.fromCharCode(97 + parseInt(hex[i], 16));
  return out;
}

/** The token stored for a word that may not be kept: `<w:` + {@link wordHash} + `>`. */
export function wordToken(hash: string): string {
  return `<w:${hash}>`;
}

/**
 * The static allow-list of stored free text for one run: see the module doc. `strict` (some of the
 * run's values were never read, see `Masker.strict`) leaves the common vocabulary out: a value
 * made of common words could be anywhere in the text, so only the run's names, stopwords, single
 * letters and released words stay.
 */
export function staticAllowedWords(
  toolNames: readonly string[],
  argNames: readonly string[],
  strict = false,
): AllowedWords {
  return allowedWords({ card: argNames, toolNames, vocabulary: !strict });
}

const UNITS =
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen";
const TENS = "twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion";
const ORDINALS =
  "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth " +
  "sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth " +
  "ninetieth hundredth thousandth";
/** A number word. */
const NUMBER_WORD = `(?:${[UNITS, TENS, ORDINALS].join(" ").split(" ").join("|")})`;
/** A run of number words ("nineteen eighty-two", "two thousand and one", "fourteenth"). */
const NUMBER_WORDS = new RegExp(
  `(?<![\\p{L}\\p{N}_])${NUMBER_WORD}(?:(?:[ \\t]*[-‐][ \\t]*|[ \\t]+(?:and[ \\t]+)?)${NUMBER_WORD})*(?![\\p{L}\\p{N}_])`,
  "giu",
);
/** Number words kept when alone: they are more often words than numbers ("the one I ordered", "first"). */
const KEPT_ALONE: ReadonlySet<string> = new Set(["one", "first", "second"]);

/**
 * Numbers written in words, masked as digits are (`#`): a date of birth in words ("the fourteenth
 * of March, nineteen eighty-two") is no more kept than one in digits. "one", "first" and
 * "second" alone are kept as words.
 */
export function maskNumberWords(text: string): string {
  return text.replace(NUMBER_WORDS, (run) => (KEPT_ALONE.has(run.toLowerCase()) ? run : "#"));
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
  const numbers = maskNumberWords(text);
  let out = "";
  let last = 0;
  for (const run of wordRuns(numbers, allowed)) {
    if (run.verdict === "allowed") continue;
    const word = numbers.slice(run.start, run.end);
    const hash = wordHash(word, key);
    if (!unlisted.has(hash)) unlisted.set(hash, { hash, word });
    if (isReleased(hash)) continue;
    out += numbers.slice(last, run.start) + wordToken(hash);
    last = run.end;
  }
  return { text: out + numbers.slice(last), unlisted: [...unlisted.values()] };
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

/**
 * Free text as a lesson or a proposer may quote it: its **masked shape**. Numbers in words become
 * `#`; every run of words `allowed` does not hold (the common vocabulary, the tools' names) becomes
 * one `<word>`, a word released in the partition included: release lets a word stay in a stored
 * row an operator reads, never travel into a lesson another caller is shown.
 *
 * @example quotedShape("Account holder Whitfield, Springfield has no such record", allowedWords())
 * // "Account holder <word>, <word> has no such record"
 */
export function quotedShape(text: string, allowed: AllowedWords): string {
  if (text === "") return text;
  return keepAllowedWords(maskNumberWords(text), allowed, { maxMaskedShare: 1 }).text;
}
