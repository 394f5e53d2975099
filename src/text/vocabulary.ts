import { lazy } from "../memo.js";
import { definedOnly } from "../internal.js";
import { skeleton } from "./normalize.js";
import { splitWords, stem, STOPWORDS } from "./tokenize.js";
import { vocabularyWords } from "./vocabulary-words.js";

/**
 * The vocabulary rule of the gate: a lesson may use only allowed words. A word is allowed when it is
 *
 * - a word of the tool's own card (its name, the author's description, its argument names),
 * - a registered tool name or a part of one (`send_email`, `send`, `email`),
 * - a common English word ({@link commonWords}: 63k words of SCOWL levels 10–50 in every dialect's
 *   spelling (`color` and `colour`), no proper names, plus short lists of technical words such as
 *   `api`, `json`, `utc` and of newer words such as `chatbot`, `dataset`), or
 * - a word shared by at least two distinct cited requests (real users' wording, e.g. a product name),
 *
 * and it is not an argument value (the fingerprint check the caller passes as `isValue`). Words are
 * compared normalized, confusables folded, lower case, and by stem (`tokenize.ts`), so "refunds"
 * is allowed when "refund" is. Anything else in a lesson — a person's name, a street, a key — is
 * masked as `<word>` or the lesson is refused.
 */

/** Technical words common in tool lessons that the general word list lacks. */
const TECHNICAL_WORDS = [
  "api",
  "apis",
  "url",
  "urls",
  "uri",
  "id",
  "ids",
  "json",
  "xml",
  "yaml",
  "csv",
  "pdf",
  "html",
  "http",
  "https",
  "sql",
  "utc",
  "pm",
  "iso",
  "uuid",
  "uuids",
  "email",
  "emails",
  "login",
  "logout",
  "signup",
  "username",
  "timestamp",
  "timestamps",
  "timezone",
  "config",
  "param",
  "params",
  "enum",
  "boolean",
  "int",
  "integer",
  "string",
  "strings",
  "null",
  "async",
  "webhook",
  "webhooks",
  "oauth",
  "sms",
  "otp",
  "pin",
  "ok",
  "todo",
  "app",
  "apps",
  "admin",
  "ui",
  "cli",
  "sdk",
  "kb",
  "mb",
  "gb",
  "tb",
  "ms",
  "sec",
  "min",
  "max",
  "num",
  "qty",
  "sku",
  "skus",
  "vat",
  "eur",
  "usd",
  "gbp",
  "faq",
  "pdfs",
  "png",
  "jpg",
  "jpeg",
  "zip",
  "repo",
  "repos",
  "wifi",
  "ip",
  "dns",
  "vpn",
  "ssh",
  "tls",
  "ssl",
  "cc",
  "bcc",
  "etc",
  "eg",
  "ie",
  "vs",
  "yyyy",
  "mm",
  "dd",
  "hh",
  "ss",
  "tz",
  "ref",
  "refs",
  "src",
  "dst",
  "msg",
  "msgs",
  "info",
  "desc",
  "arg",
  "args",
  "env",
  "db",
  "auth",
  "org",
  "orgs",
  "dept",
  "addr",
  "lang",
  "locale",
  "geo",
  "lat",
  "lon",
  "lng",
  "avg",
  "pct",
  "seq",
  "idx",
  "ext",
  "tmp",
  "utf",
  "ai",
  "llm",
];

/**
 * Ordinary words the word list (SCOWL, 2016) lacks, most of them newer than it: found by measuring
 * which lower-case words the gate masked in MetaTool's requests (test/fixtures/measure-vocabulary.ts),
 * keeping words a general dictionary would have and leaving out brands, names and made-up words.
 * Plurals and other forms come by stem.
 */
const NEWER_WORDS = `
  acidification affordability altcoin attendee audiobook backend backlink barcode beachfront beachside
  bioenergy bioengineering biomarker biomass blockchain bootcamp bot buyback cafe candlelit carbonara chatbot
  cityscape clickbait codebase convolutional coronavirus crypto cryptocurrency cryptocurrencies
  customisable customizable cyber cybersecurity dataset deliverable discoverability dopamine drawdown
  dystopian ebook eco ecommerce endpoint entrepreneurship explainable flashcard flowchart foodie
  frontend frontrunner fundraising fungible gameplay gif grandmaster haircare heatwave homeschooling
  hydro hydropower iconic immunotherapy impactful indie infographic keto ketogenic kickstart lifecycle
  macronutrient matchup meetup mentorship metadata micro microcontroller minimalistic motorsport
  nanoparticle neurobiology neuroscience offline onboarding overwater pharaoh photorealistic playstyle
  plotline preprocess programmatically rainforest readme relatable resize retro roadmap runtime
  scannable seamless seamlessly showtime sitemap skillset skincare soundbar spacetime stablecoin
  stakeholder standup storyline strategize subdirectory subgenre sudoku superhero sustainability
  tabletop tertiary timeframe trackable transformative underserved upskill upskilling uptime vlog
  walkthrough webpage whitepaper widget workspace
`
  .split(/\s+/)
  .filter((word) => word !== "");

/**
 * Calendar words: the word list spells them capitalized, so its proper-noun filter drops them,
 * but a weekday or a month names no one.
 */
const CALENDAR_WORDS = [
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

/** The shipped common-word list (vocabulary-words.txt, see vocabulary-words.ts), built once on first use. */
export const commonWords: () => ReadonlySet<string> = lazy(
  () => new Set([...vocabularyWords(), ...TECHNICAL_WORDS, ...NEWER_WORDS, ...CALENDAR_WORDS]),
);

const commonWordStems: () => ReadonlySet<string> = lazy(() => new Set([...commonWords()].map(stem)));

/** A cited request, as the lesson's evidence keeps it (masked text). */
export interface CitedRequest {
  id: string;
  text: string;
  /**
   * Requests of one group count once (e.g. a thread or a user), so one person repeating a name
   * does not make it a shared word. Without it every request is its own group.
   */
  group?: string;
}

/** Where allowed words come from; see the module doc. */
export interface AllowedWordsOptions {
  /**
   * Texts of the tool's own card: its name, the author's description, argument names.
   * @default []
   */
  card?: readonly string[];
  /**
   * Every registered tool name.
   * @default []
   */
  toolNames?: readonly string[];
  /**
   * The common-word vocabulary: `true` for the shipped one, `false` for none, or a set of words.
   * @default true
   */
  vocabulary?: boolean | ReadonlySet<string>;
  /**
   * The cited requests; a word in at least `minSharedRequests` distinct ones is allowed.
   * @default []
   */
  requests?: readonly CitedRequest[];
  /**
   * How many distinct cited requests (groups) must share a word for it to be allowed.
   * @default 2
   */
  minSharedRequests?: number;
  /**
   * The fingerprint check: true when a word is an argument value. Such a word is never allowed,
   * whatever list it is on (a customer called "Rose" is masked although "rose" is a common word).
   * @default () => false
   */
  isValue?: (word: string) => boolean;
}

/** The defaults of {@link AllowedWordsOptions}. */
export const DEFAULT_ALLOWED_WORDS_OPTIONS: Readonly<Required<AllowedWordsOptions>> = Object.freeze({
  card: [],
  toolNames: [],
  vocabulary: true,
  requests: [],
  minSharedRequests: 2,
  isValue: () => false,
});

/** Why a word is not allowed. */
export type WordVerdict = "allowed" | "value" | "unknown";

/** The allowed words of one lesson's context; build with {@link allowedWords}. */
export interface AllowedWords {
  /** Whether one word (any case, any form) is allowed, is an argument value, or is unknown. */
  verdict(word: string): WordVerdict;
  /** True when {@link verdict} is `"allowed"`. */
  has(word: string): boolean;
}

/** A word as it is compared: normalized, confusables folded, lower case. */
function fold(word: string): string {
  return skeleton(word);
}

/** Lower-case words of texts, whole identifiers kept beside their parts (`send_email`, `send`, `email`). */
function wordsOf(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of texts) {
    for (const m of fold(text).matchAll(/[\p{L}\p{N}_]+/gu)) {
      out.push(m[0]);
      for (const part of splitWords(m[0])) out.push(part);
    }
    for (const part of splitWords(text)) out.push(fold(part));
  }
  return out;
}

/** The allowed words of a lesson's context, from the sources in `options` (see the module doc). */
export function allowedWords(options: AllowedWordsOptions = {}): AllowedWords {
  const o = { ...DEFAULT_ALLOWED_WORDS_OPTIONS, ...definedOnly(options) };
  const exact = new Set<string>();
  const stems = new Set<string>();
  const add = (word: string): void => {
    exact.add(word);
    stems.add(stem(word));
  };
  for (const w of wordsOf([...o.card, ...o.toolNames])) add(w);

  const groupsByStem = new Map<string, Set<string>>();
  for (const request of o.requests) {
    const group = request.group ?? request.id;
    for (const w of new Set(wordsOf([request.text]).map(stem))) {
      let groups = groupsByStem.get(w);
      if (groups === undefined) groupsByStem.set(w, (groups = new Set()));
      groups.add(group);
    }
  }
  for (const [s, groups] of groupsByStem) if (groups.size >= o.minSharedRequests) stems.add(s);

  const vocabulary = o.vocabulary === true ? commonWords() : o.vocabulary === false ? undefined : o.vocabulary;
  const vocabularyStems =
    o.vocabulary === true ? commonWordStems() : vocabulary ? new Set([...vocabulary].map(stem)) : undefined;

  const verdict = (word: string): WordVerdict => {
    const w = fold(word);
    if (w === "") return "allowed";
    if (o.isValue(w) || (w !== word && o.isValue(word))) return "value";
    if (/^\p{L}$/u.test(w) || /^\d+$/.test(w)) return "allowed";
    if (exact.has(w) || STOPWORDS.has(w) || vocabulary?.has(w)) return "allowed";
    const s = stem(w);
    return stems.has(s) || vocabularyStems?.has(s) ? "allowed" : "unknown";
  };
  return { verdict, has: (word) => verdict(word) === "allowed" };
}

// ---------------------------------------------------------------- applying the rule

/** Options of {@link keepAllowedWords}. */
export interface KeepAllowedWordsOptions {
  /**
   * Largest share of a line's words that may be masked; past it the line is refused.
   * @default 0.34
   */
  maxMaskedShare?: number;
}

/** The defaults of {@link KeepAllowedWordsOptions}. */
export const DEFAULT_KEEP_ALLOWED_WORDS_OPTIONS: Readonly<Required<KeepAllowedWordsOptions>> = Object.freeze({
  maxMaskedShare: 0.34,
});

/** Why a line was refused by the vocabulary rule. */
export type VocabularyRefusal = "value_word" | "unknown_word" | "no_allowed_words" | "too_many_unknown_words";

/** What {@link keepAllowedWords} made of a line. */
export interface KeptWords {
  /** The line with every run of words that are not allowed replaced by one `<word>`. */
  text: string;
  /** One entry per placeholder put in: `"word"` (never the word itself). */
  masked: string[];
  /** Set when the line should not be used at all. */
  refused?: VocabularyRefusal;
}

/** Placeholders put in by earlier stages (`<value>`, `<email>`): not words. */
const PLACEHOLDER = /<[a-z_]{1,20}>/y;
/** A word: letters, marks, digits and underscores, with an optional contraction (`don't`, not the `O'Br` of `O'Brien`). */
const WORD = /[\p{L}\p{M}\p{N}_]+(?:['’][\p{L}]{1,2}(?![\p{L}\p{M}]))?/uy;

/** One run of word characters in a line, and its verdict. */
export interface WordRun {
  start: number;
  end: number;
  verdict: WordVerdict;
}

/** Joins the pieces of a compound word: `Whit-field`, `Whit–field`, `Whit/field`, `Whit.field`, `Rose&Baker`. */
const COMPOUND_JOINER = /[-‐‑‒–—/.+&]/u;
/**
 * A letter piece of a compound, two letters or more: no digits (`ORD-12345` and `COVID-19` are
 * shapes, not names), no single letters (`E-mail`, `R&D` and `U.S.` are read as ever).
 */
const LETTER_PIECE = /\p{L}[\p{L}\p{M}]+/uy;

/**
 * The word at `start..end` and the letter pieces joined to it by `-` or `/` with no space, when one
 * of them is written capitalized (`Whit-field`, `Rose/Baker`): a name split into common words
 * reads as the one word it is, not as its pieces. Lower-case compounds (`follow-up`, `and/or`) are
 * judged piece by piece as ever.
 */
function nameCompound(line: string, start: number, end: number): { parts: string[]; end: number } | undefined {
  if (!COMPOUND_JOINER.test(line.charAt(end))) return undefined;
  const parts = [line.slice(start, end)];
  let at = end;
  while (COMPOUND_JOINER.test(line.charAt(at))) {
    LETTER_PIECE.lastIndex = at + 1;
    const piece = LETTER_PIECE.exec(line);
    if (!piece) break;
    parts.push(piece[0]);
    at = at + 1 + piece[0].length;
  }
  if (parts.length < 2 || !parts.every((p) => /^\p{L}[\p{L}\p{M}]+$/u.test(p))) return undefined;
  // Followed by more word characters: not a clean compound, left to the word-by-word reading.
  if (/[\p{L}\p{M}\p{N}_]/u.test(line.charAt(at))) return undefined;
  return parts.some((p) => /^\p{Lu}/u.test(p)) ? { parts, end: at } : undefined;
}

/**
 * A capitalized compound's verdict: a value when a piece is one; allowed when it is one allowed
 * word written joined (`E-mail`); otherwise unknown, however common its pieces.
 */
function compoundVerdict(parts: readonly string[], allowed: AllowedWords): WordVerdict {
  for (const part of parts) if (allowed.verdict(part) === "value") return "value";
  return allowed.verdict(parts.join("")) === "allowed" ? "allowed" : "unknown";
}

/** The verdict of one word run: an identifier is allowed whole (a tool name) or when all its parts are. */
function runVerdict(run: string, allowed: AllowedWords): WordVerdict {
  const base = run.replace(/['’][\p{L}]{1,2}$/u, "");
  const whole = allowed.verdict(base);
  if (whole !== "unknown") return whole;
  if (!/[_\p{N}]/u.test(base) && !/\p{Ll}\p{Lu}/u.test(base)) return whole;
  // A capitalized word run together from common words (`RoseBaker`), or joined by underscores
  // (`Rose_Baker`), is a name, not an identifier; `ORDER_ID` and `order_id` are read by parts.
  if (!/[_\p{N}]/u.test(base) && /^\p{Lu}/u.test(base)) return whole;
  if (!/\p{N}/u.test(base) && /(?:^|_)\p{Lu}\p{Ll}/u.test(base)) return whole;
  const parts = splitWords(base);
  if (parts.length <= 1) return whole;
  let out: WordVerdict = "allowed";
  for (const part of parts) {
    const v = /^\d+$/.test(part) ? "allowed" : allowed.verdict(part);
    if (v === "value") return "value";
    if (v === "unknown") out = "unknown";
  }
  return out;
}

/**
 * The letter part of a masked shape (`ORD` in `ORD-#####`, `CW` in `CW-######`): short, at the
 * start of a token, and followed by masked digits. The shape keeps such parts because they are format, not value.
 */
function isFormatPrefix(word: string, line: string, end: number): boolean {
  const before = line.charAt(end - word.length - 1);
  return (
    (/^[A-Za-z]{1,4}$/.test(word) || /^[A-Z]{1,6}$/.test(word)) &&
    /^[\-_./:]?#/.test(line.slice(end, end + 2)) &&
    !/[\-_#.:/\p{L}\p{N}]/u.test(before)
  );
}

/**
 * The word runs of a line with their verdicts: placeholders (`<value>`) are skipped, the letter
 * prefix of a masked shape (`ORD` of `ORD-#####`) is allowed, an identifier is judged whole or by
 * its parts. Used by the lesson rule below and by stored free text (`free-text.ts`).
 */
export function wordRuns(line: string, allowed: AllowedWords): WordRun[] {
  const runs: WordRun[] = [];
  for (let i = 0; i < line.length;) {
    PLACEHOLDER.lastIndex = i;
    const placeholder = PLACEHOLDER.exec(line);
    if (placeholder) {
      i += placeholder[0].length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(line);
    if (word) {
      const end = i + word[0].length;
      const compound = nameCompound(line, i, end);
      if (compound !== undefined) {
        runs.push({ start: i, end: compound.end, verdict: compoundVerdict(compound.parts, allowed) });
        i = compound.end;
        continue;
      }
      const verdict = isFormatPrefix(word[0], line, end) ? "allowed" : runVerdict(word[0], allowed);
      runs.push({ start: i, end, verdict });
      i += word[0].length;
      continue;
    }
    i += 1;
  }
  return runs;
}

/**
 * The first reason `line` breaks the vocabulary rule, or `undefined` when every word is allowed:
 * `value_word` (a word is an argument value) or `unknown_word`.
 */
export function checkAllowedWords(line: string, allowed: AllowedWords): VocabularyRefusal | undefined {
  let unknown = false;
  for (const run of wordRuns(line, allowed)) {
    if (run.verdict === "value") return "value_word";
    if (run.verdict === "unknown") unknown = true;
  }
  return unknown ? "unknown_word" : undefined;
}

/**
 * `line` with only allowed words: each run of other words (adjacent ones, spaces between, become one)
 * is replaced by `<word>`. Refused (`no_allowed_words`, `too_many_unknown_words`) when nothing
 * allowed is left or more than `maxMaskedShare` of the words had to go; the masked text is still
 * returned, for an operator to read.
 *
 * @example keepAllowedWords("Tell the courier: Margaret Whitfield moved house", allowedWords()).text
 * // "Tell the courier: <word> moved house"
 */
export function keepAllowedWords(
  line: string,
  allowed: AllowedWords,
  options: KeepAllowedWordsOptions = {},
): KeptWords {
  const maxShare = options.maxMaskedShare ?? DEFAULT_KEEP_ALLOWED_WORDS_OPTIONS.maxMaskedShare;
  const runs = wordRuns(line, allowed);
  let out = "";
  let last = 0;
  const masked: string[] = [];
  let maskedWords = 0;
  let allowedWordsLeft = 0;
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i];
    if (run.verdict === "allowed") {
      if (!/^\d+$/.test(line.slice(run.start, run.end))) allowedWordsLeft += 1;
      continue;
    }
    let end = run.end;
    maskedWords += 1;
    while (
      i + 1 < runs.length &&
      runs[i + 1].verdict !== "allowed" &&
      /^[ \t]*$/.test(line.slice(end, runs[i + 1].start))
    ) {
      i += 1;
      end = runs[i].end;
      maskedWords += 1;
    }
    out += `${line.slice(last, run.start)}<word>`;
    masked.push("word");
    last = end;
  }
  const text = out + line.slice(last);
  const total = maskedWords + allowedWordsLeft;
  if (total > 0 && allowedWordsLeft === 0) return { text, masked, refused: "no_allowed_words" };
  if (total > 0 && maskedWords / total > maxShare) return { text, masked, refused: "too_many_unknown_words" };
  return { text, masked };
}
