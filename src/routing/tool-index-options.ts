/**
 * The options of the routing index ({@link ToolIndex} in `tool-index.ts`) and their defaults, in
 * one place.
 */
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { VectorStore } from "@langchain/core/vectorstores";
import type { Ledger } from "../ledger/ledger.js";
import type { LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
import { InMemoryVectorIndex } from "./memory-vector-store.js";
import type { ScoreKindOption } from "./vector-store-contract.js";
import { DEFAULT_TOOL_INDEX_EXAMPLES, type ToolIndexExamplesOptions } from "./index-examples.js";
import { DEFAULT_WORDINGS, type WordingsOptions } from "./wordings.js";

export { DEFAULT_TOOL_INDEX_EXAMPLES, examplesWeight, type ToolIndexExamplesOptions } from "./index-examples.js";

/**
 * How a card becomes vectors.
 * - `tool`: one vector per tool: the unit vector of its tool part (name, description, argument
 *   names) plus, when it has example requests, their unit vector weighted by
 *   {@link examplesWeight} (renormalised). The default: on MetaTool it routes clearly better
 *   (see docs/benchmarks.md).
 * - `examples`: one vector for the tool part and one per example request; a tool scores its best match.
 */
export type IndexMode = "tool" | "examples";

/** Options of {@link ToolIndex}. */
export interface ToolIndexOptions {
  /** The ledger the index is derived from. */
  ledger: Ledger;
  /**
   * Embeddings for routing text and requests. Any LangChain `Embeddings` works. The default,
   * {@link LexicalEmbeddings}, is offline and is fitted per partition on its tools' routing text.
   * @default new LexicalEmbeddings() per partition
   */
  embeddings?: EmbeddingsInterface;
  /**
   * Options of the default {@link LexicalEmbeddings} (not used when `embeddings` is given), e.g.
   * `{ dimension: 2048 }` for a quarter of the bytes per tool in a dense store (Chroma); the
   * default in-memory store keeps only nonzero entries, whatever the dimension.
   * @default {} (see DEFAULT_LEXICAL_EMBEDDINGS)
   */
  lexical?: LexicalEmbeddingsOptions;
  /**
   * Makes the vector store: any LangChain `VectorStore` that keeps the contract of
   * `vector-store-contract.ts` (docs/routing.md): `addVectors` with ids that upsert,
   * `similaritySearchVectorWithScore` filtered by `{ partition }`, `delete` by ids and by
   * `{ partition }`. Checked here, when the index is built: a store that lacks one of them (core's
   * `FakeVectorStore`, LangChain's `MemoryVectorStore`) is refused with `UnsupportedVectorStore`
   * naming it. Every document carries flat `partition`, `tool` and `kind` metadata.
   * @default (embeddings) => new InMemoryVectorIndex(embeddings)
   */
  vectorStore?: (embeddings: EmbeddingsInterface) => VectorStore;
  /**
   * Whether the store's scores are similarities or distances, and which: `similarity` (higher is
   * better), `cosine-distance` (`1 - cosine`) or `l2-distance` (squared Euclidean). Distances are
   * turned into the cosine similarity the rest of the package reads (the index stores and searches
   * unit vectors only, so the conversion is exact and rankings come out as a similarity store's).
   * `auto` knows both stores of this package and `@langchain/community`'s `Chroma` (a distance in
   * its collection's space, read from the server at the first search); any other store must say.
   * @default "auto"
   */
  scores?: ScoreKindOption;
  /**
   * One vector per tool, or one per example request.
   * @default "tool"
   */
  mode?: IndexMode;
  /**
   * In `tool` mode, how a tool's example requests enter its vector.
   * - `max`, `half`: how much they weigh against its tool part, `max × n / (n + half)` for `n`
   *   examples. A few examples move the vector a little; many, up to `max` times the tool part.
   *   On MetaTool with 12 random real requests per tool this routes better than one vector of
   *   the whole text (see docs/benchmarks.md).
   * - `center`: how much of the partition's mean example vector is taken from each tool's
   *   example vector, from 0 (off) to 1. Requests share a style ("I need help finding…") that
   *   every tool's examples carry; uncentered, tools with many examples match any long request a
   *   little and can push tools that learned nothing out of routing. Centered, fewer such tools
   *   lose requests, for a little accuracy (docs/routing.md has the measurements). The mean is
   *   taken when a partition is (re)indexed (see {@link ToolIndex.reindex}).
   * - `embed`: `joined` embeds a tool's examples as one text; `each` embeds each on its own and
   *   averages their unit vectors (what a sentence encoder needs: it reads one sentence, not a list).
   * @default { max: 2, half: 4, center: 0, embed: "joined" } (see DEFAULT_TOOL_INDEX_EXAMPLES)
   */
  examples?: ToolIndexExamplesOptions;
  /**
   * Wordings of requests each tool served, kept per partition and tool, each its own vector: a
   * tool's score is its card's plus the sum of its `best` wording similarities. Gated as learned
   * texts are, deduplicated, at most `cap` a tool (a spread of the window), rebuilt from the
   * ledger's turn records (see {@link ToolIndex.refreshWordings} and docs/routing.md). `false`
   * turns them off: routing from the cards alone.
   * @default { enabled: true, cap: 200, best: 3, check: 0 } (see DEFAULT_WORDINGS)
   */
  wordings?: WordingsOptions | boolean;
}

/**
 * The defaults applied to every optional {@link ToolIndexOptions} field left unset (`embeddings`
 * has no value of its own: without it each partition fits its own {@link LexicalEmbeddings}).
 */
export const DEFAULT_TOOL_INDEX: Readonly<Required<Omit<ToolIndexOptions, "ledger" | "embeddings">>> = Object.freeze({
  lexical: Object.freeze({}),
  vectorStore: (embeddings: EmbeddingsInterface): VectorStore => new InMemoryVectorIndex(embeddings),
  scores: "auto",
  mode: "tool",
  examples: DEFAULT_TOOL_INDEX_EXAMPLES,
  wordings: DEFAULT_WORDINGS,
});

/** Options of one routing query. */
export interface RouteQuery {
  /** How many tools to offer. */
  k: number;
  /** Offer no tool scoring below this (the "no tool" path). @default -Infinity */
  minScore?: number;
  /** Tools to leave out (already offered another way). */
  exclude?: ReadonlySet<string>;
}
