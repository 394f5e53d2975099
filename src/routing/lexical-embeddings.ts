/**
 * Offline, deterministic text embeddings for routing: TF-IDF over stems plus character n-grams,
 * hashed into a fixed number of dimensions. No model, no download, no network; the same text and
 * the same fitted state give the same vector on every machine.
 */
import { Embeddings } from "@langchain/core/embeddings";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { splitWords } from "../text/tokenize.js";
import {
  countNumbers,
  type FeatureInfo,
  FeatureTable,
  NGRAM_PREFIX,
  NUMBER_FEATURE,
  WORD_PREFIX,
  wordFeatures,
} from "./lexical-features.js";
import type { SparseVector } from "./sparse-vector.js";

/** Options of {@link LexicalEmbeddings}. Every field is optional; see {@link DEFAULT_LEXICAL_EMBEDDINGS}. */
export interface LexicalEmbeddingsOptions {
  /**
   * Length of each vector. Words and n-grams are hashed (with a sign) into this many buckets, so a
   * larger dimension means fewer collisions. A vector is nonzero on a few hundred buckets only,
   * and the in-memory index keeps just those (its sparse layout), so its memory grows with a
   * tool's words, not with the dimension; a dense store (Chroma over HTTP, the dense layout) pays
   * 4 bytes per dimension per tool. Before any learning, on MetaTool, 2048
   * routes clearly better than 1024 and 4096 a little better again (`bench/embeddings.ts`); once
   * tools carry example requests, their texts hold many more words and n-grams, and collisions
   * cost more: in the learning simulation (three eval folds), 8192 beat 2048 by about 1.5 points
   * top-1 and recall@5, while 16384 gained nothing more.
   * @default 8192
   */
  dimension?: number;
  /**
   * Share of the similarity that comes from character n-grams rather than whole words, in [0, 1].
   * The vector is `sqrt(1 - w) * words + sqrt(w) * ngrams` (each part unit length), so the cosine of
   * two vectors is close to `(1 - w) * wordCosine + w * ngramCosine`. N-grams let "cus_123" meet
   * "cus123", and "json" meet "jsonl", where whole words do not; they also catch stems the
   * suffix stripper misses. 0.5 measured best on MetaTool (0 loses 3 points of top-1).
   * @default 0.5
   */
  ngramWeight?: number;
  /**
   * Character n-gram lengths taken from each word (with `^` and `$` marking its ends).
   * @default [3, 4]
   */
  ngramSizes?: readonly number[];
  /**
   * Count a term repeated `n` times as `1 + ln(n)` instead of `n`, so one repeated word does not
   * swamp the rest of a text.
   * @default true
   */
  sublinearTf?: boolean;
  /**
   * Seed mixed into every hash: two embeddings with different seeds put words in different buckets.
   * @default 0
   */
  seed?: number;
  /**
   * Count every number, raw ("3.14") or masked the way the recorder keeps it ("#.##"), as one
   * more word, `#`. Learned example requests are masked, live requests are not: with this on,
   * "what is 3.2^4?" meets a calculator that learned "calculate #.#^#". States saved before this
   * option existed load with it off, so they give the vectors they gave.
   * @default true
   */
  numbers?: boolean;
}

/** The defaults applied to every {@link LexicalEmbeddingsOptions} field left unset. */
export const DEFAULT_LEXICAL_EMBEDDINGS: Readonly<Required<LexicalEmbeddingsOptions>> = Object.freeze({
  dimension: 8192,
  ngramWeight: 0.5,
  ngramSizes: Object.freeze([3, 4]),
  sublinearTf: true,
  seed: 0,
  numbers: true,
});

/** The fitted state of a {@link LexicalEmbeddings}, as plain JSON (see `toJSON` / `fromJSON`). */
export interface LexicalEmbeddingsState {
  /** Format tag, checked on load. */
  kind: "tool-lessons/lexical-embeddings";
  /** Format version, checked on load. */
  version: 1;
  /** The options the vectors were made with. */
  options: Required<LexicalEmbeddingsOptions>;
  /** Number of texts fitted. */
  documentCount: number;
  /** `[feature, number of fitted texts containing it]`, sorted by feature. */
  documentFrequencies: Array<[string, number]>;
}

const stateSchema = z.object({
  kind: z.literal("tool-lessons/lexical-embeddings"),
  version: z.literal(1),
  options: z.object({
    dimension: z.number().int().positive(),
    ngramWeight: z.number().min(0).max(1),
    ngramSizes: z.array(z.number().int().positive()),
    sublinearTf: z.boolean(),
    seed: z.number().int(),
    numbers: z.boolean().default(false),
  }),
  documentCount: z.number().int().nonnegative(),
  documentFrequencies: z.array(z.tuple([z.string(), z.number().int().positive()])),
});

/** Word features and n-gram features of one text, with raw counts. */
interface TextFeatures {
  words: Map<string, number>;
  ngrams: Map<string, number>;
}

/** FNV-1a over UTF-16 code units, then a murmur3 finaliser so low and high bits both mix. */
function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Extracts the word and n-gram features of a text. Pure: exported for tests and for callers that
 * want to see why two texts meet. With `numberFeature`, each number also counts as the word `#`.
 */
export function lexicalFeatures(text: string, ngramSizes: readonly number[], numberFeature = true): TextFeatures {
  const words = new Map<string, number>();
  const ngrams = new Map<string, number>();
  for (const word of splitWords(text)) {
    const features = wordFeatures(word, ngramSizes);
    if (features.stem === undefined) continue;
    words.set(features.stem, (words.get(features.stem) ?? 0) + 1);
    for (const g of features.ngrams) ngrams.set(g, (ngrams.get(g) ?? 0) + 1);
  }
  // A number, raw ("3.14") or masked as the recorder keeps it ("#.##"), is one feature: its shape
  // class. So requests for a calculation meet the examples a tool learned from masked requests.
  const numbers = countNumbers(text);
  if (numbers > 0 && numberFeature) words.set(NUMBER_FEATURE, numbers);
  return { words, ngrams };
}

/**
 * Lexical embeddings: stems weighted by rarity (IDF) plus a smaller share of character n-grams,
 * signed-hashed into `dimension` buckets and L2-normalised, so a dot product is a cosine.
 *
 * Call {@link LexicalEmbeddings.fit} with the texts that will be indexed (e.g. every tool's text)
 * before embedding them: rare words then count for more than common ones. Unfitted, every term
 * weighs 1. Refitting changes the vectors, so re-embed what an index holds after a refit; save the
 * state with `toJSON()` to rebuild an index identically.
 *
 * @example
 * const embeddings = new LexicalEmbeddings().fit(tools.map((t) => `${t.name} ${t.description}`));
 * const store = new InMemoryVectorIndex(embeddings);
 */
export class LexicalEmbeddings extends Embeddings {
  /** The resolved options. */
  readonly options: Readonly<Required<LexicalEmbeddingsOptions>>;
  /** The features met, interned: bucket, sign and fitted count of each. */
  private features: FeatureTable;
  private fittedCount = 0;
  /** Per bucket, the word part's and the n-gram part's sums while a text is embedded (zero between texts). */
  private wordSums: Float64Array;
  private ngramSums: Float64Array;
  private marks: Uint8Array;

  constructor(options: LexicalEmbeddingsOptions = {}) {
    super({});
    const resolved: Required<LexicalEmbeddingsOptions> = {
      dimension: options.dimension ?? DEFAULT_LEXICAL_EMBEDDINGS.dimension,
      ngramWeight: options.ngramWeight ?? DEFAULT_LEXICAL_EMBEDDINGS.ngramWeight,
      ngramSizes: [...(options.ngramSizes ?? DEFAULT_LEXICAL_EMBEDDINGS.ngramSizes)],
      sublinearTf: options.sublinearTf ?? DEFAULT_LEXICAL_EMBEDDINGS.sublinearTf,
      seed: options.seed ?? DEFAULT_LEXICAL_EMBEDDINGS.seed,
      numbers: options.numbers ?? DEFAULT_LEXICAL_EMBEDDINGS.numbers,
    };
    if (!Number.isInteger(resolved.dimension) || resolved.dimension < 1) {
      throw new InvalidInput(`LexicalEmbeddings: dimension must be a positive integer, got ${resolved.dimension}.`, {
        context: { dimension: resolved.dimension },
      });
    }
    if (!(resolved.ngramWeight >= 0 && resolved.ngramWeight <= 1)) {
      throw new InvalidInput(`LexicalEmbeddings: ngramWeight must be in [0, 1], got ${resolved.ngramWeight}.`, {
        context: { ngramWeight: resolved.ngramWeight },
      });
    }
    if (resolved.ngramSizes.some((n) => !Number.isInteger(n) || n < 1)) {
      throw new InvalidInput("LexicalEmbeddings: ngramSizes must be positive integers.", {
        context: { ngramSizes: resolved.ngramSizes },
      });
    }
    this.options = Object.freeze(resolved);
    this.features = this.newFeatureTable();
    this.wordSums = new Float64Array(resolved.dimension);
    this.ngramSums = new Float64Array(resolved.dimension);
    this.marks = new Uint8Array(resolved.dimension);
  }

  private newFeatureTable(): FeatureTable {
    const { dimension, seed, ngramSizes } = this.options;
    return new FeatureTable(ngramSizes, (key) => ({
      bucket: hash32(key, seed) % dimension,
      sign: hash32(key, seed ^ 0x5bd1e995) & 1 ? -1 : 1,
    }));
  }

  /** Number of texts the IDF weights were fitted on (0 before any fit). */
  get documentCount(): number {
    return this.fittedCount;
  }

  /** True once {@link fit} or {@link partialFit} has seen at least one text. */
  get isFitted(): boolean {
    return this.fittedCount > 0;
  }

  /** Forgets any previous fit and learns IDF weights from `texts`. Returns `this`. */
  fit(texts: readonly string[]): this {
    this.features = this.newFeatureTable();
    this.fittedCount = 0;
    return this.partialFit(texts);
  }

  /** Alias of {@link fit}, for readers used to Keras' `adapt`. */
  adapt(texts: readonly string[]): this {
    return this.fit(texts);
  }

  /** Adds `texts` to the IDF counts without forgetting earlier ones. Returns `this`. */
  partialFit(texts: readonly string[]): this {
    for (const text of texts) {
      this.features.fit(this.features.walk(text, this.options.numbers, true));
      this.fittedCount++;
    }
    return this;
  }

  /**
   * Inverse document frequency of a feature key (`"w:" + stem` or `"g:" + ngram`): smoothed
   * `ln((1 + N) / (1 + df)) + 1`, so a feature unseen in the fit gets the largest weight; 1 before
   * any fit.
   */
  idf(feature: string): number {
    return this.idfOf(this.features.df(feature));
  }

  private idfOf(df: number): number {
    if (this.fittedCount === 0) return 1;
    return Math.log((1 + this.fittedCount) / (1 + df)) + 1;
  }

  /** Embeds one text synchronously into a fresh unit-length (or all-zero) Float32Array. */
  embedToArray(text: string): Float32Array {
    return this.writeDense(text, new Float32Array(this.options.dimension));
  }

  /** Writes the vector's nonzero entries into `out` (all zeros, `dimension` long). */
  private writeDense<T extends { [i: number]: number }>(text: string, out: T): T {
    const { index, value } = this.embedSparse(text);
    for (let j = 0; j < index.length; j++) out[index[j]] = value[j];
    return out;
  }

  /**
   * The nonzero entries of {@link embedToArray}'s vector, by ascending index: a text touches a few
   * hundred of the buckets, so only those are computed (summed in index order, the values are the
   * dense computation's to the bit). What the routing index holds and searches with.
   */
  embedSparse(text: string): SparseVector & { value: Float32Array } {
    const { ngramWeight, numbers, dimension } = this.options;
    const { words, ngrams } = this.features.walk(text, numbers, ngramWeight > 0);
    const { wordSums, ngramSums } = this;
    // Each bucket sums its features in order of first occurrence, as a map from bucket to sum would.
    this.sumPart(words, wordSums);
    this.sumPart(ngrams, ngramSums);
    // Every bucket a feature reached, even where its features cancelled out (a 0 entry, as a map kept it).
    const marks = this.marks;
    const buckets = new Int32Array(words.length + ngrams.length);
    let n = 0;
    for (const list of [words, ngrams]) {
      for (const { bucket } of list) {
        if (marks[bucket] === 1) continue;
        marks[bucket] = 1;
        buckets[n++] = bucket;
      }
    }
    const index = buckets.slice(0, n).sort();
    let wordSquares = 0;
    let ngramSquares = 0;
    for (let j = 0; j < index.length; j++) {
      wordSquares += wordSums[index[j]] * wordSums[index[j]];
      ngramSquares += ngramSums[index[j]] * ngramSums[index[j]];
    }
    const a = Math.sqrt(1 - ngramWeight) / (Math.sqrt(wordSquares) || 1);
    const b = Math.sqrt(ngramWeight) / (Math.sqrt(ngramSquares) || 1);
    const value = new Float32Array(index.length);
    let total = 0;
    for (let j = 0; j < index.length; j++) {
      value[j] = a * wordSums[index[j]] + b * ngramSums[index[j]];
      total += value[j] * value[j];
    }
    for (let j = 0; j < n; j++) wordSums[index[j]] = ngramSums[index[j]] = marks[index[j]] = 0;
    total = Math.sqrt(total);
    if (total > 0) for (let j = 0; j < value.length; j++) value[j] /= total;
    return { dimension, index, value };
  }

  /** Adds each feature's signed, IDF-weighted term frequency into its bucket. */
  private sumPart(features: readonly FeatureInfo[], sums: Float64Array): void {
    const { sublinearTf } = this.options;
    for (const info of features) {
      const tf = sublinearTf ? 1 + Math.log(info.count) : info.count;
      sums[info.bucket] += info.sign * tf * this.idfOf(info.df);
    }
  }

  /** The vector as a plain `number[]`, written from its nonzero entries (no typed-array copy). */
  private embedNumbers(text: string): number[] {
    return this.writeDense(text, new Array<number>(this.options.dimension).fill(0));
  }

  /** Embeds each text (see {@link embedToArray}). */
  async embedDocuments(documents: string[]): Promise<number[][]> {
    return documents.map((d) => this.embedNumbers(d));
  }

  /** Embeds a query the same way as a document. */
  async embedQuery(document: string): Promise<number[]> {
    return this.embedNumbers(document);
  }

  /** The options and fitted IDF counts as plain JSON, sorted so equal states serialise equally. */
  toJSON(): LexicalEmbeddingsState {
    const documentFrequencies = [...this.features.entries()];
    documentFrequencies.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    return {
      kind: "tool-lessons/lexical-embeddings",
      version: 1,
      options: { ...this.options, ngramSizes: [...this.options.ngramSizes] },
      documentCount: this.fittedCount,
      documentFrequencies,
    };
  }

  /**
   * Rebuilds embeddings from {@link toJSON} output (an object, or its JSON text). The result gives
   * exactly the vectors the saved one gave.
   * @throws InvalidInput when the state is not a saved LexicalEmbeddings state.
   */
  static fromJSON(state: unknown): LexicalEmbeddings {
    let raw: unknown = state;
    if (typeof state === "string") {
      try {
        raw = JSON.parse(state);
      } catch (cause) {
        throw new InvalidInput("LexicalEmbeddings.fromJSON: the text is not JSON.", { cause });
      }
    }
    const parsed = stateSchema.safeParse(raw);
    if (!parsed.success) {
      throw new InvalidInput(
        `LexicalEmbeddings.fromJSON: not a saved lexical-embeddings state (${parsed.error.issues[0]?.message ?? "invalid"}). Pass the object returned by toJSON().`,
        { cause: parsed.error },
      );
    }
    const embeddings = new LexicalEmbeddings(parsed.data.options);
    embeddings.fittedCount = parsed.data.documentCount;
    for (const [key, df] of parsed.data.documentFrequencies) embeddings.features.load(key, df);
    return embeddings;
  }
}
