/**
 * The package's one tokenizer: what "a word" means for routing, retrieval and vetting.
 *
 * Pure and deterministic: the same text gives the same tokens on every machine, so an index built
 * from the ledger can be rebuilt identically, and a vetting rule such as "shares a word with each
 * request" means the same thing as the routing that it protects.
 */
import { PureMemo } from "../memo.js";

/**
 * Common English function words that carry no routing signal. Matched on the lowercased surface
 * form, before stemming.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  "a",
  "about",
  "above",
  "after",
  "again",
  "all",
  "also",
  "am",
  "an",
  "and",
  "any",
  "are",
  "as",
  "at",
  "be",
  "been",
  "before",
  "being",
  "below",
  "between",
  "both",
  "but",
  "by",
  "can",
  "could",
  "did",
  "do",
  "does",
  "doing",
  "down",
  "during",
  "each",
  "either",
  "else",
  "etc",
  "ever",
  "few",
  "for",
  "from",
  "further",
  "had",
  "has",
  "have",
  "having",
  "he",
  "her",
  "here",
  "hers",
  "herself",
  "him",
  "himself",
  "his",
  "how",
  "i",
  "if",
  "in",
  "into",
  "is",
  "it",
  "its",
  "itself",
  "just",
  "let",
  "lets",
  "may",
  "me",
  "might",
  "more",
  "most",
  "much",
  "must",
  "my",
  "myself",
  "no",
  "nor",
  "not",
  "now",
  "of",
  "off",
  "on",
  "once",
  "only",
  "or",
  "other",
  "our",
  "ours",
  "ourselves",
  "out",
  "over",
  "own",
  "please",
  "same",
  "shall",
  "she",
  "should",
  "so",
  "some",
  "such",
  "than",
  "that",
  "the",
  "their",
  "theirs",
  "them",
  "themselves",
  "then",
  "there",
  "these",
  "they",
  "this",
  "those",
  "through",
  "to",
  "too",
  "under",
  "until",
  "up",
  "us",
  "very",
  "via",
  "was",
  "we",
  "were",
  "what",
  "when",
  "where",
  "whether",
  "which",
  "while",
  "who",
  "whom",
  "whose",
  "why",
  "will",
  "with",
  "within",
  "would",
  "yet",
  "you",
  "your",
  "yours",
  "yourself",
  "yourselves",
  // What is left of a contraction once the apostrophe splits it ("don't" → "don", "t").
  "aren",
  "couldn",
  "didn",
  "doesn",
  "don",
  "hadn",
  "hasn",
  "haven",
  "isn",
  "ll",
  "re",
  "shouldn",
  "ve",
  "wasn",
  "weren",
  "won",
  "wouldn",
]);

/** Letters after which "-ly" is an adverb ending (Porter2's valid "li" endings). */
const LY_ENDINGS: ReadonlySet<string> = new Set(["c", "d", "e", "g", "h", "k", "m", "n", "r", "t"]);

/** Doubled final consonants undone after stripping ("running" → "run"); l, s, z stay doubled. */
const UNDOUBLE: ReadonlySet<string> = new Set(["b", "d", "f", "g", "k", "m", "n", "p", "r", "t"]);

const VOWEL = /[aeiouy]/;

function isConsonant(ch: string | undefined): boolean {
  return ch !== undefined && /[a-z]/.test(ch) && !/[aeiou]/.test(ch);
}

/**
 * Derivational endings mapped to a shorter form, longest first. Each applies only when what is
 * left has at least `min` characters, so short words ("station" is kept apart from "stat") are
 * not cut to nothing.
 */
const DERIVATIONAL: ReadonlyArray<readonly [suffix: string, replacement: string, min: number]> = [
  ["izations", "ize", 3],
  ["ization", "ize", 3],
  ["ational", "ate", 3],
  ["ations", "ate", 3],
  ["ation", "ate", 3],
  ["fulness", "", 3],
  ["ousness", "ous", 3],
  ["iveness", "ive", 3],
  ["ments", "", 4],
  ["ment", "", 4],
  ["ness", "", 3],
  ["ities", "", 4],
  ["ity", "", 4],
  ["ers", "", 4],
  ["er", "", 4],
  ["ors", "", 4],
  ["or", "", 4],
];

/**
 * A light English suffix stripper (no dictionary, no dependency): plural and verb endings,
 * "-ly", a few derivational endings, a trailing "e", a final consonant "y" as "i", and a doubled
 * final consonant. It is not a linguist's stemmer: it only has to send the inflections of one word
 * to one key ("create", "creates", "creating", "created", "creation" → "creat").
 * Words with digits and words of two letters are returned unchanged; three-letter words only lose
 * a final "e".
 */
export function stem(word: string): string {
  if (word.length < 3) return word;
  return STEMS.get(word, stemOnce);
}

/**
 * Pure results kept for reuse: routing, detection and vetting tokenize the same words and
 * requests over and over (a review reads thousands of requests). Each map is cleared when full,
 * so memory stays bounded (about 16k words and 4k texts).
 */
const MAX_CACHED = Object.freeze({ stems: 16_384, texts: 4_096, textLength: 2_000 });
const STEMS = new PureMemo<string, string>(MAX_CACHED.stems);
const WORDS_OF = new PureMemo<string, readonly string[]>(MAX_CACHED.texts);

function stemOnce(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  if (word.length === 3) return word.endsWith("e") ? word.slice(0, -1) : word;
  let w = word;

  // Plurals and third person.
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w) && w.length > 3) w = w.slice(0, -1);

  // Verb endings, only when a vowel is left ("string" and "bring" stay whole); "need" keeps its d.
  if (w.endsWith("ing") && w.length > 4 && VOWEL.test(w.slice(0, -3))) w = w.slice(0, -3);
  else if (w.endsWith("ed") && !w.endsWith("eed") && w.length > 3 && VOWEL.test(w.slice(0, -2))) {
    w = w.slice(0, -2);
  } else if (w.endsWith("ly") && w.length > 5 && LY_ENDINGS.has(w.charAt(w.length - 3))) {
    w = w.slice(0, -2);
  }

  for (const [suffix, replacement, min] of DERIVATIONAL) {
    if (w.endsWith(suffix) && w.length - suffix.length >= min) {
      w = w.slice(0, -suffix.length) + replacement;
      break;
    }
  }

  if (w.endsWith("e") && w.length >= 3) w = w.slice(0, -1);
  if (w.endsWith("y") && w.length > 2 && isConsonant(w.charAt(w.length - 2))) w = `${w.slice(0, -1)}i`;
  const last = w.charAt(w.length - 1);
  if (w.length >= 4 && last === w.charAt(w.length - 2) && UNDOUBLE.has(last)) w = w.slice(0, -1);
  return w;
}

/**
 * Splits text into lowercase surface words: camelCase and PascalCase humps, acronyms
 * ("HTTPServer" → "http", "server"), snake_case, kebab-case, dots, slashes and any other
 * punctuation. Letters and digits stay together ("mp3", "cus123"); a possessive "'s" is dropped.
 * Stopwords are kept here; see {@link tokenize}.
 */
export function splitWords(text: string): string[] {
  if (text.length > MAX_CACHED.textLength) return splitOnce(text);
  return WORDS_OF.get(text, splitOnce).slice();
}

function splitOnce(text: string): string[] {
  const spaced = text
    .normalize("NFKC")
    // Mask placeholders ("<value>", "<email>") stand for something removed: they are not words.
    .replace(/<[a-z_]{1,20}>/g, " ")
    .replace(/['\u2019]s\b/gu, "")
    .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .toLowerCase();
  return spaced.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/** True for a lowercase surface word that counts: not a stopword, not a lone letter. */
export function isContentWord(word: string): boolean {
  if (STOPWORDS.has(word)) return false;
  return word.length >= 2 || /\p{N}/u.test(word);
}

/**
 * The words of `text` as stems, in order, with stopwords and single letters dropped. This is the
 * tokenizer routing embeds and vetting compares ("shares a word with each request" means the two
 * token lists intersect).
 *
 * @example tokenize("getUserById returns the users' booking_dates") // ["get", "user", "id", "return", "user", "book", "dat"]
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of splitWords(text)) if (isContentWord(word)) out.push(stem(word));
  return out;
}

/** The distinct tokens of `text` (see {@link tokenize}). */
export function tokenSet(text: string): Set<string> {
  return new Set(tokenize(text));
}

/** True when the two texts have at least one token (stem) in common. */
export function sharesWord(a: string, b: string): boolean {
  const left = tokenSet(a);
  for (const t of tokenize(b)) if (left.has(t)) return true;
  return false;
}

/** True when two token sets share a token. */
export function intersects(a: ReadonlySet<string>, b: ReadonlySet<string> | undefined): boolean {
  if (!b) return false;
  for (const t of a) if (b.has(t)) return true;
  return false;
}
