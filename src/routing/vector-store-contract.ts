/**
 * What {@link ToolIndex} needs from a LangChain `VectorStore`, checked when the index is built
 * (docs/routing.md, "The vector store contract"):
 *
 * 1. `addVectors(vectors, documents, { ids })`: an id added again **replaces** the stored one
 *    (upsert). Every document carries flat `partition`, `tool` and `kind` metadata.
 * 2. `similaritySearchVectorWithScore(query, k, { partition })`: the k best documents of one
 *    partition, with a score. The filter is an equality object with that one key, a form most
 *    stores take as it is (Chroma, PGVector, Pinecone, both stores of this package).
 * 3. `delete({ ids })` and `delete({ filter: { partition } })`: a re-embedded tool's spare parts go
 *    by id, a reindexed partition by filter.
 * 4. Scores are either similarities (higher is better) or distances (lower is better), declared
 *    with the index's `scores` option or detected for the stores listed in
 *    {@link KNOWN_SCORE_KINDS}. The index only ever stores and searches unit vectors, so a
 *    distance converts exactly to the cosine similarity the rest of the package reads.
 *
 * Pure checks over the store object: no call is made to it, except that a Chroma collection's
 * distance space is read from the server once, at the first search.
 */
import type { VectorStore } from "@langchain/core/vectorstores";
import { InvalidInput, UnsupportedVectorStore } from "../errors.js";
import { isRecord } from "../internal.js";

/**
 * How a store's scores read.
 * - `similarity`: higher is better, a cosine for unit vectors (both stores of this package,
 *   LangChain's `MemoryVectorStore`).
 * - `cosine-distance`: `1 - cosine`, lower is better (Chroma's `cosine` and `ip` spaces, PGVector's
 *   default); read as `1 - distance`.
 * - `l2-distance`: squared Euclidean distance, lower is better (Chroma's default `l2` space,
 *   FAISS); read as `1 - distance / 2`, the cosine of two unit vectors. A plain (not squared)
 *   Euclidean distance ranks the same, but its scores are then not cosines.
 */
export type ScoreKind = "similarity" | "cosine-distance" | "l2-distance";

/** Every {@link ScoreKind}. */
export const SCORE_KINDS: readonly ScoreKind[] = Object.freeze(["similarity", "cosine-distance", "l2-distance"]);

/** The methods a store must implement (not inherit as `VectorStore`'s stubs). */
export const REQUIRED_VECTOR_STORE_METHODS = ["addVectors", "similaritySearchVectorWithScore", "delete"] as const;

/**
 * Score kinds of known stores, by `_vectorstoreType()`. `chroma` (`@langchain/community`'s `Chroma`)
 * returns distances in its collection's space, read from the server at the first search.
 */
export const KNOWN_SCORE_KINDS: Readonly<Record<string, ScoreKind | "chroma-space">> = Object.freeze({
  "tool-lessons-memory": "similarity",
  "tool-lessons-chroma": "similarity",
  memory: "similarity",
  chroma: "chroma-space",
});

/**
 * What else a known store lacks, by `_vectorstoreType()`, said beside its missing methods:
 * LangChain's `MemoryVectorStore` and core's `FakeVectorStore` (both "memory") have no `delete`,
 * append on every `addVectors` and take only predicate filters.
 */
const CONTRACT_BREAKS: Readonly<Record<string, string>> = Object.freeze({
  memory: "it appends on every addVectors (no upsert by id) and takes only predicate filters, not { partition }",
});

/** A store checked against the contract: how to turn its scores into similarities. */
export interface CheckedVectorStore {
  /** The store's class name, for messages. */
  readonly className: string;
  /** What `_vectorstoreType()` said. */
  readonly type: string;
  /** The score kind, once known (a Chroma collection's is read at the first search). */
  scoreKind(): Promise<ScoreKind>;
}

/** What the index's `scores` option may say: a kind, or `auto` (detect a known store). */
export type ScoreKindOption = ScoreKind | "auto";

/**
 * Check `store` against the contract and settle how its scores read.
 * @throws UnsupportedVectorStore naming each missing method (e.g. `delete`), or `scores` when the
 *   option is `auto` and the store is not one whose scores are known.
 * @throws InvalidInput for a `scores` value that is not a {@link ScoreKind} or `auto`.
 */
export function checkVectorStore(store: VectorStore, scores: ScoreKindOption = "auto"): CheckedVectorStore {
  if (scores !== "auto" && !SCORE_KINDS.includes(scores)) {
    throw new InvalidInput(
      `ToolIndex: scores must be "auto", ${SCORE_KINDS.map((k) => `"${k}"`).join(", ")}; got ${JSON.stringify(scores)}.`,
      {
        context: { scores: String(scores) },
      },
    );
  }
  const className = classNameOf(store);
  const type = vectorStoreType(store);
  const missing = REQUIRED_VECTOR_STORE_METHODS.filter((method) => !implementsMethod(store, method));
  const label = `${className}${type === "" ? "" : ` (vector store type "${type}")`}`;
  const needs =
    "ToolIndex needs addVectors(vectors, documents, { ids }) where an id added again replaces the stored one, " +
    "similaritySearchVectorWithScore(query, k, { partition }), delete({ ids }) and delete({ filter: { partition } }).";
  const instead =
    'Use InMemoryVectorIndex (from "tool-lessons") or ChromaVectorIndex (from "tool-lessons/chroma"), ' +
    "or wrap the store so it implements them; see docs/routing.md.";
  if (missing.length > 0) {
    const what = missing.map((m) => `${m}()`).join(", ");
    const extra = CONTRACT_BREAKS[type] ? ` Besides, ${CONTRACT_BREAKS[type]}.` : "";
    throw new UnsupportedVectorStore(
      missing,
      `ToolIndex cannot use ${label}: it does not implement ${what}.${extra} ${needs} ${instead}`,
      { context: { store: className, type, missing } },
    );
  }
  const known = scores === "auto" ? KNOWN_SCORE_KINDS[type] : scores;
  if (known === undefined) {
    throw new UnsupportedVectorStore(
      ["scores"],
      `ToolIndex cannot tell whether ${label} returns similarities or distances. Declare it: ` +
        'new ToolIndex({ ..., scores: "similarity" }) (higher is better), "cosine-distance" (1 - cosine) or ' +
        '"l2-distance" (squared Euclidean); see docs/routing.md.',
      { context: { store: className, type, missing: ["scores"] } },
    );
  }
  if (known !== "chroma-space") {
    const kind = Promise.resolve(known);
    return { className, type, scoreKind: () => kind };
  }
  let space: Promise<ScoreKind> | undefined;
  return {
    className,
    type,
    scoreKind: () => {
      space ??= chromaScoreKind(store).catch((error: unknown) => {
        space = undefined;
        throw error;
      });
      return space;
    },
  };
}

/** A store's score as a similarity (higher is better; a cosine for unit vectors). Pure. */
export function toSimilarity(kind: ScoreKind, score: number): number {
  if (kind === "cosine-distance") return 1 - score;
  if (kind === "l2-distance") return 1 - score / 2;
  return score;
}

/** The score kind of a Chroma collection's distance space (`cosine`, `ip`, `l2`; `l2` when unset). */
export function scoreKindOfChromaSpace(space: unknown): ScoreKind {
  return space === "cosine" || space === "ip" ? "cosine-distance" : "l2-distance";
}

/**
 * `@langchain/community`'s `Chroma`: open its collection (`ensureCollection()`) and read the
 * space from the collection's configuration, else its metadata (`hnsw:space`), else Chroma's
 * default `l2`. Read structurally: community is not a dependency of this package.
 */
async function chromaScoreKind(store: VectorStore): Promise<ScoreKind> {
  const ensure: unknown = Reflect.get(store, "ensureCollection");
  const collection: unknown =
    typeof ensure === "function" ? await Reflect.apply(ensure, store, []) : Reflect.get(store, "collection");
  const configuration = isRecord(collection) ? collection["configuration"] : undefined;
  const fromConfiguration = isRecord(configuration)
    ? [configuration["hnsw"], configuration["spann"]]
        .map((c) => (isRecord(c) ? c["space"] : undefined))
        .find((s) => typeof s === "string")
    : undefined;
  const metadata = isRecord(collection) ? collection["metadata"] : undefined;
  const declared: unknown = Reflect.get(store, "collectionMetadata");
  const fromMetadata = [metadata, declared]
    .map((m) => (isRecord(m) ? m["hnsw:space"] : undefined))
    .find((s) => typeof s === "string");
  return scoreKindOfChromaSpace(fromConfiguration ?? fromMetadata);
}

/**
 * True when `store[method]` is a function that is not `VectorStore`'s own (its `delete` throws
 * "Not implemented."). The owner is found on the prototype chain; a `VectorStore` from another copy
 * of `@langchain/core` is recognised by name.
 */
function implementsMethod(store: object, method: string): boolean {
  if (typeof Reflect.get(store, method) !== "function") return false;
  let owner: object | null = store;
  while (owner !== null && !Object.prototype.hasOwnProperty.call(owner, method)) owner = Object.getPrototypeOf(owner);
  if (owner === null) return false;
  const constructor: unknown = Object.prototype.hasOwnProperty.call(owner, "constructor")
    ? Reflect.get(owner, "constructor")
    : undefined;
  return !(typeof constructor === "function" && constructor.name === "VectorStore");
}

function vectorStoreType(store: VectorStore): string {
  try {
    const type: unknown = typeof store._vectorstoreType === "function" ? store._vectorstoreType() : undefined;
    return typeof type === "string" ? type : "";
  } catch {
    return "";
  }
}

function classNameOf(store: object): string {
  const constructor: unknown = Reflect.get(store, "constructor");
  return typeof constructor === "function" && constructor.name !== "" ? constructor.name : "the vector store";
}
