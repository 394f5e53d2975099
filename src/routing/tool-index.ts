import { createHash } from "node:crypto";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { Document } from "@langchain/core/documents";
import type { VectorStore } from "@langchain/core/vectorstores";
import { InvalidInput } from "../errors.js";
import { definedOnly } from "../internal.js";
import {
  addToMean,
  CappedVectorCache,
  centered,
  cosine,
  meansOfUnits,
  mix,
  type RoutingVector,
  unit,
} from "./card-vectors.js";
import { fitsPerPartition } from "./blended-embeddings.js";
import { EmbeddingsGuard } from "./embeddings-check.js";
import { DEFAULT_TOOL_INDEX_EXAMPLES, examplesWeight, type ToolIndexExamplesOptions } from "./index-examples.js";

export { DEFAULT_TOOL_INDEX_EXAMPLES, examplesWeight, type ToolIndexExamplesOptions } from "./index-examples.js";
import { routingTexts } from "./routing-text.js";
import { encodeLabel } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Offer, ToolCard } from "../ledger/schema.js";
import { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
import { InMemoryVectorIndex } from "./memory-vector-store.js";
import { denseOf, isSparse, type SparseVector, sparseMix, sparseUnit } from "./sparse-vector.js";
import {
  type CheckedVectorStore,
  checkVectorStore,
  type ScoreKindOption,
  toSimilarity,
} from "./vector-store-contract.js";

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
});

/**
 * With the default lexical embeddings, a partition's term weights are refitted (and its tools
 * re-embedded) once this share of its tools changed since the last fit: often enough that
 * learned words count for their rarity, rarely enough that an apply re-embeds one tool, not all.
 */
const REFIT_AFTER_CHANGED_SHARE = 0.1;

/** Options of one routing query. */
export interface RouteQuery {
  /** How many tools to offer. */
  k: number;
  /** Offer no tool scoring below this (the "no tool" path). @default -Infinity */
  minScore?: number;
  /** Tools to leave out (already offered another way). */
  exclude?: ReadonlySet<string>;
}

interface PartitionState {
  /** Fitted lexical embeddings, when the index owns them. */
  embeddings: EmbeddingsInterface;
  /** Hash of the routing text each tool was embedded from. */
  textHash: Map<string, string>;
  /** Vectors (parts) stored per tool, so spare parts and removed tools are deleted by id. */
  parts: Map<string, number>;
  changedSinceFit: number;
  /**
   * Vectors of tool parts (name, description, argument names) by text, in `tool` mode: "what if"
   * questions embed the same tool part with many sets of examples. Dropped with the state.
   */
  toolParts: CappedVectorCache;
  /**
   * Mean of the partition's tools' unit example vectors (a tool without examples counting as
   * zero) at the last (re)index, in `tool` mode with centering on; taken from each tool's example
   * vector before mixing.
   */
  exampleMean?: number[];
}

/**
 * Most vector entries the tool-part cache of a partition holds (numbers of a dense vector,
 * nonzero entries of a sparse one), the oldest evicted first: at most 32 MB dense, 48 MB sparse.
 */
const MAX_CACHED_TOOL_PART_ENTRIES = 4_000_000;

/**
 * Cards embedded and written to the store at a time: memory while indexing grows with this, not
 * with the partition (and a user's embeddings get batches of this many texts).
 */
const EMBED_BATCH_CARDS = 500;

/**
 * The routing index: tool vectors derived from the ledger's cards, rebuildable from it at any
 * time ({@link ToolIndex.reindex}). Upserts by a stable id per partition and tool, and re-embeds
 * a tool only when its routing text changed. Every query is filtered by partition.
 *
 * Any LangChain `VectorStore` can hold the vectors if it keeps the contract written down in
 * `vector-store-contract.ts` (and docs/routing.md): upsert by id, search by vector with a
 * `{ partition }` filter, delete by ids and by `{ partition }`, scores declared as similarities
 * or distances. It is checked here, in the constructor: a store that cannot serve is refused with
 * `UnsupportedVectorStore` naming what it lacks, never at the first request.
 */
export class ToolIndex {
  readonly ledger: Ledger;
  readonly mode: IndexMode;
  readonly store: VectorStore;
  /** The store as checked against the contract: how its scores read. */
  private readonly checked: CheckedVectorStore;
  private readonly sharedEmbeddings: EmbeddingsInterface | undefined;
  private readonly lexical: LexicalEmbeddingsOptions;
  private readonly examples: Required<ToolIndexExamplesOptions>;
  /** Checks the vectors of the embeddings the caller gave (never the index's own lexical ones). */
  private readonly guard = new EmbeddingsGuard();
  private readonly partitions = new Map<string, PartitionState>();
  /** Partition → how many times its vectors changed in this process (see {@link ToolIndex.revision}). */
  private readonly revisions = new Map<string, number>();

  constructor(options: ToolIndexOptions) {
    this.ledger = options.ledger;
    this.mode = options.mode ?? DEFAULT_TOOL_INDEX.mode;
    this.sharedEmbeddings = options.embeddings;
    this.lexical = { ...(options.lexical ?? DEFAULT_TOOL_INDEX.lexical) };
    this.examples = { ...DEFAULT_TOOL_INDEX_EXAMPLES, ...definedOnly(options.examples ?? {}) };
    const { max, half, center, embed } = this.examples;
    if (!(max >= 0) || !(half >= 0) || !(center >= 0 && center <= 1) || !(embed === "joined" || embed === "each")) {
      throw new InvalidInput(
        'ToolIndex: examples.max and examples.half must be numbers >= 0, examples.center a number in [0, 1], examples.embed "joined" or "each".',
        {
          context: this.examples,
        },
      );
    }
    const storeEmbeddings = options.embeddings ?? new LexicalEmbeddings(this.lexical);
    this.store = (options.vectorStore ?? DEFAULT_TOOL_INDEX.vectorStore)(storeEmbeddings);
    this.checked = checkVectorStore(this.store, options.scores ?? DEFAULT_TOOL_INDEX.scores);
  }

  /**
   * Rebuild a partition's vectors from its cards in the ledger (refitting lexical weights and,
   * with centering on, the mean example vector).
   */
  async reindex(partition: string): Promise<number> {
    this.bump(partition);
    const cards = await this.ledger.listCards(partition);
    // Forgotten first: a reindex the store fails part-way (Chroma down) leaves no state claiming
    // vectors it does not hold, so the next call rebuilds instead of routing over a partial index.
    this.partitions.delete(partition);
    await this.store.delete({ filter: { partition } });
    const state = this.freshState(partition, cards);
    state.exampleMean = await this.fitMean(state, cards);
    await this.embedCards(partition, state, cards);
    this.partitions.set(partition, state);
    this.bump(partition);
    return cards.length;
  }

  /**
   * Bring the index up to date with these cards (after registration, apply or undo). Only tools
   * whose routing text changed are re-embedded.
   */
  async upsertCards(partition: string, cards: readonly ToolCard[]): Promise<void> {
    let state = this.partitions.get(partition);
    if (!state) {
      await this.reindex(partition);
      return;
    }
    const changed = cards.filter((c) => state!.textHash.get(c.name) !== hashCard(c));
    if (changed.length === 0) return;
    this.bump(partition);
    state.changedSinceFit += changed.length;
    if (this.ownsEmbeddings && state.changedSinceFit >= Math.max(1, REFIT_AFTER_CHANGED_SHARE * state.textHash.size)) {
      await this.reindex(partition);
      return;
    }
    await this.embedCards(partition, state, changed);
    this.bump(partition);
  }

  /**
   * Remove a tool's vectors (by id: a one-key filter is all the contract asks of a store). A
   * partition not indexed in this process is rebuilt from the ledger first, so vectors an earlier
   * process stored are known.
   */
  async removeTool(partition: string, tool: string): Promise<void> {
    const state = await this.ensure(partition);
    this.bump(partition);
    const parts = state.parts.get(tool) ?? 1;
    await this.store.delete({ ids: Array.from({ length: parts }, (_, i) => docId(partition, tool, i)) });
    state.textHash.delete(tool);
    state.parts.delete(tool);
    this.bump(partition);
  }

  /**
   * A number that changes whenever the partition's vectors change in this process (a reindex, an
   * upsert that changed a tool, a removal; bumped when the change starts and when it ends, so a
   * route that overlapped one sees two revisions): the same revision before and after a route,
   * the same routing for the same request. What serving keys its routed sets by.
   */
  revision(partition: string): number {
    return this.revisions.get(partition) ?? 0;
  }

  private bump(partition: string): void {
    this.revisions.set(partition, (this.revisions.get(partition) ?? 0) + 1);
  }

  /** Tools indexed in a partition (after a reindex or upsert in this process), sorted. */
  indexedTools(partition: string): string[] {
    return [...(this.partitions.get(partition)?.textHash.keys() ?? [])].sort();
  }

  /** How many tools a partition has indexed in this process (constant time, unlike {@link indexedTools}). */
  toolCount(partition: string): number {
    return this.partitions.get(partition)?.textHash.size ?? 0;
  }

  /** True when the tool is indexed in the partition (in this process). */
  hasTool(partition: string, tool: string): boolean {
    return this.partitions.get(partition)?.textHash.has(tool) ?? false;
  }

  /** Embed a request as the partition's queries are embedded, as a dense vector. */
  async embedRequest(partition: string, request: string): Promise<number[]> {
    const state = await this.ensure(partition);
    return this.checkedQuery(await state.embeddings.embedQuery(request));
  }

  /**
   * Embed a request for {@link routeVector}: sparse (its nonzero entries only) when the partition
   * holds the package's lexical vectors in the in-memory store, else as {@link embedRequest}.
   */
  async embedQuery(partition: string, request: string): Promise<RoutingVector> {
    const state = await this.ensure(partition);
    const lexical = this.sparseEmbeddings(state);
    return lexical ? lexical.embedSparse(request) : this.checkedQuery(await state.embeddings.embedQuery(request));
  }

  /** The top-k tools for a request, best first, with ranks from 1. */
  async route(partition: string, request: string, query: RouteQuery): Promise<Offer[]> {
    const vector = await this.embedQuery(partition, request);
    return this.routeVector(partition, vector, query);
  }

  /** {@link route} for an already embedded request (dense, or sparse from {@link embedQuery}). */
  async routeVector(partition: string, vector: RoutingVector, query: RouteQuery): Promise<Offer[]> {
    const state = await this.ensure(partition);
    const tools = state.textHash.size;
    if (tools === 0 || query.k <= 0) return [];
    const exclude = query.exclude ?? new Set<string>();
    // One vector per tool: k (+ excluded) hits suffice. One per example: several hits may be the
    // same tool, so fetch more and keep each tool's best.
    const wanted = query.k + exclude.size;
    const fetch = this.mode === "tool" ? Math.min(tools, wanted) : wanted * 8;
    const kind = await this.checked.scoreKind();
    const filter = this.partitionFilter(partition);
    const hits = !isSparse(vector)
      ? await this.store.similaritySearchVectorWithScore(unit(vector), fetch, filter)
      : this.sparseStore
        ? await this.sparseStore.similaritySearchSparseWithScore(sparseUnit(vector), fetch, filter)
        : await this.store.similaritySearchVectorWithScore(unit(denseOf(vector)), fetch, filter);
    const best = new Map<string, number>();
    for (const [doc, raw] of hits) {
      const tool = String(doc.metadata.tool);
      const score = toSimilarity(kind, raw);
      if (exclude.has(tool)) continue;
      if (!best.has(tool) || score > best.get(tool)!) best.set(tool, score);
    }
    const minScore = query.minScore ?? Number.NEGATIVE_INFINITY;
    return [...best.entries()]
      .filter(([, score]) => score >= minScore)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, query.k)
      .map(([tool, score], i) => ({ tool, rank: i + 1, score }));
  }

  /**
   * The vectors a card would have in this index, without storing them: for "what if" questions
   * (would this example bring the tool into the offered set for that request?).
   */
  async cardVectors(partition: string, card: ToolCard): Promise<number[][]> {
    const state = await this.ensure(partition);
    return (await this.embedAll(state, [card]))[0].map((v) => (isSparse(v) ? denseOf(v) : v));
  }

  /** Best cosine similarity of a request vector with any of a tool's vectors. */
  static bestScore(request: readonly number[], vectors: readonly (readonly number[])[]): number {
    let best = Number.NEGATIVE_INFINITY;
    for (const v of vectors) best = Math.max(best, cosine(request, v));
    return best;
  }

  /**
   * The lexical embeddings whose sparse vectors the partition's store holds as they are (the
   * in-memory store, centering off: a centered vector is dense), else undefined (dense vectors).
   */
  private sparseEmbeddings(state: PartitionState): LexicalEmbeddings | undefined {
    const { embeddings } = state;
    return this.sparseStore !== undefined && this.examples.center === 0 && ownLexical(embeddings)
      ? embeddings
      : undefined;
  }

  /**
   * The store when it is the package's in-memory index with its own searches (a subclass that
   * overrides them gets dense vectors, through the methods it overrides).
   */
  private get sparseStore(): InMemoryVectorIndex | undefined {
    const store = this.store;
    const own = InMemoryVectorIndex.prototype;
    return store instanceof InMemoryVectorIndex &&
      store.similaritySearchVectorWithScore === own.similaritySearchVectorWithScore &&
      store.addVectors === own.addVectors
      ? store
      : undefined;
  }

  private async embedTexts(state: PartitionState, texts: string[]): Promise<RoutingVector[]> {
    if (texts.length === 0) return [];
    const lexical = this.sparseEmbeddings(state);
    return lexical
      ? texts.map((t) => lexical.embedSparse(t))
      : this.checkedDocuments(await state.embeddings.embedDocuments(texts));
  }

  /** The caller's document vectors, checked ({@link EmbeddingsGuard}); the index's own lexical ones as they are. */
  private checkedDocuments(vectors: number[][]): number[][] {
    return this.sharedEmbeddings === undefined ? vectors : this.guard.check(vectors, "documents");
  }

  private checkedQuery(vector: number[]): number[] {
    return this.sharedEmbeddings === undefined ? vector : this.guard.check([vector], "query")[0];
  }

  /**
   * The mean of the partition's unit example vectors (centering on, `tool` mode), embedded batch
   * by batch; undefined when centering is off or no tool has examples.
   */
  private async fitMean(state: PartitionState, cards: readonly ToolCard[]): Promise<number[] | undefined> {
    if (this.mode !== "tool" || this.examples.center === 0) return undefined;
    let mean: number[] | undefined;
    for (let start = 0; start < cards.length; start += EMBED_BATCH_CARDS) {
      const examples = cards
        .slice(start, start + EMBED_BATCH_CARDS)
        .map((c) => routingTexts(c).examples)
        .filter((e) => e.length > 0);
      if (examples.length === 0) continue;
      const each = this.examples.embed === "each";
      const texts = each ? examples.flat() : examples.map((e) => e.join("\n"));
      const vectors = this.checkedDocuments(await state.embeddings.embedDocuments(texts));
      const perTool = each
        ? meansOfUnits(
            vectors,
            examples.map((e) => e.length),
          )
        : vectors;
      mean = addToMean(mean, perTool, cards.length);
    }
    return mean;
  }

  /** Each card's vectors, in the order of its pieces (sparse when {@link sparseEmbeddings} says so). */
  private async embedAll(state: PartitionState, cards: readonly ToolCard[]): Promise<RoutingVector[][]> {
    if (this.mode === "examples") {
      const pieces = cards.map((c) => this.pieces(c).map((p) => p.text));
      const flat = await this.embedTexts(state, pieces.flat());
      let i = 0;
      return pieces.map((p) => p.map(() => flat[i++]));
    }
    // Tool part and examples embedded apart, then mixed: one batch for every text not cached
    // (tool parts are).
    const parts = cards.map((c) => routingTexts(c));
    const cache = state.toolParts;
    const toolVectors = new Map<string, RoutingVector>();
    for (const p of parts) {
      const cached = cache.get(p.tool);
      if (cached) toolVectors.set(p.tool, cached);
    }
    const missing = [...new Set(parts.map((p) => p.tool).filter((t) => !toolVectors.has(t)))];
    const withExamples = parts.filter((p) => p.examples.length > 0);
    const each = this.examples.embed === "each";
    const examples = each ? withExamples.flatMap((p) => p.examples) : withExamples.map((p) => p.examples.join("\n"));
    const flat = await this.embedTexts(state, [...missing, ...examples]);
    missing.forEach((text, i) => {
      toolVectors.set(text, flat[i]);
      cache.set(text, flat[i]);
    });
    const embedded = flat.slice(missing.length);
    const exampleVectors: RoutingVector[] = each
      ? meansOfUnits(
          embedded.map((v) => (isSparse(v) ? denseOf(v) : v)),
          withExamples.map((p) => p.examples.length),
        )
      : embedded;
    let i = 0;
    return parts.map((p) => {
      const tool = toolVectors.get(p.tool)!;
      if (p.examples.length === 0) return [tool];
      const weight = examplesWeight(p.examples.length, this.examples);
      const e = exampleVectors[i++];
      if (isSparse(tool) && isSparse(e)) return [sparseMix(tool, e, weight)];
      const dense = centered(isSparse(e) ? denseOf(e) : e, state.exampleMean, this.examples.center);
      return [mix(isSparse(tool) ? denseOf(tool) : tool, dense, weight)];
    });
  }

  private pieces(card: ToolCard): { kind: string; text: string }[] {
    const parts = routingTexts(card);
    return this.mode === "tool"
      ? [{ kind: "tool", text: [parts.tool, ...parts.examples].join("\n") }]
      : [{ kind: "tool", text: parts.tool }, ...parts.examples.map((text) => ({ kind: "example", text }))];
  }

  /** True when the index fits the embeddings per partition (its own lexical ones, or a blend's lexical part). */
  private get ownsEmbeddings(): boolean {
    return this.sharedEmbeddings === undefined || fitsPerPartition(this.sharedEmbeddings);
  }

  private partitionFilter(partition: string): Record<string, string> {
    return { partition };
  }

  private async ensure(partition: string): Promise<PartitionState> {
    const state = this.partitions.get(partition);
    if (state) return state;
    await this.reindex(partition);
    return this.partitions.get(partition)!;
  }

  private freshState(partition: string, cards: readonly ToolCard[]): PartitionState {
    let embeddings = this.sharedEmbeddings;
    if (!embeddings) {
      const lexical = new LexicalEmbeddings(this.lexical);
      for (const card of cards) lexical.partialFit(this.pieces(card).map((p) => p.text));
      embeddings = lexical;
    } else if (fitsPerPartition(embeddings)) {
      // A blend with an unfitted lexical part: fitted on this partition's texts, as the default is.
      embeddings = embeddings.fittedOn(cards.flatMap((card) => this.pieces(card).map((p) => p.text)));
    }
    if (partition === "") throw new InvalidInput("A partition name cannot be empty.");
    return {
      embeddings,
      textHash: new Map(),
      parts: new Map(),
      changedSinceFit: 0,
      toolParts: new CappedVectorCache(MAX_CACHED_TOOL_PART_ENTRIES),
    };
  }

  /** Embeds the cards and writes their vectors, {@link EMBED_BATCH_CARDS} at a time. */
  private async embedCards(partition: string, state: PartitionState, cards: readonly ToolCard[]): Promise<void> {
    for (let start = 0; start < cards.length; start += EMBED_BATCH_CARDS) {
      await this.embedBatch(partition, state, cards.slice(start, start + EMBED_BATCH_CARDS));
    }
  }

  private async embedBatch(partition: string, state: PartitionState, cards: readonly ToolCard[]): Promise<void> {
    const docs: Document[] = [];
    const ids: string[] = [];
    const spare: string[] = [];
    const partCounts: number[] = [];
    for (const card of cards) {
      const pieces = this.pieces(card);
      // Parts beyond the new count (examples mode, fewer examples) go; the rest are replaced by id.
      for (let i = pieces.length; i < (state.parts.get(card.name) ?? 0); i++)
        spare.push(docId(partition, card.name, i));
      partCounts.push(pieces.length);
      pieces.forEach((piece, i) => {
        ids.push(docId(partition, card.name, i));
        docs.push(
          new Document({
            pageContent: piece.text,
            metadata: { partition, tool: card.name, kind: piece.kind },
          }),
        );
      });
    }
    if (spare.length > 0) await this.store.delete({ ids: spare });
    // Unit vectors only, so that a distance store ranks as a similarity store (see `scores`).
    const vectors = (await this.embedAll(state, cards)).flat();
    const sparseStore = this.sparseStore;
    if (sparseStore && vectors.every(isSparse)) {
      await sparseStore.addSparseVectors((vectors as SparseVector[]).map(sparseUnit), docs, { ids });
    } else {
      await this.store.addVectors(
        vectors.map((v) => unit(isSparse(v) ? denseOf(v) : v)),
        docs,
        { ids },
      );
    }
    // Only once the store holds them: after a failed write (the store down) the same cards are
    // still "changed", so the next upsertCards writes them instead of skipping them as done.
    cards.forEach((card, i) => {
      state.parts.set(card.name, partCounts[i]);
      state.textHash.set(card.name, hashCard(card));
    });
  }
}

/**
 * True for the package's lexical embeddings as they are (a subclass overriding how it embeds gets
 * its own methods called, densely).
 */
function ownLexical(embeddings: EmbeddingsInterface): embeddings is LexicalEmbeddings {
  const own = LexicalEmbeddings.prototype;
  return (
    embeddings instanceof LexicalEmbeddings &&
    embeddings.embedDocuments === own.embedDocuments &&
    embeddings.embedQuery === own.embedQuery
  );
}

function hashCard(card: ToolCard): string {
  const parts = routingTexts(card);
  return createHash("sha1").update(parts.tool).update("\u0000").update(parts.examples.join("\u0000")).digest("hex");
}

/** Stable id of one vector: partition, tool and part number. */
function docId(partition: string, tool: string, part: number): string {
  return `${encodeLabel(partition)}/${encodeLabel(tool)}/${part}`;
}
