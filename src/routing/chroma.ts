/**
 * The scale-out index: a LangChain `VectorStore` over a Chroma server (the `chromadb` 3.x client),
 * with the same ids, filters and score convention as the in-memory index, so either can serve
 * routing and retrieval unchanged.
 *
 * Subpath export `tool-lessons/chroma`; `chromadb` is an optional peer dependency.
 */
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { VectorStore } from "@langchain/core/vectorstores";
import { ChromaClient, ChromaConnectionError } from "chromadb";
import { InvalidInput, StoreUnavailable } from "../errors.js";
import {
  checkOneVectorPerDocument,
  resolveIds,
  type AddToIndexOptions,
  type DeleteFromIndexParams,
  type MetadataFilter,
} from "./memory-vector-store.js";
import { type ChromaWhere, type FlatMetadata, toChromaWhere, toFlatMetadata } from "./chroma-metadata.js";

export type { ChromaWhere, FlatMetadata } from "./chroma-metadata.js";

export {
  startChromaServer,
  ChromaBindingUnavailable,
  type ChromaServer,
  type StartChromaServerOptions,
} from "./chroma-server.js";

/** Options of {@link ChromaVectorIndex}. */
export interface ChromaVectorIndexOptions {
  /** Embeddings used by `addDocuments` and the text search methods. */
  embeddings: EmbeddingsInterface;
  /** Name of the Chroma collection; created (cosine space, no embedding function) if missing. */
  collectionName: string;
  /**
   * A ready client (a chromadb `ChromaClient`). When given, `host` and `port` are ignored.
   * @default new ChromaClient({ host, port })
   */
  client?: ChromaClientLike;
  /**
   * Chroma server host.
   * @default "localhost"
   */
  host?: string;
  /**
   * Chroma server port.
   * @default 8000
   */
  port?: number;
  /**
   * Most records sent in one request; larger batches are split. Capped by the server's own limit.
   * @default 1000
   */
  batchSize?: number;
}

/**
 * The defaults applied to every optional {@link ChromaVectorIndexOptions} field left unset
 * (`client` has no value of its own: without it, one is made from `host` and `port`).
 */
const DEFAULT_CHROMA_VECTOR_INDEX: Readonly<
  Required<Omit<ChromaVectorIndexOptions, "embeddings" | "collectionName" | "client">>
> = Object.freeze({
  host: "localhost",
  port: 8000,
  batchSize: 1_000,
});

/** What a record read back holds (chromadb's `GetResult`, the fields used here). */
export interface ChromaGetResultLike {
  ids: string[];
  documents: (string | null)[];
  metadatas: (Readonly<Record<string, unknown>> | null)[];
}

/** What a query returns (chromadb's `QueryResult`, the fields used here): one list per query vector. */
export interface ChromaQueryResultLike {
  ids: string[][];
  documents: (string | null)[][];
  metadatas: (Readonly<Record<string, unknown>> | null)[][];
  distances: (number | null)[][];
}

/** The calls the index makes on a chromadb `Collection`. */
export interface ChromaCollectionLike {
  add(args: { ids: string[]; embeddings: number[][]; documents: string[]; metadatas?: FlatMetadata[] }): Promise<void>;
  get(args: {
    ids?: string[];
    where?: ChromaWhere;
    include: ("documents" | "metadatas")[];
  }): Promise<ChromaGetResultLike>;
  delete(args: { ids?: string[]; where?: ChromaWhere }): Promise<unknown>;
  query(args: {
    queryEmbeddings: number[][];
    nResults: number;
    where?: ChromaWhere;
    include: ("documents" | "metadatas" | "distances")[];
  }): Promise<ChromaQueryResultLike>;
  count(): Promise<number>;
}

/**
 * The calls the index makes on a chromadb `ChromaClient`; a `ChromaClient` is one. Declared here,
 * not imported, so that the package's type declarations never load chromadb's own (which refer to
 * a package chromadb does not install, an error for a project type-checking with `skipLibCheck: false`).
 */
export interface ChromaClientLike {
  getOrCreateCollection(options: {
    name: string;
    embeddingFunction: null;
    configuration: { hnsw: { space: "cosine" } };
  }): Promise<ChromaCollectionLike>;
  deleteCollection(options: { name: string }): Promise<void>;
}

/** Context reason of the `StoreUnavailable` raised when the open collection vanished from the server. */
const COLLECTION_GONE = "collection_gone";

/** True for the error the client raises for a collection the server does not have (any more). */
function isCollectionGone(error: unknown): boolean {
  return error instanceof Error && error.name === "ChromaNotFoundError";
}

/** True for the errors the client raises when no server answers. */
function isConnectionError(error: unknown): boolean {
  if (error instanceof ChromaConnectionError) return true;
  if (error instanceof Error && error.name === "ChromaConnectionError") return true;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === "ECONNREFUSED" || code === "ECONNRESET" || code === "ENOTFOUND";
}

/**
 * A LangChain `VectorStore` over one Chroma collection.
 *
 * - Upsert by stable id: `addDocuments(docs, { ids })` / `addVectors(vectors, docs, { ids })`
 *   replace a stored id whole (text, vector and metadata; Chroma's own upsert would merge old
 *   metadata keys, so the index deletes then adds).
 * - Scores are cosine **similarity**, higher is better (`1 - distance` of the collection's cosine
 *   space), like `InMemoryVectorIndex`.
 * - Filters are metadata equality objects (`{ partition: "p1", kind: "tool" }`; an array value
 *   means "any of"), translated to Chroma's `where`.
 * - Metadata must be flat: string, number or boolean values. Nested objects and arrays are refused
 *   with `InvalidInput`; `null` values are dropped.
 *
 * Call {@link setup} (or use {@link ChromaVectorIndex.create}) before the first request to learn at
 * once whether the server is reachable; otherwise the collection is opened on first use.
 *
 * @example
 * const index = await ChromaVectorIndex.create({ embeddings, collectionName: "tools", host: "127.0.0.1", port: 8000 });
 * await index.addDocuments(docs, { ids });
 * const hits = await index.similaritySearchWithScore("book a room in Rome", 5, { partition: "p1" });
 */
export class ChromaVectorIndex extends VectorStore {
  declare FilterType: MetadataFilter;

  /** The Chroma client in use. */
  readonly client: ChromaClientLike;
  /** The collection name. */
  readonly collectionName: string;
  private readonly batchSize: number;
  private readonly where: string;
  private collectionPromise: Promise<ChromaCollectionLike> | undefined;

  constructor(options: ChromaVectorIndexOptions) {
    super(options.embeddings, {});
    if (!options.collectionName) {
      throw new InvalidInput("ChromaVectorIndex needs a collectionName.");
    }
    const host = options.host ?? DEFAULT_CHROMA_VECTOR_INDEX.host;
    const port = options.port ?? DEFAULT_CHROMA_VECTOR_INDEX.port;
    this.client = options.client ?? new ChromaClient({ host, port });
    this.collectionName = options.collectionName;
    this.batchSize = Math.max(1, options.batchSize ?? DEFAULT_CHROMA_VECTOR_INDEX.batchSize);
    this.where =
      options.client !== undefined
        ? "the Chroma server of the given client"
        : `the Chroma server at http://${host}:${port}`;
  }

  /** Creates the index and opens (or creates) its collection, failing now if the server is down. */
  static async create(options: ChromaVectorIndexOptions): Promise<ChromaVectorIndex> {
    const index = new ChromaVectorIndex(options);
    await index.setup();
    return index;
  }

  _vectorstoreType(): string {
    return "tool-lessons-chroma";
  }

  /**
   * Opens the collection, creating it (cosine space, `embeddingFunction: null`) when missing.
   * Idempotent; a failed attempt is retried on the next call.
   * @throws StoreUnavailable when no server answers.
   */
  async setup(): Promise<void> {
    await this.collection();
  }

  private collection(): Promise<ChromaCollectionLike> {
    this.collectionPromise ??= this.call("open the collection", () =>
      this.client.getOrCreateCollection({
        name: this.collectionName,
        embeddingFunction: null,
        configuration: { hnsw: { space: "cosine" } },
      }),
    ).catch((error: unknown) => {
      this.collectionPromise = undefined;
      throw error;
    });
    return this.collectionPromise;
  }

  /** Runs one client call, turning "no server" into `StoreUnavailable` with the way to fix it. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isCollectionGone(error) && this.collectionPromise !== undefined) {
        // The server restarted without its data: forget the collection, so the next call opens
        // (creates) it again; writes retry on it at once (see retryIfGone), reads fail typed.
        this.collectionPromise = undefined;
        throw new StoreUnavailable(
          `Could not ${what} "${this.collectionName}": the collection is gone from ${this.where} (did it restart without its data?). The next call creates it again; ToolIndex.reindex() refills it from the ledger.`,
          { cause: error, context: { collection: this.collectionName, reason: COLLECTION_GONE } },
        );
      }
      if (isConnectionError(error)) {
        throw new StoreUnavailable(
          `Could not ${what} "${this.collectionName}": ${this.where} did not answer. Start one with \`npx chroma run --path ./chroma-data\` (or startChromaServer() from "tool-lessons/chroma") and pass its host and port.`,
          { cause: error, context: { collection: this.collectionName } },
        );
      }
      throw error;
    }
  }

  /** Embeds and upserts documents; returns their ids in order. */
  async addDocuments(documents: DocumentInterface[], options?: AddToIndexOptions): Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((d) => d.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /**
   * Upserts precomputed vectors with their documents; returns their ids in order. A repeated id
   * within one call keeps its last occurrence.
   * @throws InvalidInput for nested metadata or mismatched lengths; StoreUnavailable when no server answers.
   */
  async addVectors(
    vectors: number[][],
    documents: DocumentInterface[],
    options?: AddToIndexOptions,
  ): Promise<string[]> {
    checkOneVectorPerDocument(vectors, documents);
    const ids = resolveIds(documents, options?.ids);
    const last = new Map<string, number>();
    ids.forEach((id, i) => last.set(id, i));
    const rows = [...last.values()].sort((a, b) => a - b);
    const metadatas = rows.map((i) => toFlatMetadata(documents[i].metadata ?? {}, ids[i]));
    await this.retryIfGone(() => this.addRows(vectors, documents, ids, rows, metadatas));
    return ids;
  }

  /**
   * Runs a write; when the collection turned out gone (the server lost its data), runs it once
   * more on the collection opened afresh: a write means the same on an empty collection.
   */
  private async retryIfGone<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailable) || error.context?.reason !== COLLECTION_GONE) throw error;
      return write();
    }
  }

  private async addRows(
    vectors: number[][],
    documents: DocumentInterface[],
    ids: string[],
    rows: number[],
    metadatas: ReturnType<typeof toFlatMetadata>[],
  ): Promise<void> {
    const collection = await this.collection();
    for (let start = 0; start < rows.length; start += this.batchSize) {
      const batch = rows.slice(start, start + this.batchSize);
      const batchMeta = metadatas.slice(start, start + this.batchSize);
      const batchIds = batch.map((i) => ids[i]);
      // Replace, not merge: delete the ids already stored (looked up first, since a lookup is far
      // cheaper than a delete), then add.
      const existing = await this.call("read records from", () => collection.get({ ids: batchIds, include: [] }));
      if (existing.ids.length > 0) {
        await this.call("replace records in", () => collection.delete({ ids: existing.ids }));
      }
      // Chroma refuses an empty metadata object, so records without metadata go in their own call.
      const records = batch.map((i, j) => ({
        id: ids[i],
        vector: vectors[i],
        text: documents[i].pageContent,
        meta: batchMeta[j],
      }));
      const withMeta = records.filter((r) => Object.keys(r.meta).length > 0);
      const withoutMeta = records.filter((r) => Object.keys(r.meta).length === 0);
      if (withMeta.length > 0) {
        await this.call("add records to", () =>
          collection.add({
            ids: withMeta.map((r) => r.id),
            embeddings: withMeta.map((r) => r.vector),
            documents: withMeta.map((r) => r.text),
            metadatas: withMeta.map((r) => r.meta),
          }),
        );
      }
      if (withoutMeta.length > 0) {
        await this.call("add records to", () =>
          collection.add({
            ids: withoutMeta.map((r) => r.id),
            embeddings: withoutMeta.map((r) => r.vector),
            documents: withoutMeta.map((r) => r.text),
          }),
        );
      }
    }
  }

  /**
   * Removes documents by ids and/or by metadata filter. An empty filter is refused rather than
   * taken to mean "everything" (use {@link clear}).
   */
  override async delete(params: DeleteFromIndexParams<MetadataFilter> = {}): Promise<void> {
    const where = toChromaWhere(params.filter);
    if (params.filter !== undefined && where === undefined) {
      throw new InvalidInput("delete() got an empty filter; call clear() to remove every document.");
    }
    await this.retryIfGone(async () => {
      const collection = await this.collection();
      const ids = params.ids ?? [];
      for (let start = 0; start < ids.length; start += this.batchSize) {
        const batch = ids.slice(start, start + this.batchSize);
        await this.call("delete records from", () => collection.delete({ ids: batch }));
      }
      if (where) await this.call("delete records from", () => collection.delete({ where }));
    });
  }

  /** Drops the collection and creates it again, empty. */
  async clear(): Promise<void> {
    await this.collection();
    await this.call("drop", () => this.client.deleteCollection({ name: this.collectionName }));
    this.collectionPromise = undefined;
    await this.collection();
  }

  /**
   * The `k` documents most similar to `query`, best first, with cosine similarity (higher is
   * better). Chroma's HNSW index is approximate; on small collections it is exact in practice.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: MetadataFilter,
  ): Promise<[DocumentInterface, number][]> {
    const where = toChromaWhere(filter);
    if (where === null || k <= 0) return [];
    const collection = await this.collection();
    const result = await this.call("query", () =>
      collection.query({
        queryEmbeddings: [query],
        nResults: k,
        ...(where ? { where } : {}),
        include: ["documents", "metadatas", "distances"],
      }),
    );
    const ids = result.ids[0] ?? [];
    return ids.map((id, i) => {
      const distance = result.distances[0]?.[i] ?? 1;
      const doc = new Document({
        pageContent: result.documents[0]?.[i] ?? "",
        metadata: { ...(result.metadatas[0]?.[i] ?? {}) },
        id,
      });
      return [doc, 1 - distance];
    });
  }

  /** The stored documents with these ids, in the order asked; unknown ids are skipped. */
  async getByIds(ids: readonly string[]): Promise<DocumentInterface[]> {
    if (ids.length === 0) return [];
    const collection = await this.collection();
    const found = new Map<string, Document>();
    for (let start = 0; start < ids.length; start += this.batchSize) {
      const batch = ids.slice(start, start + this.batchSize);
      const result = await this.call("read records from", () =>
        collection.get({ ids: [...batch], include: ["documents", "metadatas"] }),
      );
      result.ids.forEach((id, i) => {
        found.set(
          id,
          new Document({ pageContent: result.documents[i] ?? "", metadata: { ...(result.metadatas[i] ?? {}) }, id }),
        );
      });
    }
    const out: DocumentInterface[] = [];
    for (const id of ids) {
      const doc = found.get(id);
      if (doc) out.push(doc);
    }
    return out;
  }

  /** Number of stored documents the filter keeps (all of them without a filter). */
  async count(filter?: MetadataFilter): Promise<number> {
    const where = toChromaWhere(filter);
    if (where === null) return 0;
    const collection = await this.collection();
    if (where === undefined) return this.call("count records in", () => collection.count());
    const result = await this.call("count records in", () => collection.get({ where, include: [] }));
    return result.ids.length;
  }

  /** Builds an index from documents (ids from `document.id` when present). */
  static override async fromDocuments(
    docs: DocumentInterface[],
    embeddings: EmbeddingsInterface,
    options: Omit<ChromaVectorIndexOptions, "embeddings">,
  ): Promise<ChromaVectorIndex> {
    const index = await ChromaVectorIndex.create({ ...options, embeddings });
    await index.addDocuments(docs);
    return index;
  }

  /** Builds an index from texts (one metadata object per text, or one for all). */
  static override async fromTexts(
    texts: string[],
    metadatas: object[] | object,
    embeddings: EmbeddingsInterface,
    options: Omit<ChromaVectorIndexOptions, "embeddings">,
  ): Promise<ChromaVectorIndex> {
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
    return ChromaVectorIndex.fromDocuments(docs, embeddings, options);
  }
}
