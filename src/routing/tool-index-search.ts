/**
 * The routing index's searches of its store (`tool-index.ts`): hits as `[tool, similarity, text]`,
 * read in place from the package's own in-memory store (no document copied), and the answers of
 * the last few requests kept while nothing routing reads changes.
 */
import type { VectorStore } from "@langchain/core/vectorstores";
import { type RoutingVector, unit } from "./card-vectors.js";
import type { InMemoryVectorIndex } from "./memory-vector-store.js";
import { denseOf, isSparse, type SparseVector, sparseUnit } from "./sparse-vector.js";
import { type CheckedVectorStore, toSimilarity } from "./vector-store-contract.js";

/** Request vectors whose card scores and wording terms are kept while nothing changes ({@link IndexSearches.scored}). */
export const SCORED_KEPT = 4;

/** What a route scores: every card's best score and what the wordings add, per tool. */
export interface Scored {
  cards: ReadonlyMap<string, number>;
  terms: ReadonlyMap<string, number>;
}

/** One index's searches (see the file's comment). */
export class IndexSearches {
  /** The last request vector searched and its unit-length form ({@link unitQuery}). */
  private lastUnit: { from: RoutingVector; to: number[] | SparseVector } | undefined;
  /** {@link scored}'s last answers, by request vector. */
  private readonly kept = new Map<RoutingVector, Scored & { partition: string; revision: number }>();

  /**
   * @param sparseStore the store when it is the package's in-memory index with its own searches
   *   (then hits are read in place and sparse queries stay sparse), else undefined.
   */
  constructor(
    private readonly store: VectorStore,
    private readonly checked: CheckedVectorStore,
    private readonly sparseStore: () => InMemoryVectorIndex | undefined,
  ) {}

  /** The store's hits for a request vector, as `[tool, cosine similarity, text]`. */
  async search(vector: RoutingVector, k: number, filter: Record<string, string>): Promise<[string, number, string][]> {
    const kind = await this.checked.scoreKind();
    const sparseStore = this.sparseStore();
    if (sparseStore) {
      const hits = await sparseStore.searchToolHits(this.unitQuery(vector), k, filter);
      if (kind !== "similarity") for (const hit of hits) hit[1] = toSimilarity(kind, hit[1]);
      return hits;
    }
    const hits = await this.store.similaritySearchVectorWithScore(
      unit(isSparse(vector) ? denseOf(vector) : vector),
      k,
      filter,
    );
    return hits.map(([doc, raw]) => [String(doc.metadata.tool), toSimilarity(kind, raw), doc.pageContent]);
  }

  /**
   * A request vector at unit length, as the in-memory store takes it: the last one asked is kept,
   * since a route searches the cards and then the wordings with the same vector.
   */
  private unitQuery(vector: RoutingVector): number[] | SparseVector {
    const last = this.lastUnit;
    if (last?.from === vector) return last.to;
    const to = isSparse(vector) ? sparseUnit(vector) : unit(vector);
    this.lastUnit = { from: vector, to };
    return to;
  }

  /**
   * What `compute` gives for a request vector, kept for the last {@link SCORED_KEPT} vectors while
   * the partition's `revision()` stands (nothing routing reads changed): a review asks the route
   * and the wording terms of one request one after the other, and the second is not searched
   * again. An answer whose computation saw the revision move is not kept.
   */
  async scored(
    partition: string,
    vector: RoutingVector,
    revision: () => number,
    compute: () => Promise<Scored>,
  ): Promise<Scored> {
    const at = revision();
    const hit = this.kept.get(vector);
    if (hit?.partition === partition && hit.revision === at) return hit;
    const answer = await compute();
    if (revision() === at) {
      if (this.kept.size >= SCORED_KEPT) this.kept.clear();
      this.kept.set(vector, { ...answer, partition, revision: at });
    }
    return answer;
  }
}
