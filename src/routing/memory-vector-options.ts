/** Options of the in-memory index (`memory-vector-store.ts`). */
import { DEFAULT_FIRST_PASS, type FirstPassOptions } from "./sparse-search.js";

/** Options of `InMemoryVectorIndex`. */
export interface InMemoryVectorIndexOptions {
  /**
   * Rows allocated up front; the store doubles its capacity whenever it is full.
   * @default 256
   */
  initialCapacity?: number;
  /**
   * How vectors are held and searched; both layouts are exact and give the same results (scores to
   * the bit, ties broken by id).
   * - `sparse`: each vector's nonzero entries plus an inverted index (per dimension, the rows
   *   nonzero there), so a query touches only the rows sharing a dimension with it: for lexical
   *   vectors, which are nonzero on a few hundred of thousands of dimensions.
   * - `dense`: one column-major `Float32Array`, every row scored on each of the query's nonzero
   *   dimensions: for dense vectors (a hosted embedding model's).
   * - `auto`: sparse until a vector with more than {@link SPARSE_MAX_NONZERO_SHARE} of its entries
   *   nonzero is added, then dense until `InMemoryVectorIndex.clear`.
   * @default "auto"
   */
  layout?: VectorLayout;
  /**
   * The candidate pass of the sparse layout (see {@link FirstPassOptions}): a request walks only
   * the posting lists of its selective terms, and the best tools met are scored exactly. `false`
   * walks every list of the request (exact, and what it costs grows with the tools that share a
   * common term with it).
   * @default DEFAULT_FIRST_PASS ({ termRows: 1000, termShare: 0.01, commonPostings: 50000, rescore: 512, postingBudget: 50000, requireProof: false, wideShare: 0.5, wideTerms: 64, wideRescore: 768 })
   */
  firstPass?: FirstPassOptions | false;
}

/** The defaults applied to every {@link InMemoryVectorIndexOptions} field left unset. */
export const DEFAULT_IN_MEMORY_VECTOR_INDEX: Readonly<Required<InMemoryVectorIndexOptions>> = Object.freeze({
  initialCapacity: 256,
  layout: "auto",
  firstPass: DEFAULT_FIRST_PASS,
});

/**
 * How `InMemoryVectorIndex` holds its vectors (see {@link InMemoryVectorIndexOptions.layout}).
 * - `sparse`: each vector's nonzero entries and an inverted index over them.
 * - `dense`: every entry, in one column-major `Float32Array`.
 * - `auto`: sparse until a dense vector arrives, then dense.
 */
export type VectorLayout = "auto" | "dense" | "sparse";

/**
 * In the `auto` layout, a vector with more than this share of nonzero entries turns the index
 * dense: past it, a posting (row number and value, 8 bytes) costs more to store and to walk than a
 * dense column's float. Lexical vectors hold well under 5% (a few hundred of 8192).
 */
export const SPARSE_MAX_NONZERO_SHARE = 0.5;
