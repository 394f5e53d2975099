/**
 * The embedded default index: a LangChain `VectorStore` held in process memory: an inverted index
 * over sparse (lexical) vectors with a candidate pass over selective terms, a column scan over
 * dense ones.
 */
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { VectorStore } from "@langchain/core/vectorstores";
import { InvalidInput } from "../errors.js";
import {
  DEFAULT_FIRST_PASS,
  firstPassOptions,
  type FirstPassOptions,
  type SearchCost,
  type SearchStats,
  SparseSearcher,
  type SparseRowsView,
} from "./sparse-search.js";
import { Postings } from "./postings.js";
import {
  checkSparse,
  denseOf,
  planDense,
  planSparse,
  type QueryPlan,
  sparseOf,
  type SparseVector,
  storedEntries,
} from "./sparse-vector.js";
import {
  DEFAULT_IN_MEMORY_VECTOR_INDEX,
  type InMemoryVectorIndexOptions,
  SPARSE_MAX_NONZERO_SHARE,
  type VectorLayout,
} from "./memory-vector-options.js";
import { FilterMasks } from "./filter-masks.js";
import { SparseRows } from "./sparse-rows.js";
import { TopK } from "./top-k.js";
import { DenseColumns } from "./dense-columns.js";
import {
  type AddToIndexOptions,
  checkOneVectorPerDocument,
  type DeleteFromIndexParams,
  type DocumentPredicate,
  type InMemoryFilter,
  resolveIds,
  toPredicate,
} from "./vector-index-common.js";

export {
  type AddToIndexOptions,
  checkOneVectorPerDocument,
  type DeleteFromIndexParams,
  type DocumentPredicate,
  type InMemoryFilter,
  matchesMetadataFilter,
  type MetadataFilter,
  type MetadataScalar,
  resolveIds,
} from "./vector-index-common.js";
export { DEFAULT_FIRST_PASS, type FirstPassOptions, type SearchCost, type SearchStats } from "./sparse-search.js";
export {
  DEFAULT_IN_MEMORY_VECTOR_INDEX,
  type InMemoryVectorIndexOptions,
  SPARSE_MAX_NONZERO_SHARE,
  type VectorLayout,
} from "./memory-vector-options.js";

/**
 * An exact in-memory `VectorStore` with stable ids and metadata filters.
 *
 * - `addDocuments(docs, { ids })` / `addVectors(vectors, docs, { ids })` upsert: an id already
 *   stored is replaced.
 * - `similaritySearchVectorWithScore(query, k, filter)` returns cosine **similarity** (higher is
 *   better, in [-1, 1]), the same convention as `ChromaVectorIndex`.
 * - `filter` is a metadata equality object (`{ partition: "p1", kind: "tool" }`, array values mean
 *   "any of") or a predicate over the stored document.
 *
 * Vectors are stored unit-normalised, in one of two layouts:
 *
 * - **sparse** (lexical vectors, the default while vectors are sparse): each vector's nonzero
 *   entries, and per dimension a posting list of the rows nonzero there. A query walks the
 *   posting lists of its selective terms and scores the best tools met exactly (the candidate
 *   pass, {@link FirstPassOptions}); with the pass off, or when every term is selective, it walks
 *   the lists of all its terms, which is exact (a row on none of them scores exactly 0, what a
 *   full scan gives it). About 14 bytes per nonzero entry (its row's contiguous copy, 6, and
 *   its posting, 8), not 4 per dimension; a metadata filter is checked on a byte per slot.
 * - **dense**: one contiguous column-major `Float32Array`, every row scored on each dimension
 *   where the query is nonzero (4 bytes per dimension per row). Deletes move the last row into
 *   the freed slot.
 *
 * A vector with a dense part (e.g. a blend of lexical and word vectors) is exact in the sparse
 * layout by the same argument: its dense dimensions' posting lists hold every row, so they are
 * walked in full, which costs what the dense scan costs for those dimensions.
 */
export class InMemoryVectorIndex extends VectorStore {
  declare FilterType: InMemoryFilter;

  private readonly requestedLayout: VectorLayout;
  private current: "dense" | "sparse";
  private dimension = 0;
  /** Dense: every row's values, column by column. */
  private readonly columns: DenseColumns;
  /** Per row (dense) or slot (sparse; `undefined` once deleted). */
  private rowIds: Array<string | undefined> = [];
  private rowDocs: Array<Document | undefined> = [];
  private rowOf = new Map<string, number>();

  /** Sparse: each slot's nonzero dimensions (ascending) and values, contiguous. */
  private rows = new SparseRows(1);
  /** Sparse: one posting list per dimension (created at its first entry). */
  private postings: Array<Postings | undefined> = [];
  /** Sparse: slots deleted or replaced, still in the posting lists until the next compaction. */
  private deadSlots = 0;
  /** Sparse: which slots the metadata filters searched with keep. */
  private readonly masks = new FilterMasks();
  /** Sparse: the searches, with their scratch buffers and counts. */
  private readonly searcher: SparseSearcher;

  constructor(embeddings: EmbeddingsInterface, options: InMemoryVectorIndexOptions = {}) {
    super(embeddings, options);
    this.columns = new DenseColumns(
      Math.max(1, options.initialCapacity ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.initialCapacity),
    );
    this.requestedLayout = options.layout ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.layout;
    if (!["auto", "dense", "sparse"].includes(this.requestedLayout)) {
      throw new InvalidInput(`InMemoryVectorIndex: layout must be "auto", "dense" or "sparse".`, {
        context: { layout: this.requestedLayout },
      });
    }
    this.current = this.requestedLayout === "dense" ? "dense" : "sparse";
    const firstPass = options.firstPass ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.firstPass;
    this.searcher = new SparseSearcher(firstPass === false ? undefined : firstPassOptions(firstPass));
  }

  _vectorstoreType(): string {
    return "tool-lessons-memory";
  }

  /** Number of stored documents, without a filter. */
  get size(): number {
    return this.rowOf.size;
  }

  /** The layout the vectors are held in now (`auto` starts sparse and may turn dense). */
  get layout(): "dense" | "sparse" {
    return this.current;
  }

  /** How the sparse layout's searches went since the index was built (see {@link SearchStats}). */
  get searchStats(): Readonly<SearchStats> {
    return { ...this.searcher.stats };
  }

  private get view(): SparseRowsView {
    const { rowIds, rowDocs, rows, postings, dimension } = this;
    return { rowIds, rowDocs, rows, postings, dimension, live: this.rowOf.size };
  }

  /** Embeds and upserts documents; returns their ids in order. */
  async addDocuments(documents: DocumentInterface[], options?: AddToIndexOptions): Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((d) => d.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /** Upserts precomputed vectors with their documents; returns their ids in order. */
  async addVectors(
    vectors: number[][],
    documents: DocumentInterface[],
    options?: AddToIndexOptions,
  ): Promise<string[]> {
    return this.add(vectors, documents, options);
  }

  /**
   * {@link addVectors} for vectors given by their nonzero entries (the package's lexical
   * embeddings): held as they are in the sparse layout, never widened to the dimension.
   * @throws InvalidInput for a vector of another dimension, or with indexes out of order.
   */
  async addSparseVectors(
    vectors: readonly SparseVector[],
    documents: DocumentInterface[],
    options?: AddToIndexOptions,
  ): Promise<string[]> {
    return this.add(vectors, documents, options);
  }

  private add(
    vectors: ReadonlyArray<readonly number[] | SparseVector>,
    documents: DocumentInterface[],
    options: AddToIndexOptions | undefined,
  ): Promise<string[]> {
    checkOneVectorPerDocument(vectors, documents);
    const ids = resolveIds(documents, options?.ids);
    let dense = false;
    for (let i = 0; i < vectors.length; i++) {
      const vector = vectors[i];
      const sparse = !Array.isArray(vector) ? (vector as SparseVector) : undefined;
      const length = sparse?.dimension ?? (vector as readonly number[]).length;
      if (this.dimension === 0 && this.rowOf.size === 0) this.setDimension(length);
      if (length !== this.dimension) {
        throw new InvalidInput(
          `Vector of length ${length} does not match the index dimension ${this.dimension}; every vector in one index must come from the same embeddings.`,
          { context: { id: ids[i], length, dimension: this.dimension } },
        );
      }
      if (sparse) checkSparse(sparse, this.dimension);
      if (!dense && this.requestedLayout === "auto" && this.current === "sparse") {
        let nonzero = 0;
        if (sparse) for (let j = 0; j < sparse.value.length; j++) nonzero += sparse.value[j] !== 0 ? 1 : 0;
        else for (const x of vector as readonly number[]) if (x !== 0) nonzero++;
        dense = nonzero > SPARSE_MAX_NONZERO_SHARE * length;
      }
    }
    if (dense) this.toDense();
    for (let i = 0; i < vectors.length; i++) {
      const doc = documents[i];
      const stored = new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata }, id: ids[i] });
      const vector = vectors[i];
      const sparse = Array.isArray(vector) ? sparseOf(vector) : (vector as SparseVector);
      if (this.current === "dense") this.putDense(ids[i], sparse, stored);
      else this.putSparse(ids[i], sparse, stored);
    }
    this.maybeCompact();
    // Only a tail grown to a quarter of its list is merged here (each entry copied a bounded
    // number of times); a write of a few rows copies no list.
    if (this.current === "sparse") this.searcher.settle(this.view, "write");
    return Promise.resolve(ids);
  }

  private setDimension(dimension: number): void {
    if (!Number.isInteger(dimension) || dimension < 1) {
      throw new InvalidInput(`Vectors must have at least one dimension, got ${dimension}.`, { context: { dimension } });
    }
    this.dimension = dimension;
    if (this.current === "dense") this.columns.reset(dimension);
    else {
      this.postings = new Array<Postings | undefined>(dimension);
      this.rows = new SparseRows(dimension);
    }
  }

  private putDense(id: string, vector: SparseVector, doc: Document): void {
    let row = this.rowOf.get(id);
    if (row === undefined) {
      row = this.rowIds.length;
      this.columns.ensure(row + 1);
      this.rowIds.push(id);
      this.rowDocs.push(doc);
      this.rowOf.set(id, row);
    }
    this.columns.write(row, vector);
    this.rowDocs[row] = doc;
  }

  /** A new slot for the vector; a replaced id's old slot is left dead until the next compaction. */
  private putSparse(id: string, vector: SparseVector, doc: Document): void {
    const old = this.rowOf.get(id);
    if (old !== undefined) this.killSlot(old);
    // The float32s the dense layout would store; a zero there adds nothing to any score.
    const { dims, values } = storedEntries(vector);
    this.appendSlot(id, doc, dims, values);
  }

  private appendSlot(id: string, doc: Document, dims: ArrayLike<number>, values: ArrayLike<number>): void {
    const slot = this.rowIds.length;
    this.rowIds.push(id);
    this.rowDocs.push(doc);
    this.rows.append(dims, values);
    this.masks.added(slot, doc);
    this.rowOf.set(id, slot);
    for (let j = 0; j < dims.length; j++) {
      let list = this.postings[dims[j]];
      if (list === undefined) this.postings[dims[j]] = list = new Postings();
      list.push(slot, values[j]);
    }
  }

  private killSlot(slot: number): void {
    const id = this.rowIds[slot];
    if (id === undefined) return;
    this.rowOf.delete(id);
    this.rowIds[slot] = undefined;
    this.rowDocs[slot] = undefined;
    this.deadSlots++;
  }

  /** Renumbers the live slots and rebuilds the posting lists once dead slots outnumber live ones. */
  private maybeCompact(): void {
    if (this.current !== "sparse" || this.deadSlots < 64 || this.deadSlots <= this.rowOf.size) return;
    const ids = this.rowIds;
    const docs = this.rowDocs;
    const rows = this.rows;
    this.masks.clear();
    this.rowIds = [];
    this.rowDocs = [];
    this.rows = new SparseRows(this.dimension);
    this.rowOf = new Map();
    this.postings = new Array<Postings | undefined>(this.dimension);
    this.deadSlots = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot];
      if (id !== undefined) this.appendSlot(id, docs[slot]!, rows.dimsOf(slot), rows.valuesOf(slot));
    }
  }

  /** Moves every live vector into the dense layout (for good: `auto` met a dense vector). */
  private toDense(): void {
    const ids = this.rowIds;
    const docs = this.rowDocs;
    const rows = this.rows;
    const live = this.rowOf.size;
    this.current = "dense";
    this.columns.reset(this.dimension, live);
    this.rowIds = [];
    this.rowDocs = [];
    this.rowOf = new Map();
    this.rows = new SparseRows(1);
    this.masks.clear();
    this.postings = [];
    this.deadSlots = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot];
      if (id === undefined) continue;
      const row = this.rowIds.length;
      this.rowIds.push(id);
      this.rowDocs.push(docs[slot]);
      this.rowOf.set(id, row);
      this.columns.set(row, rows.dimsOf(slot), rows.valuesOf(slot));
    }
  }

  private removeRow(row: number): void {
    if (this.current === "sparse") {
      this.killSlot(row);
      return;
    }
    const last = this.rowIds.length - 1;
    const id = this.rowIds[row]!;
    if (row !== last) {
      this.columns.move(last, row);
      const movedId = this.rowIds[last]!;
      this.rowIds[row] = movedId;
      this.rowDocs[row] = this.rowDocs[last];
      this.rowOf.set(movedId, row);
    }
    this.rowIds.pop();
    this.rowDocs.pop();
    this.rowOf.delete(id);
  }

  /**
   * Removes documents by id and/or by filter. With no ids and no filter nothing is removed; an
   * empty metadata filter is refused rather than taken to mean "everything" (use {@link clear}).
   * @throws InvalidInput for an empty metadata filter.
   */
  override async delete(params: DeleteFromIndexParams<InMemoryFilter> = {}): Promise<void> {
    const keep = toPredicate(params.filter);
    if (params.filter !== undefined && keep === undefined) {
      throw new InvalidInput("delete() got an empty filter; call clear() to remove every document.");
    }
    for (const id of params.ids ?? []) {
      const row = this.rowOf.get(id);
      if (row !== undefined) this.removeRow(row);
    }
    if (keep !== undefined) {
      for (let row = this.rowIds.length - 1; row >= 0; row--) {
        const doc = this.rowDocs[row];
        if (doc !== undefined && keep(doc)) this.removeRow(row);
      }
    }
    this.maybeCompact();
  }

  /** Removes every document; the next vector added sets the dimension (and, for `auto`, the layout) afresh. */
  clear(): void {
    this.rowIds = [];
    this.rowDocs = [];
    this.rowOf = new Map();
    this.dimension = 0;
    this.columns.reset(0);
    this.rows = new SparseRows(1);
    this.masks.clear();
    this.postings = [];
    this.deadSlots = 0;
    this.current = this.requestedLayout === "dense" ? "dense" : "sparse";
  }

  /**
   * The `k` documents most similar to `query`, best first, with cosine similarity (higher is
   * better). In the dense layout every stored vector is scored. In the sparse layout the request's
   * selective terms find candidates and those are scored exactly (the candidate pass, option
   * `firstPass`), or, when every term is selective or the pass is off, the posting lists of all its
   * terms are walked, which gives {@link exhaustiveSearchVectorWithScore}'s results exactly.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    return this.search(query, k, filter, false);
  }

  /** {@link similaritySearchVectorWithScore} for a query given by its nonzero entries. */
  async similaritySearchSparseWithScore(
    query: SparseVector,
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    return this.search(query, k, filter, false);
  }

  /**
   * {@link similaritySearchVectorWithScore} (dense or sparse query) as `[tool, score, text]`: the
   * stored document's `metadata.tool` and `pageContent`, read where they are, with no copy of the
   * document (the router reads these three from every hit of every search it makes).
   */
  async searchToolHits(
    query: readonly number[] | SparseVector,
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[string, number, string][]> {
    const top = this.searchTop(query, k, filter, false);
    if (top === undefined) return [];
    return top.sorted().map(([row, score]) => {
      const doc = this.rowDocs[row]!;
      return [String(doc.metadata.tool), score, doc.pageContent];
    });
  }

  /**
   * {@link similaritySearchVectorWithScore} scoring every stored vector, in either layout: the
   * reference the inverted search and the candidate pass are checked against (tests,
   * `bench/routing-latency.ts`).
   */
  async exhaustiveSearchVectorWithScore(
    query: number[] | SparseVector,
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    return this.search(query, k, filter, true);
  }

  private async search(
    query: readonly number[] | SparseVector,
    k: number,
    filter: InMemoryFilter | undefined,
    exhaustive: boolean,
  ): Promise<[DocumentInterface, number][]> {
    const top = this.searchTop(query, k, filter, exhaustive);
    return top === undefined ? [] : this.finish(top);
  }

  /** The best rows of a search (undefined when the index is empty or k is not positive). */
  private searchTop(
    query: readonly number[] | SparseVector,
    k: number,
    filter: InMemoryFilter | undefined,
    exhaustive: boolean,
  ): TopK | undefined {
    if (this.rowOf.size === 0 || k <= 0) return undefined;
    const plan = this.plan(query);
    if (this.current === "dense") {
      return this.select(this.columns.score(this.rowIds.length, plan), k, toPredicate(filter));
    }
    // The exhaustive scan, the reference, reads each document; the other searches read the masks.
    const docs = this.rowDocs;
    const byDoc = toPredicate(filter);
    return exhaustive
      ? this.searcher.scan(this.view, plan, k, byDoc && ((slot) => byDoc(docs[slot]!)))
      : this.searcher.search(this.view, plan, k, this.masks.rowFilter(filter, docs));
  }

  /**
   * What a top-`k` search walks in the sparse layout with every list walked ({@link SearchCost}; for benchmarks).
   * @throws InvalidInput in the dense layout, or for a query of the wrong length.
   */
  async searchCost(query: number[] | SparseVector, k: number): Promise<SearchCost> {
    if (this.current !== "sparse") throw new InvalidInput("searchCost() describes the sparse layout only.");
    if (this.rowOf.size === 0 || k <= 0) return this.searcher.cost(this.view, undefined, 0);
    const plan = this.plan(query);
    const hits = this.searcher.scan(this.view, plan, k, undefined).sorted();
    return this.searcher.cost(this.view, plan, hits.length > 0 ? hits[hits.length - 1][1] : 0);
  }

  /**
   * Orders now what the searches after a bulk write would otherwise merge (the long tails the
   * write left on the lists the candidate pass walks in part); the short tails of a write of a
   * few rows are left for the searches to take apart, so settling after one card copies no list.
   * `whole`: every list in order.
   */
  settle(whole = false): void {
    if (this.current === "sparse") this.searcher.settle(this.view, whole ? "whole" : "bulk");
  }

  /** The query's plan, checked against the index's dimension. */
  private plan(query: readonly number[] | SparseVector): QueryPlan | undefined {
    const sparse = Array.isArray(query) ? undefined : (query as SparseVector);
    const length = sparse?.dimension ?? (query as readonly number[]).length;
    if (length !== this.dimension) {
      throw new InvalidInput(
        `Query vector of length ${length} does not match the index dimension ${this.dimension}; embed the query with the embeddings that built the index.`,
        { context: { length, dimension: this.dimension } },
      );
    }
    if (sparse === undefined) return planDense(query as readonly number[]);
    checkSparse(sparse, this.dimension);
    return planSparse(sparse);
  }

  private finish(top: TopK): [DocumentInterface, number][] {
    return top.sorted().map(([row, score]) => [this.copyDoc(row), score]);
  }

  /** Dense layout: the best `k` rows kept by the filter. */
  private select(scores: Float64Array, k: number, keep: DocumentPredicate | undefined): TopK {
    const top = new TopK(Math.min(k, this.rowOf.size), (row) => this.rowIds[row]!);
    const ids = this.rowIds;
    for (let row = 0; row < ids.length; row++) {
      const s = scores[row];
      if (!top.admits(s) || ids[row] === undefined) continue;
      if (keep !== undefined && !keep(this.rowDocs[row]!)) continue;
      top.push(s, row);
    }
    return top;
  }

  private copyDoc(row: number): Document {
    const doc = this.rowDocs[row]!;
    return new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata }, id: doc.id });
  }

  /** The stored documents with these ids, in the order asked; unknown ids are skipped. */
  async getByIds(ids: readonly string[]): Promise<DocumentInterface[]> {
    const out: DocumentInterface[] = [];
    for (const id of ids) {
      const row = this.rowOf.get(id);
      if (row !== undefined) out.push(this.copyDoc(row));
    }
    return out;
  }

  /** The stored (unit-normalised) vector of an id, or undefined. */
  getVector(id: string): number[] | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined) return undefined;
    if (this.current === "sparse") {
      return denseOf({
        dimension: this.dimension,
        index: Int32Array.from(this.rows.dimsOf(row)),
        value: this.rows.valuesOf(row),
      });
    }
    return this.columns.get(row);
  }

  /** Number of stored documents the filter keeps (all of them without a filter). */
  async count(filter?: InMemoryFilter): Promise<number> {
    const keep = toPredicate(filter);
    if (keep === undefined) return this.rowOf.size;
    let c = 0;
    for (const doc of this.rowDocs) if (doc !== undefined && keep(doc)) c++;
    return c;
  }

  /** Builds an index from texts (one metadata object per text, or one for all). */
  static override async fromTexts(
    texts: string[],
    metadatas: object[] | object,
    embeddings: EmbeddingsInterface,
    options: InMemoryVectorIndexOptions = {},
  ): Promise<InMemoryVectorIndex> {
    const docs = texts.map(
      (pageContent, i) =>
        new Document({
          pageContent,
          metadata: {
            ...(Array.isArray(metadatas)
              ? (metadatas[i] as Record<string, unknown>)
              : (metadatas as Record<string, unknown>)),
          },
        }),
    );
    return InMemoryVectorIndex.fromDocuments(docs, embeddings, options);
  }

  /** Builds an index from documents (ids taken from `document.id` when present). */
  static override async fromDocuments(
    docs: DocumentInterface[],
    embeddings: EmbeddingsInterface,
    options: InMemoryVectorIndexOptions = {},
  ): Promise<InMemoryVectorIndex> {
    const index = new InMemoryVectorIndex(embeddings, options);
    await index.addDocuments(docs);
    return index;
  }
}
