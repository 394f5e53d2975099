/**
 * What the indexes of this package share: metadata filters, ids of a batch, and their checks.
 */
import { randomUUID } from "node:crypto";
import type { DocumentInterface } from "@langchain/core/documents";
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

/** The filter as a predicate; undefined when it keeps everything. */
export function toPredicate(filter: InMemoryFilter | undefined): DocumentPredicate | undefined {
  if (filter === undefined) return undefined;
  if (typeof filter === "function") return filter;
  const keys = Object.keys(filter);
  if (keys.length === 0) return undefined;
  // The keys are read once here, not once per document the search reaches.
  return (doc) => {
    const metadata = doc.metadata;
    for (const key of keys) {
      const want = filter[key];
      const have = metadata[key];
      if (Array.isArray(want) ? !want.includes(have as MetadataScalar) : have !== want) return false;
    }
    return true;
  };
}

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

/** Resolves the ids of a batch: explicit ids, else `document.id`, else a fresh UUID. */
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
