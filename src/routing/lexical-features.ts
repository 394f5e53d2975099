/**
 * The features of `LexicalEmbeddings` (word stems and character n-grams), interned: each distinct
 * feature is hashed to its bucket once and keeps its fitted count, and each surface word is cut
 * into its features once, so fitting and embedding a text are a few array steps per word
 * instead of string building and map lookups per n-gram.
 */
import { isContentWord, splitWords, stem } from "../text/tokenize.js";

/** Feature keys: `"w:" + stem` for words, `"g:" + ngram` for character n-grams. */
export const WORD_PREFIX = "w:";
export const NGRAM_PREFIX = "g:";

/** The word feature every number stands for. */
export const NUMBER_FEATURE = "#";

/** Runs of digits or masked digits (`#`), with inner `.` or `,`: one number each. */
const NUMBERS = /[\d#]+(?:[.,][\d#]+)*/g;

/** A surface word's features: its stem (undefined for a stopword) and its character n-grams, in order. */
export interface WordFeatures {
  stem: string | undefined;
  ngrams: readonly string[];
}

/** Stem and n-grams (of `^word$`, each size in turn) of a lowercase surface word. */
export function wordFeatures(word: string, ngramSizes: readonly number[]): WordFeatures {
  if (!isContentWord(word)) return { stem: undefined, ngrams: [] };
  const ngrams: string[] = [];
  const marked = `^${word}$`;
  for (const n of ngramSizes) {
    for (let i = 0; i + n <= marked.length; i++) ngrams.push(marked.slice(i, i + n));
  }
  return { stem: stem(word), ngrams };
}

/** How many numbers a text holds (raw "3.14" or masked "#.##"). */
export function countNumbers(text: string): number {
  return text.match(NUMBERS)?.length ?? 0;
}

/** One distinct feature: its key, bucket and sign, how many fitted texts hold it, and scratch for one text. */
export interface FeatureInfo {
  readonly key: string;
  readonly bucket: number;
  readonly sign: number;
  df: number;
  /** The walk that last met it, and how often it occurs in that walk's text. */
  seen: number;
  count: number;
}

/** A text's distinct features in order of first occurrence, each with its `count` set for this text. */
export interface TextWalk {
  words: FeatureInfo[];
  ngrams: FeatureInfo[];
}

interface CachedWord {
  stem: FeatureInfo | undefined;
  ngrams: readonly FeatureInfo[];
}

/**
 * The interned features of one `LexicalEmbeddings`. Features met in fitted texts are kept for
 * good (their counts are the fitted state); features met only in embedded texts (requests) are
 * kept in a bounded side table, cleared with the word cache when full, so requests never grow
 * the state.
 */
export class FeatureTable {
  private fittedWords = new Map<string, FeatureInfo>();
  private fittedNgrams = new Map<string, FeatureInfo>();
  private transientWords = new Map<string, FeatureInfo>();
  private transientNgrams = new Map<string, FeatureInfo>();
  private words = new Map<string, CachedWord>();
  private stamp = 0;

  constructor(
    private readonly ngramSizes: readonly number[],
    private readonly place: (key: string) => { bucket: number; sign: number },
    private readonly maxCached = 65_536,
  ) {}

  /**
   * The distinct features of `text` (n-grams only with `ngrams`), in order of first occurrence,
   * counts in `count`: what `lexicalFeatures` gives, as interned features.
   */
  walk(text: string, numbers: boolean, ngrams: boolean): TextWalk {
    if (this.words.size >= this.maxCached || this.transientWords.size + this.transientNgrams.size >= this.maxCached) {
      this.words.clear();
      this.transientWords.clear();
      this.transientNgrams.clear();
    }
    const stamp = ++this.stamp;
    const out: TextWalk = { words: [], ngrams: [] };
    for (const surface of splitWords(text)) {
      const word = this.word(surface);
      if (word.stem === undefined) continue;
      meet(word.stem, stamp, out.words);
      if (ngrams) for (const g of word.ngrams) meet(g, stamp, out.ngrams);
    }
    const count = numbers ? countNumbers(text) : 0;
    if (count > 0) {
      const info = this.info(WORD_PREFIX, NUMBER_FEATURE, this.fittedWords, this.transientWords);
      if (info.seen !== stamp) {
        info.seen = stamp;
        out.words.push(info);
      }
      info.count = count;
    }
    return out;
  }

  /** Counts a walked text into the fitted state (each distinct feature once). */
  fit(walk: TextWalk): void {
    for (const info of walk.words) this.bump(info, this.fittedWords, this.transientWords);
    for (const info of walk.ngrams) this.bump(info, this.fittedNgrams, this.transientNgrams);
  }

  /** Fitted texts holding a feature key (`"w:" + stem` or `"g:" + ngram`); 0 when none. */
  df(key: string): number {
    return this.fittedOf(key)?.get(key.slice(WORD_PREFIX.length))?.df ?? 0;
  }

  /** Sets a feature key's fitted count (loading a saved state); keys of neither kind are ignored. */
  load(key: string, df: number): void {
    const fitted = this.fittedOf(key);
    if (fitted === undefined) return;
    const feature = key.slice(WORD_PREFIX.length);
    fitted.set(feature, this.create(key, df));
  }

  /** Every fitted feature key with its count. */
  *entries(): IterableIterator<[string, number]> {
    for (const info of this.fittedWords.values()) yield [info.key, info.df];
    for (const info of this.fittedNgrams.values()) yield [info.key, info.df];
  }

  private fittedOf(key: string): Map<string, FeatureInfo> | undefined {
    const prefix = key.slice(0, WORD_PREFIX.length);
    return prefix === WORD_PREFIX ? this.fittedWords : prefix === NGRAM_PREFIX ? this.fittedNgrams : undefined;
  }

  private bump(info: FeatureInfo, fitted: Map<string, FeatureInfo>, transient: Map<string, FeatureInfo>): void {
    const feature = info.key.slice(WORD_PREFIX.length);
    const kept = fitted.get(feature);
    if (kept !== undefined) {
      kept.df++;
      return;
    }
    // First fitted text with it: the interned object moves over, so cached words keep pointing at it.
    transient.delete(feature);
    info.df = 1;
    fitted.set(feature, info);
  }

  private word(surface: string): CachedWord {
    let cached = this.words.get(surface);
    if (cached !== undefined) return cached;
    const { stem, ngrams } = wordFeatures(surface, this.ngramSizes);
    cached = {
      stem: stem === undefined ? undefined : this.info(WORD_PREFIX, stem, this.fittedWords, this.transientWords),
      ngrams: ngrams.map((g) => this.info(NGRAM_PREFIX, g, this.fittedNgrams, this.transientNgrams)),
    };
    this.words.set(surface, cached);
    return cached;
  }

  private create(key: string, df: number): FeatureInfo {
    const { bucket, sign } = this.place(key);
    return { key, bucket, sign, df, seen: 0, count: 0 };
  }

  private info(
    prefix: string,
    feature: string,
    fitted: Map<string, FeatureInfo>,
    transient: Map<string, FeatureInfo>,
  ): FeatureInfo {
    let info = fitted.get(feature) ?? transient.get(feature);
    if (info === undefined) {
      info = this.create(prefix + feature, 0);
      transient.set(feature, info);
    }
    return info;
  }
}

/** Counts one occurrence of a feature in the walk `stamp`, listing it at its first. */
function meet(info: FeatureInfo, stamp: number, list: FeatureInfo[]): void {
  if (info.seen !== stamp) {
    info.seen = stamp;
    info.count = 1;
    list.push(info);
  } else info.count++;
}
