/**
 * The embedded default index: a LangChain `VectorStore` held in process memory, exact (brute
 * force, no approximation) and fast enough for routing over 100k tools.
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
}

/** The defaults applied to every {@link InMemoryVectorIndexOptions} field left unset. */
export const DEFAULT_IN_MEMORY_VECTOR_INDEX: Readonly<Required<InMemoryVectorIndexOptions>> = Object.freeze({
  initialCapacity: 256,
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
 * An exact in-memory `VectorStore` with stable ids and metadata filters.
 *
 * - `addDocuments(docs, { ids })` / `addVectors(vectors, docs, { ids })` upsert: an id already
 *   stored is replaced.
 * - `similaritySearchVectorWithScore(query, k, filter)` returns cosine **similarity** (higher is
 *   better, in [-1, 1]), the same convention as `ChromaVectorIndex`.
 * - `filter` is a metadata equality object (`{ partition: "p1", kind: "tool" }`, array values mean
 *   "any of") or a predicate over the stored document.
 *
 * Vectors are stored unit-normalised in one contiguous `Float32Array`, laid out dimension by
 * dimension, so a query touches only the dimensions where it is non-zero: a sparse lexical query
 * over 10k tools reads a few hundred contiguous runs instead of every float. Capacity doubles when
 * full; deletes move the last row into the freed slot.
 */
export class InMemoryVectorIndex extends VectorStore {
  declare FilterType: InMemoryFilter;

  private dimension = 0;
  private capacity: number;
  /** Column-major: value of dimension `d` of row `r` is at `d * capacity + r`. */
  private data = new Float32Array(0);
  private rowIds: string[] = [];
  private rowDocs: Document[] = [];
  private rowOf = new Map<string, number>();
  private scratch = new Float32Array(0);

  constructor(embeddings: EmbeddingsInterface, options: InMemoryVectorIndexOptions = {}) {
    super(embeddings, options);
    this.capacity = Math.max(1, options.initialCapacity ?? DEFAULT_IN_MEMORY_VECTOR_INDEX.initialCapacity);
  }

  _vectorstoreType(): string {
    return "tool-lessons-memory";
  }

  /** Number of stored documents, without a filter. */
  get size(): number {
    return this.rowIds.length;
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
    for (let i = 0; i < vectors.length; i++) {
      const vector = vectors[i];
      if (this.dimension === 0 && this.rowIds.length === 0) this.setDimension(vector.length);
      if (vector.length !== this.dimension) {
        throw new InvalidInput(
          `Vector of length ${vector.length} does not match the index dimension ${this.dimension}; every vector in one index must come from the same embeddings.`,
          { context: { id: ids[i], length: vector.length, dimension: this.dimension } },
        );
      }
    }
    for (let i = 0; i < vectors.length; i++) {
      const id = ids[i];
      let row = this.rowOf.get(id);
      if (row === undefined) {
        if (this.rowIds.length === this.capacity) this.grow();
        row = this.rowIds.length;
        this.rowIds.push(id);
        this.rowDocs.push(new Document({ pageContent: "", id }));
        this.rowOf.set(id, row);
      }
      this.writeRow(row, vectors[i]);
      const doc = documents[i];
      this.rowDocs[row] = new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata }, id });
    }
    return ids;
  }

  private setDimension(dimension: number): void {
    if (!Number.isInteger(dimension) || dimension < 1) {
      throw new InvalidInput(`Vectors must have at least one dimension, got ${dimension}.`, { context: { dimension } });
    }
    this.dimension = dimension;
    this.data = new Float32Array(this.capacity * dimension);
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
    if (this.scratch.length < capacity) this.scratch = new Float32Array(0);
  }

  private writeRow(row: number, vector: readonly number[]): void {
    let s = 0;
    for (let d = 0; d < vector.length; d++) s += vector[d] * vector[d];
    const inv = s > 0 && Number.isFinite(s) ? 1 / Math.sqrt(s) : 0;
    const { data, capacity } = this;
    for (let d = 0; d < vector.length; d++) data[d * capacity + row] = vector[d] * inv;
  }

  private removeRow(row: number): void {
    const last = this.rowIds.length - 1;
    const id = this.rowIds[row];
    if (row !== last) {
      const { data, capacity } = this;
      for (let d = 0; d < this.dimension; d++) data[d * capacity + row] = data[d * capacity + last];
      const movedId = this.rowIds[last];
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
    if (keep === undefined) return;
    for (let row = this.rowIds.length - 1; row >= 0; row--) {
      if (keep(this.rowDocs[row])) this.removeRow(row);
    }
  }

  /** Removes every document; the next vector added sets the dimension afresh. */
  clear(): void {
    this.rowIds = [];
    this.rowDocs = [];
    this.rowOf = new Map();
    this.dimension = 0;
    this.data = new Float32Array(0);
  }

  /**
   * The `k` documents most similar to `query`, best first, with cosine similarity (higher is
   * better). Exact: every stored vector is scored.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    const n = this.rowIds.length;
    if (n === 0 || k <= 0) return [];
    if (query.length !== this.dimension) {
      throw new InvalidInput(
        `Query vector of length ${query.length} does not match the index dimension ${this.dimension}; embed the query with the embeddings that built the index.`,
        { context: { length: query.length, dimension: this.dimension } },
      );
    }
    const scores = this.score(query);
    const keep = toPredicate(filter);
    const top = new TopK(Math.min(k, n), (row) => this.rowIds[row]);
    for (let row = 0; row < n; row++) {
      const s = scores[row];
      if (!top.admits(s)) continue;
      if (keep !== undefined && !keep(this.rowDocs[row])) continue;
      top.push(s, row);
    }
    return top.sorted().map(([row, score]) => [this.copyDoc(row), score]);
  }

  /** Cosine of `query` with every row, in a reused scratch buffer of length >= size. */
  private score(query: readonly number[]): Float32Array {
    const n = this.rowIds.length;
    const { data, capacity, dimension } = this;
    if (this.scratch.length < capacity) this.scratch = new Float32Array(capacity);
    const scores = this.scratch;
    scores.fill(0, 0, n);
    let s = 0;
    for (let d = 0; d < dimension; d++) s += query[d] * query[d];
    if (!(s > 0) || !Number.isFinite(s)) return scores;
    const inv = 1 / Math.sqrt(s);
    const active: number[] = [];
    for (let d = 0; d < dimension; d++) if (query[d] !== 0) active.push(d);
    // Four dimensions per pass: a quarter of the loads and stores of `scores`.
    let i = 0;
    for (; i + 4 <= active.length; i += 4) {
      const d0 = active[i],
        d1 = active[i + 1],
        d2 = active[i + 2],
        d3 = active[i + 3];
      const w0 = query[d0] * inv,
        w1 = query[d1] * inv,
        w2 = query[d2] * inv,
        w3 = query[d3] * inv;
      const b0 = d0 * capacity,
        b1 = d1 * capacity,
        b2 = d2 * capacity,
        b3 = d3 * capacity;
      for (let row = 0; row < n; row++) {
        scores[row] += w0 * data[b0 + row] + w1 * data[b1 + row] + w2 * data[b2 + row] + w3 * data[b3 + row];
      }
    }
    for (; i < active.length; i++) {
      const w = query[active[i]] * inv;
      const base = active[i] * capacity;
      for (let row = 0; row < n; row++) scores[row] += w * data[base + row];
    }
    return scores;
  }

  private copyDoc(row: number): Document {
    const doc = this.rowDocs[row];
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
    const out = new Array<number>(this.dimension);
    for (let d = 0; d < this.dimension; d++) out[d] = this.data[d * this.capacity + row];
    return out;
  }

  /** Number of stored documents the filter keeps (all of them without a filter). */
  async count(filter?: InMemoryFilter): Promise<number> {
    const keep = toPredicate(filter);
    if (keep === undefined) return this.rowIds.length;
    let c = 0;
    for (const doc of this.rowDocs) if (keep(doc)) c++;
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
