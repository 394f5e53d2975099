import type { PIIMatch } from "./detector-spans.js";
import { skeletonOfNormalized } from "./normalize.js";

/**
 * Values spelled out one character at a time: a name letter by letter (`W-H-I-T-F-I-E-L-D`,
 * `Q X Z T`), a password in the phonetic alphabet ("kilo lima oscar …"), digits read out with
 * "double" and "triple" ("four one double one …"), a phone number in words and digits ("five five
 * five, 0 one 3 two"). None of these is a word a lesson needs, so the shape is masked whatever the
 * value: what is recognised is the run, never a list of known values.
 *
 * A **unit** is one spelled character: a single letter, a digit word (`zero` … `nine`, `oh`,
 * `niner`), a word of the phonetic alphabet, or a group of digits; `double`, `triple` and
 * `quadruple` repeat the unit after them, and `capital`, `upper case`, `small` … say its case. Units
 * are joined by separators only (spaces, line breaks, `-`, `.`, `,`, `/`, `_`, `|`, `:`, `;`, `+`,
 * `*`, `…`, quotes and brackets, at most six characters between two units). A run is masked when at
 * least three of its units are letters, digit words, phonetic words or repeat words (digit groups alone are
 * left to the number detectors and the digit mask), or six units (seven characters) with one such word among them
 * ("0, 1, 8, 6, double 3, 7", "0, double 1, triple 4, 8"), and it spells two different characters or
 * more: `10 a.m.`, `e.g.`, `I'm a` or a filler `x x x` are no value.
 *
 * Run on normalized text (`normalize.ts`): NFKC, invisible characters gone; words are compared on
 * their confusables skeleton, so a Cyrillic `а` does not hide `alpha`.
 */

/** Digit words, each the digit it reads as (the number detectors read a phone number out with them too). */
export const DIGIT_WORDS: Readonly<Record<string, string>> = {
  zero: "0",
  oh: "0",
  nought: "0",
  one: "1",
  two: "2",
  three: "3",
  four: "4",
  five: "5",
  six: "6",
  seven: "7",
  eight: "8",
  nine: "9",
  niner: "9",
};

/** The phonetic alphabets' words (ICAO/NATO, with common spellings), each the letter it spells. */
const PHONETIC: Readonly<Record<string, string>> = {
  alpha: "a",
  alfa: "a",
  bravo: "b",
  charlie: "c",
  delta: "d",
  echo: "e",
  foxtrot: "f",
  golf: "g",
  hotel: "h",
  india: "i",
  juliet: "j",
  juliett: "j",
  kilo: "k",
  lima: "l",
  mike: "m",
  november: "n",
  oscar: "o",
  papa: "p",
  quebec: "q",
  romeo: "r",
  sierra: "s",
  tango: "t",
  uniform: "u",
  victor: "v",
  whiskey: "w",
  whisky: "w",
  xray: "x",
  yankee: "y",
  zulu: "z",
};

const REPEAT: Readonly<Record<string, number>> = { double: 2, triple: 3, treble: 3, quadruple: 4 };
/** Words that say a spelled letter's case: part of a run, no character of their own. */
const CASE_WORDS: ReadonlySet<string> = new Set([
  "capital",
  "cap",
  "caps",
  "uppercase",
  "upper",
  "lowercase",
  "lower",
  "small",
  "big",
  "case",
]);

/** What one word of a text is to a spelled run. */
export type SpelledUnit =
  { kind: "char"; chars: string; spelled: boolean } | { kind: "repeat"; times: number } | { kind: "case" };

/** Every word that is a unit, lower case (a constant table, built once). */
const UNIT_WORDS: ReadonlyMap<string, SpelledUnit> = new Map<string, SpelledUnit>([
  ...Object.entries(DIGIT_WORDS).map(([w, d]): [string, SpelledUnit] => [w, { kind: "char", chars: d, spelled: true }]),
  ...Object.entries(PHONETIC).map(([w, l]): [string, SpelledUnit] => [w, { kind: "char", chars: l, spelled: true }]),
  ...Object.entries(REPEAT).map(([w, times]): [string, SpelledUnit] => [w, { kind: "repeat", times }]),
  ...[...CASE_WORDS].map((w): [string, SpelledUnit] => [w, { kind: "case" }]),
]);

const ASCII_LETTERS = /^[a-z]+$/;
const DIGITS = /^\d+$/;

/**
 * A word as a unit of a spelled value: the characters it spells (`spelled`: a letter, a digit word
 * or a phonetic word, not a group of digits), a repeat ("double"), a case word, or undefined.
 */
export function spelledUnit(word: string): SpelledUnit | undefined {
  const first = word.charCodeAt(0);
  if (first >= 48 && first <= 57) return DIGITS.test(word) ? { kind: "char", chars: word, spelled: false } : undefined;
  // No unit is longer than nine letters ("quadruple", "uppercase"): most words end here.
  if (word.length > 9 || word.length === 0) return undefined;
  const lower = word.toLowerCase();
  if (lower.length === 1) {
    if (ASCII_LETTERS.test(lower)) return { kind: "char", chars: lower, spelled: true };
  } else {
    const known = UNIT_WORDS.get(lower);
    if (known !== undefined || ASCII_LETTERS.test(lower)) return known;
  }
  // Not plain ASCII: read through the confusables skeleton (a Cyrillic `а` in `аlpha`).
  const folded = skeletonOfNormalized(word).toLowerCase();
  if (/^\p{L}$/u.test(folded)) return { kind: "char", chars: folded, spelled: true };
  return UNIT_WORDS.get(folded);
}

/** A word of a text, as the spelled runs read it. */
const WORD = /[\p{L}\p{N}]+/gu;
/** What may stand between two units of one run. */
const GAP = /^[\s\-‐‑–—.,/\\_|:;+*·'"`()[\]…]{0,6}$/u;
/** Two letters each with its dot (`a.m.`, `e.g.`, `i.e.`, `U.S.`): an abbreviation, no spelled value. */
const ABBREVIATION = /(?<![\p{L}\p{N}.])\p{L}\.\p{L}\.(?!\s?\p{L}\.|[\p{L}\p{N}])/gu;
/** True for a word of a contraction (`I'm`, `don't`, `o'clock`): a letter there spells nothing. */
function inContraction(content: string, start: number, end: number): boolean {
  const apostrophe = (c: string): boolean => c === "'" || c === "\u2019";
  const letter = (c: string): boolean => /\p{L}/u.test(c);
  return (
    (apostrophe(content.charAt(end)) && letter(content.charAt(end + 1))) ||
    (apostrophe(content.charAt(start - 1)) && letter(content.charAt(start - 2)))
  );
}

/** True when a word stands between spaces (or the text's ends), as words of prose do. */
function isProse(content: string, start: number, end: number): boolean {
  return /^\s?$/.test(content.charAt(start - 1)) && /^[\s,.!?]?$/.test(content.charAt(end));
}

/** Units a read-out run needs when fewer of them are words ("0, 1, 8, 6, double 3, 7, zero"). */
const MIN_READ_OUT = 6;
/** Characters such a run spells that make it a number read out all the same (a local phone number). */
const MIN_READ_OUT_CHARS = 7;
/** Spelled units (letters, digit words, phonetic words) a run needs before it is masked. */
export const MIN_SPELLED_UNITS = 3;

/** One run of spelled units in a text: where it is, and the characters it spells (lower case). */
export interface SpelledRun {
  start: number;
  end: number;
  /** The characters spelled, repeats applied (`"4111"` for "four one double one"). */
  chars: string;
  /** Units that are letters, digit words, phonetic words or repeat words. */
  spelled: number;
  /** Characters read out, digit groups included. */
  units: number;
}

/**
 * Every maximal run of spelled units in `content` (see the module doc), with at least
 * `minSpelled` spelled units. Linear in the text.
 */
export function spelledRuns(content: string, minSpelled = MIN_SPELLED_UNITS): SpelledRun[] {
  const out: SpelledRun[] = [];
  let run: SpelledRun | undefined;
  let pendingRepeat = 1;
  /** End of the last unit that spelled a character (a trailing "double" or "capital" is not part of the run). */
  let lastCharEnd = 0;
  let lastEnd = -1;
  const close = (): void => {
    // One character over and over ("x x x x", a filler) spells no value.
    const enough =
      run !== undefined &&
      (run.spelled >= minSpelled ||
        (run.spelled > 0 && (run.units >= MIN_READ_OUT || run.chars.length >= MIN_READ_OUT_CHARS)));
    if (run !== undefined && enough && new Set(run.chars).size > 1) out.push({ ...run, end: lastCharEnd });
    run = undefined;
    pendingRepeat = 1;
  };
  const abbreviations = new Set<number>();
  if (content.includes(".")) {
    for (const a of content.matchAll(ABBREVIATION)) abbreviations.add(a.index).add(a.index + 2);
  }
  for (const m of content.matchAll(WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    let unit = spelledUnit(m[0]);
    if (unit !== undefined && (abbreviations.has(start) || inContraction(content, start, end))) unit = undefined;
    if (run !== undefined && (unit === undefined || !GAP.test(content.slice(lastEnd, start)))) close();
    if (unit === undefined) {
      lastEnd = end;
      continue;
    }
    if (run === undefined) {
      // A run starts with a character, or with a word that says what the next one is.
      run = { start, end, chars: "", spelled: 0, units: 0 };
    }
    if (unit.kind === "repeat") {
      // "double", "triple": said only of characters read out, so it counts as one.
      pendingRepeat = unit.times;
      run.spelled += 1;
    } else if (unit.kind === "char") {
      run.chars += unit.chars.toLowerCase().repeat(pendingRepeat);
      run.units += 1;
      // "a" and "I" between spaces are as often the words as letters read out: they spell, but do not count.
      if (unit.spelled && !(/^[ai]$/i.test(m[0]) && isProse(content, start, end))) run.spelled += 1;
      pendingRepeat = 1;
      lastCharEnd = end;
    }
    lastEnd = end;
  }
  close();
  return out;
}

/**
 * Values spelled out character by character: letters joined by separators, phonetic-alphabet
 * runs, digits read out in words with "double" / "triple", mixed words and digits (see the module
 * doc). The span covers the run from its first to its last spelled character.
 */
export function detectSpelledValues(content: string): PIIMatch[] {
  const out: PIIMatch[] = [];
  for (const run of spelledRuns(content)) {
    // A run that opens with a case or repeat word only: start at its first character.
    out.push({ text: content.slice(run.start, run.end), start: run.start, end: run.end });
  }
  return out;
}
