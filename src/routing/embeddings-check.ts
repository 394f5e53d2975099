/**
 * The routing index's check of a user's embeddings: vectors that cannot rank anything are refused
 * at first use with {@link InvalidEmbeddings}, instead of routing silently by tie-breaks. An
 * all-zero batch scores every tool 0, a NaN poisons every cosine it enters, and a request sized
 * unlike the tools meets nothing.
 */
import { InvalidEmbeddings } from "../errors.js";
import type { SparseVector } from "./sparse-vector.js";

/** Why a batch of vectors cannot be routed with. */
export type EmbeddingsProblem = "all_zero" | "non_finite" | "wrong_size";

/** A problem found in a batch, with the sizes when they differ. */
export interface EmbeddingsFinding {
  problem: EmbeddingsProblem;
  /** The length the vectors should have (the first vector's, or the one seen before). */
  dimension?: number;
  /** The length found instead. */
  got?: number;
}

/**
 * What is wrong with a batch, or undefined. Pure. `dimension` is the length seen before (none at
 * first use); `allZeroRefused` refuses a batch whose every vector is all zeros (the first batch of
 * tool texts: one request with no known word may give zeros, a whole card set may not).
 */
export function embeddingsProblem(
  vectors: readonly (readonly number[])[],
  dimension: number | undefined,
  allZeroRefused: boolean,
): EmbeddingsFinding | undefined {
  const entries = vectors.map((v) => (Array.isArray(v) ? { length: v.length, values: v } : { length: 0, values: [] }));
  return entriesProblem(entries, dimension, allZeroRefused);
}

/** {@link embeddingsProblem} for vectors given by their nonzero entries. */
export function sparseProblem(
  vectors: readonly SparseVector[],
  dimension: number | undefined,
  allZeroRefused: boolean,
): EmbeddingsFinding | undefined {
  return entriesProblem(
    vectors.map((v) => ({ length: v.dimension, values: v.value })),
    dimension,
    allZeroRefused,
  );
}

/** Each vector as its length and the values it holds (all of them, or its nonzero entries'). */
function entriesProblem(
  vectors: readonly { length: number; values: ArrayLike<number> }[],
  dimension: number | undefined,
  allZeroRefused: boolean,
): EmbeddingsFinding | undefined {
  if (vectors.length === 0) return undefined;
  const size = dimension ?? vectors[0].length;
  let nonzero = false;
  for (const { length, values } of vectors) {
    if (length !== size || length === 0) return { problem: "wrong_size", dimension: size, got: length };
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (!Number.isFinite(x)) return { problem: "non_finite" };
      if (x !== 0) nonzero = true;
    }
  }
  if (allZeroRefused && !nonzero) return { problem: "all_zero" };
  return undefined;
}

const HOW_TO_FIX: Readonly<Record<EmbeddingsProblem, string>> = Object.freeze({
  all_zero: "every vector of the first batch is all zeros, so every tool would score 0",
  non_finite: "a vector holds a number that is not finite (NaN or Infinity)",
  wrong_size: "vectors differ in length",
});

/**
 * Checks every batch of one embeddings instance: the first batch of documents fully (all-zero,
 * non-finite, sizes), every later batch for non-finite numbers and for the size the first had.
 */
export class EmbeddingsGuard {
  private dimension: number | undefined;

  /**
   * @throws InvalidEmbeddings naming the problem (`context.problem`) and the sizes.
   * @returns the vectors, unchanged.
   */
  check<V extends readonly (readonly number[])[]>(vectors: V, kind: "documents" | "query"): V {
    const first = this.dimension === undefined && kind === "documents";
    this.refuse(embeddingsProblem(vectors, this.dimension, first), kind);
    if (this.dimension === undefined && vectors.length > 0 && kind === "documents") this.dimension = vectors[0].length;
    return vectors;
  }

  /** {@link check} for vectors given by their nonzero entries (a blend the index holds sparse). */
  checkSparse<V extends readonly SparseVector[]>(vectors: V, kind: "documents" | "query"): V {
    const first = this.dimension === undefined && kind === "documents";
    this.refuse(sparseProblem(vectors, this.dimension, first), kind);
    if (this.dimension === undefined && vectors.length > 0 && kind === "documents")
      this.dimension = vectors[0].dimension;
    return vectors;
  }

  private refuse(finding: EmbeddingsFinding | undefined, kind: "documents" | "query"): void {
    if (finding !== undefined) {
      const sizes = finding.problem === "wrong_size" ? ` (expected ${finding.dimension}, got ${finding.got})` : "";
      throw new InvalidEmbeddings(
        `The routing index refused these embeddings: ${HOW_TO_FIX[finding.problem]}${sizes}. ` +
          "Check the embeddings passed as `embeddings` (its model, its dimension setting, that it is loaded), or leave it unset for the offline lexical default.",
        { context: { ...finding, kind } },
      );
    }
  }
}
