/**
 * The embedded default index: a LangChain `VectorStore` held in process memory, exact (no
 * approximation): an inverted index over sparse (lexical) vectors, a column scan over dense ones.
 */
import { randomUUID } from "node:crypto";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { VectorStore } from "@langchain/core/vectorstores";
import { InvalidInput } from "../errors.js";

/** A metadata value a filter can test for equality. */
export type MetadataScalar = string | number | boolean;

/**
 * Metadata equality filter: every key must hold the given value (an array means "any of these").
 * `{ partition: "p1", kind: "tool" }` keeps documents of partition p1 that are tools. An empty
 * object keeps everything.
 */
export type MetadataFilter = Readonly<Record<string, MetadataScalar | readonly MetadataScalar[]>>;

/** A predicate over stored documents; it must not change the document it is given. */
export type DocumentPredicate = (doc: DocumentInterface) => boolean;

/** What {@link InMemoryVectorIndex} accepts as a filter. */
export type InMemoryFilter = MetadataFilter | DocumentPredicate;

/** Options of `addDocuments` / `addVectors` on the indexes of this package. */
export interface AddToIndexOptions {
  /**
   * Stable ids, one per document. A document whose id is already stored replaces it (upsert).
   * When absent, `document.id` is used, else a random UUID.
   */
  ids?: readonly string[];
}

/** What `delete` accepts: ids, a filter, or both (a document matching either is removed). */
export interface DeleteFromIndexParams<F> {
  /** Ids to remove; unknown ids are ignored. */
  ids?: readonly string[];
  /** Removes every document the filter keeps. */
  filter?: F;
}

/** Options of {@link InMemoryVectorIndex}. */
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
   *   nonzero is added, then dense until {@link InMemoryVectorIndex.clear}.
   * @default "auto"
   */
  layout?: VectorLayout;
}

/** The defaults applied to every {@link InMemoryVectorIndexOptions} field left unset. */
export const DEFAULT_IN_MEMORY_VECTOR_INDEX: Readonly<Required<InMemoryVectorIndexOptions>> = Object.freeze({
  initialCapacity: 256,
  layout: "auto",
});

/**
 * True when `metadata` satisfies the equality filter (pure; shared by every index so that a filter
 * means the same thing in memory and in Chroma).
 */
export function matchesMetadataFilter(metadata: Readonly<Record<string, unknown>>, filter: MetadataFilter): boolean {
  for (const key of Object.keys(filter)) {
    const want = filter[key];
    const have = metadata[key];
    if (Array.isArray(want)) {
      if (!want.includes(have as MetadataScalar)) return false;
    } else if (have !== want) {
      return false;
    }
  }
  return true;
}

function toPredicate(filter: InMemoryFilter | undefined): DocumentPredicate | undefined {
  if (filter === undefined) return undefined;
  if (typeof filter === "function") return filter;
  if (Object.keys(filter).length === 0) return undefined;
  return (doc) => matchesMetadataFilter(doc.metadata, filter);
}

/** Resolves the ids of a batch: explicit ids, else `document.id`, else a fresh UUID. */
/** @throws InvalidInput unless there is exactly one vector per document. */
export function checkOneVectorPerDocument(vectors: readonly unknown[], documents: readonly unknown[]): void {
  if (vectors.length !== documents.length) {
    throw new InvalidInput(
      `Got ${vectors.length} vectors for ${documents.length} documents; pass one vector per document.`,
      {
        context: { vectors: vectors.length, documents: documents.length },
      },
    );
  }
}

export function resolveIds(documents: readonly DocumentInterface[], ids: readonly string[] | undefined): string[] {
  if (ids !== undefined && ids.length !== documents.length) {
    throw new InvalidInput(`Got ${ids.length} ids for ${documents.length} documents; pass one id per document.`, {
      context: { ids: ids.length, documents: documents.length },
    });
  }
  return documents.map((doc, i) => {
    const id = ids?.[i] ?? doc.id ?? randomUUID();
    if (typeof id !== "string" || id.length === 0) {
      throw new InvalidInput(`Document ${i} has an empty id; ids must be non-empty strings.`, {
        context: { index: i },
      });
    }
    return id;
  });
}

/**
 * Fixed-size min-heap of (score, row) keeping the best `k` rows seen. Ties on score are broken by
 * id (smaller id ranks first), so results do not depend on insertion order.
 */
class TopK {
  readonly scores: Float64Array;
  readonly rows: Int32Array;
  size = 0;

  constructor(
    readonly k: number,
    private readonly idOf: (row: number) => string,
  ) {
    this.scores = new Float64Array(k);
    this.rows = new Int32Array(k);
  }

  /** True when (sa, ra) ranks below (sb, rb). */
  private worse(sa: number, ra: number, sb: number, rb: number): boolean {
    if (sa !== sb) return sa < sb;
    return this.idOf(ra) > this.idOf(rb);
  }

  /** True when a row with this score could enter the heap (cheap pre-check before filtering). */
  admits(score: number): boolean {
    return this.size < this.k || score >= this.scores[0];
  }

  push(score: number, row: number): void {
    const { scores, rows } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, row, scores[parent], rows[parent])) break;
        scores[i] = scores[parent];
        rows[i] = rows[parent];
        i = parent;
      }
      scores[i] = score;
      rows[i] = row;
      return;
    }
    if (!this.worse(scores[0], rows[0], score, row)) return;
    let i = 0;
    const n = this.size;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.worse(scores[r], rows[r], scores[l], rows[l]) ? r : l;
      if (!this.worse(scores[c], rows[c], score, row)) break;
      scores[i] = scores[c];
      rows[i] = rows[c];
      i = c;
    }
    scores[i] = score;
    rows[i] = row;
  }

  /** Rows and scores, best first. */
  sorted(): Array<[row: number, score: number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.size; i++) out.push([this.rows[i], this.scores[i]]);
    out.sort((a, b) => (this.worse(a[1], a[0], b[1], b[0]) ? 1 : this.worse(b[1], b[0], a[1], a[0]) ? -1 : 0));
    return out;
  }
}

/**
 * How {@link InMemoryVectorIndex} holds its vectors (see {@link InMemoryVectorIndexOptions.layout}).
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

const EMPTY_ROWS = new Int32Array(0);
const EMPTY_VALUES = new Float32Array(0);

/**
 * One dimension's posting list: the rows nonzero there and their values, in the order added, and
 * the largest magnitude pushed (a bound on any row's entry; see {@link SearchCost}).
 */
class Postings {
  rows: Int32Array = EMPTY_ROWS;
  values: Float32Array = EMPTY_VALUES;
  length = 0;
  maxAbs = 0;

  push(row: number, value: number): void {
    if (Math.abs(value) > this.maxAbs) this.maxAbs = Math.abs(value);
    if (this.length === this.rows.length) {
      const size = Math.max(4, this.rows.length * 2);
      const rows = new Int32Array(size);
      rows.set(this.rows);
      const values = new Float32Array(size);
      values.set(this.values);
      this.rows = rows;
      this.values = values;
    }
    this.rows[this.length] = row;
    this.values[this.length++] = value;
  }
}

/**
 * The active dimensions of a query, ascending, with their weights (the query's entries over its
 * length). Both layouts score a row as one float64 sum of `weight × value` over these dimensions,
 * added in ascending order (a product with a zero entry adds nothing, so skipping it changes no
 * bit): their scores agree exactly, whatever rows a layout reads.
 */
interface QueryPlan {
  dims: Int32Array;
  weights: Float64Array;
}

/** The plan of a query, or undefined for an all-zero or non-finite query (every score is 0). */
function planQuery(query: readonly number[]): QueryPlan | undefined {
  let s = 0;
  for (let d = 0; d < query.length; d++) s += query[d] * query[d];
  if (!(s > 0) || !Number.isFinite(s)) return undefined;
  const inv = 1 / Math.sqrt(s);
  const active: number[] = [];
  for (let d = 0; d < query.length; d++) if (query[d] !== 0) active.push(d);
  const dims = Int32Array.from(active);
  const weights = new Float64Array(dims.length);
  for (let i = 0; i < dims.length; i++) weights[i] = query[dims[i]] * inv;
  return { dims, weights };
}

/**
 * What one top-k search walks in the sparse layout (see {@link InMemoryVectorIndex.searchCost}):
 * how selective the query's dimensions are, and how much a bound-based ("max-score") walk could
 * skip and stay exact.
 */
export interface SearchCost {
  /** The query's nonzero dimensions that have a posting list. */
  lists: number;
  /** Postings on those lists: what the inverted walk adds up. */
  postings: number;
  /** Distinct rows on those lists: every other row scores exactly 0. */
  rowsMet: number;
  /** The k-th best score (the threshold a row must reach). */
  kthScore: number;
  /** The sum over the lists of the most each can add to one score (|weight| × largest |value|). */
  boundSum: number;
  /**
   * Postings of the lists a max-score walk could leave out and stay exact, knowing the k-th score
   * in advance: the lists of smallest bound whose bounds add up to less than it (an upper limit on
   * what that pruning saves; it also re-scores the rows it met).
   */
  skippablePostings: number;
}

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
 * Vectors are stored unit-normalised, in one of two layouts (both exact, with identical results):
 *
 * - **sparse** (lexical vectors, the default while vectors are sparse): each vector's nonzero
 *   entries, and per dimension a posting list of the rows nonzero there. A query walks only the
 *   posting lists of its own nonzero dimensions, so it touches only the rows that share a term with
 *   it; every other row's score is exactly 0 (no product to sum), what a full scan gives it, and
 *   the top k is then selected over every row's score. Memory is 16 bytes per nonzero entry (its
 *   row's copy and its posting), not 4 per dimension: 100k lexical tools at 8192-d fit in about
 *   half a GB.
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
  private capacity: number;
  private readonly initialCapacity: number;
  /** Dense: value of dimension `d` of row `r` is at `d * capacity + r`. */
  private data = new Float32Array(0);
  /** Per row (dense) or slot (sparse; `undefined` once deleted). */
  private rowIds: Array<string | undefined> = [];
  private rowDocs: Array<Document | undefined> = [];
  private rowOf = new Map<string, number>();

  /** Sparse: each slot's nonzero dimensions (ascending) and values. */
  private slotDims: Int32Array[] = [];
  private slotValues: Float32Array[] = [];
  /** Sparse: one posting list per dimension (created at its first entry). */
  private postings: Array<Postings | undefined> = [];
  /** Sparse: slots deleted or replaced, still in the posting lists until the next compaction. */
  private deadSlots = 0;
  /** Scores, one per row or slot (reused by every search). */
  private scores = new Float64Array(0);

  constructor(embeddings: EmbeddingsInterface, options: InMemoryVectorIndexOptions = {}) {
    super(embeddings, options);
    this.initialCapacity = Math.max(1, options.initialCapacity ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.initialCapacity);
    this.capacity = this.initialCapacity;
    this.requestedLayout = options.layout ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.layout;
    if (!["auto", "dense", "sparse"].includes(this.requestedLayout)) {
      throw new InvalidInput(`InMemoryVectorIndex: layout must be "auto", "dense" or "sparse".`, {
        context: { layout: this.requestedLayout },
      });
    }
    this.current = this.requestedLayout === "dense" ? "dense" : "sparse";
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
    checkOneVectorPerDocument(vectors, documents);
    const ids = resolveIds(documents, options?.ids);
    let dense = false;
    for (let i = 0; i < vectors.length; i++) {
      const vector = vectors[i];
      if (this.dimension === 0 && this.rowOf.size === 0) this.setDimension(vector.length);
      if (vector.length !== this.dimension) {
        throw new InvalidInput(
          `Vector of length ${vector.length} does not match the index dimension ${this.dimension}; every vector in one index must come from the same embeddings.`,
          { context: { id: ids[i], length: vector.length, dimension: this.dimension } },
        );
      }
      if (!dense && this.requestedLayout === "auto" && this.current === "sparse") {
        let nonzero = 0;
        for (let d = 0; d < vector.length; d++) if (vector[d] !== 0) nonzero++;
        dense = nonzero > SPARSE_MAX_NONZERO_SHARE * vector.length;
      }
    }
    if (dense) this.toDense();
    for (let i = 0; i < vectors.length; i++) {
      const doc = documents[i];
      const stored = new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata }, id: ids[i] });
      if (this.current === "dense") this.putDense(ids[i], vectors[i], stored);
      else this.putSparse(ids[i], vectors[i], stored);
    }
    this.maybeCompact();
    return ids;
  }

  private setDimension(dimension: number): void {
    if (!Number.isInteger(dimension) || dimension < 1) {
      throw new InvalidInput(`Vectors must have at least one dimension, got ${dimension}.`, { context: { dimension } });
    }
    this.dimension = dimension;
    if (this.current === "dense") this.data = new Float32Array(this.capacity * dimension);
    else this.postings = new Array<Postings | undefined>(dimension);
  }

  private putDense(id: string, vector: readonly number[], doc: Document): void {
    let row = this.rowOf.get(id);
    if (row === undefined) {
      if (this.rowIds.length === this.capacity) this.grow();
      row = this.rowIds.length;
      this.rowIds.push(id);
      this.rowDocs.push(doc);
      this.rowOf.set(id, row);
    }
    this.writeRow(row, vector);
    this.rowDocs[row] = doc;
  }

  /** A new slot for the vector; a replaced id's old slot is left dead until the next compaction. */
  private putSparse(id: string, vector: readonly number[], doc: Document): void {
    const old = this.rowOf.get(id);
    if (old !== undefined) this.killSlot(old);
    let s = 0;
    for (let d = 0; d < vector.length; d++) s += vector[d] * vector[d];
    const inv = s > 0 && Number.isFinite(s) ? 1 / Math.sqrt(s) : 0;
    const dims: number[] = [];
    const values: number[] = [];
    for (let d = 0; d < vector.length; d++) {
      // The float32 the dense layout would store; a zero there adds nothing to any score.
      const x = Math.fround(vector[d] * inv);
      if (x !== 0) {
        dims.push(d);
        values.push(x);
      }
    }
    this.appendSlot(id, doc, Int32Array.from(dims), Float32Array.from(values));
  }

  private appendSlot(id: string, doc: Document, dims: Int32Array, values: Float32Array): void {
    const slot = this.rowIds.length;
    this.rowIds.push(id);
    this.rowDocs.push(doc);
    this.slotDims.push(dims);
    this.slotValues.push(values);
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
    const dims = this.slotDims;
    const values = this.slotValues;
    this.rowIds = [];
    this.rowDocs = [];
    this.slotDims = [];
    this.slotValues = [];
    this.rowOf = new Map();
    this.postings = new Array<Postings | undefined>(this.dimension);
    this.deadSlots = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot];
      if (id !== undefined) this.appendSlot(id, docs[slot]!, dims[slot], values[slot]);
    }
  }

  /** Moves every live vector into the dense layout (for good: `auto` met a dense vector). */
  private toDense(): void {
    const ids = this.rowIds;
    const docs = this.rowDocs;
    const dims = this.slotDims;
    const values = this.slotValues;
    const live = this.rowOf.size;
    this.current = "dense";
    this.capacity = this.initialCapacity;
    while (this.capacity < live) this.capacity *= 2;
    this.data = new Float32Array(this.capacity * this.dimension);
    this.rowIds = [];
    this.rowDocs = [];
    this.rowOf = new Map();
    this.slotDims = [];
    this.slotValues = [];
    this.postings = [];
    this.deadSlots = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot];
      if (id === undefined) continue;
      const row = this.rowIds.length;
      this.rowIds.push(id);
      this.rowDocs.push(docs[slot]);
      this.rowOf.set(id, row);
      const d = dims[slot];
      const v = values[slot];
      for (let j = 0; j < d.length; j++) this.data[d[j] * this.capacity + row] = v[j];
    }
  }

  private grow(): void {
    const old = this.data;
    const oldCapacity = this.capacity;
    const capacity = oldCapacity * 2;
    const data = new Float32Array(capacity * this.dimension);
    const n = this.rowIds.length;
    for (let d = 0; d < this.dimension; d++) {
      data.set(old.subarray(d * oldCapacity, d * oldCapacity + n), d * capacity);
    }
    this.data = data;
    this.capacity = capacity;
  }

  private writeRow(row: number, vector: readonly number[]): void {
    let s = 0;
    for (let d = 0; d < vector.length; d++) s += vector[d] * vector[d];
    const inv = s > 0 && Number.isFinite(s) ? 1 / Math.sqrt(s) : 0;
    const { data, capacity } = this;
    for (let d = 0; d < vector.length; d++) data[d * capacity + row] = vector[d] * inv;
  }

  private removeRow(row: number): void {
    if (this.current === "sparse") {
      this.killSlot(row);
      return;
    }
    const last = this.rowIds.length - 1;
    const id = this.rowIds[row]!;
    if (row !== last) {
      const { data, capacity } = this;
      for (let d = 0; d < this.dimension; d++) data[d * capacity + row] = data[d * capacity + last];
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
    this.data = new Float32Array(0);
    this.capacity = this.initialCapacity;
    this.slotDims = [];
    this.slotValues = [];
    this.postings = [];
    this.deadSlots = 0;
    this.current = this.requestedLayout === "dense" ? "dense" : "sparse";
  }

  /**
   * The `k` documents most similar to `query`, best first, with cosine similarity (higher is
   * better). Exact: in the dense layout every stored vector is scored; in the sparse layout only
   * those sharing a nonzero dimension with the query, the rest scoring exactly 0. Same results as
   * {@link exhaustiveSearchVectorWithScore}, scores to the bit and ties broken the same way.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    if (this.rowOf.size === 0 || k <= 0) return [];
    this.checkQuery(query);
    if (this.current === "dense") return this.searchDense(query, k, filter);
    return this.finish(this.searchInverted(query, k, toPredicate(filter)));
  }

  /**
   * {@link similaritySearchVectorWithScore} scoring every stored vector, in either layout: the
   * reference the inverted search is checked against (tests, `bench/routing-latency.ts`).
   */
  async exhaustiveSearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    if (this.rowOf.size === 0 || k <= 0) return [];
    this.checkQuery(query);
    if (this.current === "dense") return this.searchDense(query, k, filter);
    return this.finish(this.scanSparse(query, k, toPredicate(filter)));
  }

  /**
   * What a top-`k` search for `query` walks in the sparse layout ({@link SearchCost}): for
   * benchmarks and for judging whether an embedding suits the inverted index (`bench/routing-latency.ts`).
   * @throws InvalidInput in the dense layout, or for a query of the wrong length.
   */
  async searchCost(query: number[], k: number): Promise<SearchCost> {
    if (this.current !== "sparse") throw new InvalidInput("searchCost() describes the sparse layout only.");
    const cost: SearchCost = { lists: 0, postings: 0, rowsMet: 0, kthScore: 0, boundSum: 0, skippablePostings: 0 };
    if (this.rowOf.size === 0 || k <= 0) return cost;
    this.checkQuery(query);
    const plan = planQuery(query);
    if (plan === undefined) return cost;
    const hits = await this.similaritySearchVectorWithScore(query, k);
    cost.kthScore = hits.length > 0 ? hits[hits.length - 1][1] : 0;
    const met = new Uint8Array(this.rowIds.length);
    const lists: Array<{ bound: number; length: number }> = [];
    for (let p = 0; p < plan.dims.length; p++) {
      const list = this.postings[plan.dims[p]];
      if (list === undefined || list.length === 0) continue;
      const bound = Math.abs(plan.weights[p]) * list.maxAbs;
      lists.push({ bound, length: list.length });
      cost.boundSum += bound;
      cost.postings += list.length;
      for (let j = 0; j < list.length; j++) met[list.rows[j]] = 1;
    }
    cost.lists = lists.length;
    for (let r = 0; r < met.length; r++) if (met[r] === 1 && this.rowIds[r] !== undefined) cost.rowsMet++;
    lists.sort((a, b) => a.bound - b.bound);
    let skipped = 0;
    for (const { bound, length } of lists) {
      if (skipped + bound >= cost.kthScore) break;
      skipped += bound;
      cost.skippablePostings += length;
    }
    return cost;
  }

  private checkQuery(query: readonly number[]): void {
    if (query.length !== this.dimension) {
      throw new InvalidInput(
        `Query vector of length ${query.length} does not match the index dimension ${this.dimension}; embed the query with the embeddings that built the index.`,
        { context: { length: query.length, dimension: this.dimension } },
      );
    }
  }

  private finish(top: TopK): [DocumentInterface, number][] {
    return top.sorted().map(([row, score]) => [this.copyDoc(row), score]);
  }

  private newTopK(k: number): TopK {
    return new TopK(Math.min(k, this.rowOf.size), (row) => this.rowIds[row]!);
  }

  /** The score buffer, at least `rows` long, zeroed over its first `rows` entries. */
  private scoreBuffer(rows: number): Float64Array {
    if (this.scores.length < rows) this.scores = new Float64Array(Math.max(rows, 2 * this.scores.length, 64));
    else this.scores.fill(0, 0, rows);
    return this.scores;
  }

  /** The best `k` of the first `rows` scores whose row is live and kept by the filter. */
  private select(scores: Float64Array, rows: number, k: number, keep: DocumentPredicate | undefined): TopK {
    const top = this.newTopK(k);
    const ids = this.rowIds;
    for (let row = 0; row < rows; row++) {
      const s = scores[row];
      if (!top.admits(s) || ids[row] === undefined) continue;
      if (keep !== undefined && !keep(this.rowDocs[row]!)) continue;
      top.push(s, row);
    }
    return top;
  }

  private searchDense(query: number[], k: number, filter: InMemoryFilter | undefined): [DocumentInterface, number][] {
    const n = this.rowIds.length;
    return this.finish(this.select(this.score(query), n, k, toPredicate(filter)));
  }

  /**
   * Sparse layout, inverted: walks the posting lists of the query's dimensions in ascending order,
   * adding each product to its slot's score. A slot on none of the lists keeps the score 0 it
   * would get from a full scan (no product to add), so selecting over every slot gives the
   * exhaustive search's top-k, ties included.
   */
  private searchInverted(query: readonly number[], k: number, keep: DocumentPredicate | undefined): TopK {
    const slots = this.rowIds.length;
    const scores = this.scoreBuffer(slots);
    const plan = planQuery(query);
    if (plan !== undefined) {
      const { dims, weights } = plan;
      for (let p = 0; p < dims.length; p++) {
        const list = this.postings[dims[p]];
        if (list === undefined) continue;
        const w = weights[p];
        const { rows, values, length } = list;
        for (let j = 0; j < length; j++) scores[rows[j]] += w * values[j];
      }
    }
    return this.select(scores, slots, k, keep);
  }

  /** Sparse layout, exhaustive: scores every live slot from its own entries, in ascending dimension order. */
  private scanSparse(query: readonly number[], k: number, keep: DocumentPredicate | undefined): TopK {
    const slots = this.rowIds.length;
    const scores = this.scoreBuffer(slots);
    const plan = planQuery(query);
    if (plan !== undefined) {
      const weightOf = new Float64Array(this.dimension);
      plan.dims.forEach((d, p) => (weightOf[d] = plan.weights[p]));
      for (let slot = 0; slot < slots; slot++) {
        if (this.rowIds[slot] === undefined) continue;
        const dims = this.slotDims[slot];
        const values = this.slotValues[slot];
        let s = 0;
        for (let j = 0; j < dims.length; j++) {
          const w = weightOf[dims[j]];
          if (w !== 0) s += w * values[j];
        }
        scores[slot] = s;
      }
    }
    return this.select(scores, slots, k, keep);
  }

  /** Dense layout: cosine of `query` with every row (the first `size` entries of the score buffer). */
  private score(query: readonly number[]): Float64Array {
    const n = this.rowIds.length;
    const { data, capacity } = this;
    const scores = this.scoreBuffer(n);
    const plan = planQuery(query);
    if (plan === undefined) return scores;
    const { dims, weights } = plan;
    // Four dimensions per pass (a quarter of the loads and stores of `scores`), added one after
    // the other: the same sum, in the same order, as the inverted walk.
    let i = 0;
    for (; i + 4 <= dims.length; i += 4) {
      const w0 = weights[i],
        w1 = weights[i + 1],
        w2 = weights[i + 2],
        w3 = weights[i + 3];
      const b0 = dims[i] * capacity,
        b1 = dims[i + 1] * capacity,
        b2 = dims[i + 2] * capacity,
        b3 = dims[i + 3] * capacity;
      for (let row = 0; row < n; row++) {
        let s = scores[row];
        s += w0 * data[b0 + row];
        s += w1 * data[b1 + row];
        s += w2 * data[b2 + row];
        s += w3 * data[b3 + row];
        scores[row] = s;
      }
    }
    for (; i < dims.length; i++) {
      const w = weights[i];
      const base = dims[i] * capacity;
      for (let row = 0; row < n; row++) scores[row] += w * data[base + row];
    }
    return scores;
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
      const out = new Array<number>(this.dimension).fill(0);
      const dims = this.slotDims[row];
      const values = this.slotValues[row];
      for (let j = 0; j < dims.length; j++) out[dims[j]] = values[j];
      return out;
    }
    const out = new Array<number>(this.dimension);
    for (let d = 0; d < this.dimension; d++) out[d] = this.data[d * this.capacity + row];
    return out;
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
