import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { Document } from "@langchain/core/documents";
import type { VectorStore } from "@langchain/core/vectorstores";
import { InvalidInput } from "../errors.js";
import { definedOnly } from "../internal.js";
import {
  DEFAULT_TOOL_INDEX,
  DEFAULT_TOOL_INDEX_EXAMPLES,
  type IndexMode,
  type RouteQuery,
  type ToolIndexOptions,
} from "./tool-index-options.js";
import { type Wording, type WordingRecords, type WordingsMemo, wordingsFromLedger } from "./wordings.js";
import { rankWithWordings, wordingsOptions, type WordingsOptions } from "./wordings.js";
import { fitExampleMean, cosine, mixedToolVectors, type RoutingVector, unit } from "./card-vectors.js";
import { fitsPerPartition, ownBlend } from "./blended-embeddings.js";
import { cardPieces, freshPartitionState, type PartitionState } from "./partition-state.js";
import { EmbeddingsGuard } from "./embeddings-check.js";
import type { ToolIndexExamplesOptions } from "./index-examples.js";
import { docId, hashCard, ownLexical, wordingId, wordingPartition } from "./tool-index-ids.js";
import { type WordingsHost, writeGuardedWordings, writeWordings } from "./tool-index-wordings.js";
import { calibratedWordingTerms, cardScores, forgetWordings, type ScoringHost } from "./tool-index-scoring.js";
import { IndexSearches, type Scored } from "./tool-index-search.js";
import type { Ledger } from "../ledger/ledger.js";
import { changesSince, type PartitionVersion } from "../ledger/versions.js";
import type { Offer, ToolCard } from "../ledger/schema.js";
import { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";

export {
  DEFAULT_TOOL_INDEX,
  DEFAULT_TOOL_INDEX_EXAMPLES,
  examplesWeight,
  type IndexMode,
  type RouteQuery,
  type ToolIndexExamplesOptions,
  type ToolIndexOptions,
} from "./tool-index-options.js";
import { InMemoryVectorIndex } from "./memory-vector-store.js";
import { denseOf, isSparse, type SparseVector, sparseUnit } from "./sparse-vector.js";
import { type CheckedVectorStore, checkVectorStore, type ScoreKindOption } from "./vector-store-contract.js";

/**
 * With the default lexical embeddings, a partition's term weights are refitted (and its tools
 * re-embedded) once this share of its tools changed since the last fit: often enough that
 * learned words count for their rarity, rarely enough that an apply re-embeds one tool, not all.
 */
const REFIT_AFTER_CHANGED_SHARE = 0.1;

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
  /** Checks the vectors of the embeddings the caller gave (none for the index's own lexical ones). */
  private readonly guard: EmbeddingsGuard | undefined;
  private readonly wordings: Required<WordingsOptions>;
  /** Per partition, the last wordings read (unchanged records are not gated again). */
  private readonly wordingMemos = new Map<string, WordingsMemo>();
  private readonly partitions = new Map<string, PartitionState>();
  /** Partition → how many times its vectors changed in this process (see {@link ToolIndex.revision}). */
  private readonly revisions = new Map<string, number>();
  /** Partition → the version of the ledger's partition its state is caught up with (see {@link ToolIndex.follow}). */
  private readonly followed = new Map<string, number>();
  private readonly searches: IndexSearches;

  constructor(options: ToolIndexOptions) {
    this.ledger = options.ledger;
    this.mode = options.mode ?? DEFAULT_TOOL_INDEX.mode;
    this.sharedEmbeddings = options.embeddings;
    this.guard = options.embeddings ? new EmbeddingsGuard() : undefined;
    this.lexical = { ...(options.lexical ?? DEFAULT_TOOL_INDEX.lexical) };
    this.examples = { ...DEFAULT_TOOL_INDEX_EXAMPLES, ...definedOnly(options.examples ?? {}) };
    this.wordings = wordingsOptions(options.wordings ?? DEFAULT_TOOL_INDEX.wordings);
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
    this.searches = new IndexSearches(this.store, this.checked, () => this.sparseStore);
  }

  /**
   * Rebuild a partition's vectors from its cards in the ledger (refitting lexical weights and,
   * with centering on, the mean example vector).
   */
  async reindex(partition: string, records?: WordingRecords): Promise<number> {
    this.bump(partition);
    // Read before the cards: a change announced meanwhile is followed again on the next turn.
    const [version] = await this.ledger.readVersions([partition]);
    const cards = await this.ledger.listCards(partition);
    const wordings = this.wordings.enabled
      ? await wordingsFromLedger(this.ledger, partition, cards, this.wordings, this.memoOf(partition), records)
      : new Map<string, Wording[]>();
    // Forgotten first: a reindex the store fails part-way (Chroma down) leaves no state claiming
    // vectors it does not hold, so the next call rebuilds instead of routing over a partial index.
    const previous = this.partitions.get(partition);
    this.partitions.delete(partition);
    await this.clearFor(partition, previous, cards);
    if (partition === "") throw new InvalidInput("A partition name cannot be empty.");
    const state = freshPartitionState(cards, wordings, {
      mode: this.mode,
      shared: this.sharedEmbeddings,
      lexical: this.lexical,
    });
    if (this.mode === "tool" && this.examples.center > 0)
      state.exampleMean = await fitExampleMean(
        state.embeddings,
        cards,
        EMBED_BATCH_CARDS,
        this.examples.embed === "each",
        (v) => this.checkedDocuments(v),
      );
    await this.embedCards(partition, state, cards);
    await this.writeWordings(partition, state, wordings);
    this.partitions.set(partition, state);
    this.followed.set(partition, version.seq);
    this.bump(partition);
    return cards.length;
  }

  /** Build the partition from the ledger if this index has not yet, else catch it up ({@link follow}). */
  async warm(partition: string): Promise<void> {
    if (this.partitions.has(partition)) await this.follow(partition);
    else await this.ensure(partition);
  }

  /**
   * Before a rebuild: the index's own in-memory store, which no other process searches, is
   * emptied of the partition; a store other processes may be searching (Chroma) is never emptied
   * under them: the rebuild overwrites every tool's vectors by id, and only the tools this index
   * held that the ledger no longer has are deleted, by id.
   */
  private async clearFor(partition: string, previous: PartitionState | undefined, cards: readonly ToolCard[]) {
    if (this.sparseStore) {
      await this.store.delete({ filter: { partition } });
      if (this.wordings.enabled) await this.store.delete({ filter: { partition: wordingPartition(partition) } });
      return;
    }
    if (!previous) return;
    const kept = new Set(cards.map((c) => c.name));
    const gone = [...previous.parts].filter(([tool]) => !kept.has(tool));
    const ids = gone.flatMap(([tool, parts]) => Array.from({ length: parts }, (_, i) => docId(partition, tool, i)));
    for (const [tool] of gone)
      for (const key of previous.wordings.get(tool)?.keys() ?? []) ids.push(wordingId(partition, tool, key));
    if (ids.length > 0) await this.store.delete({ ids });
  }

  /**
   * Catch a partition up with what any process changed since this index last did (the ledger's
   * partition version, `ledger/versions.ts`; read here when not given): the cards that changed are
   * read and re-embedded, the tools that went are removed, the wordings are brought up to date
   * with the ledger's turn records. Only what changed is written, by id: nothing is deleted by
   * partition, so another process searching a shared store (Chroma) never meets a partition
   * half-written. A partition not indexed here yet has nothing to catch up (its first route builds
   * it from the ledger). Serving calls it once a turn with the version it read.
   */
  async follow(partition: string, version?: PartitionVersion): Promise<void> {
    const state = this.partitions.get(partition);
    const seen = this.followed.get(partition);
    if (!state || seen === undefined) return;
    const now = version ?? (await this.ledger.readVersions([partition]))[0];
    const since = changesSince(now, seen);
    if (!since) return;
    if (since.kinds.has("cards")) {
      const cards =
        since.tools === "all"
          ? await this.ledger.listCards(partition)
          : await this.ledger.getCards(partition, [...since.tools]);
      const changed = cards.filter((c) => state.textHash.get(c.name) !== hashCard(c));
      if (changed.length > 0) {
        this.bump(partition);
        await this.embedCards(partition, state, changed);
        this.bump(partition);
      }
      const present = new Set(cards.map((c) => c.name));
      const asked = since.tools === "all" ? [...state.textHash.keys()] : [...since.tools];
      for (const tool of asked)
        if (!present.has(tool) && state.textHash.has(tool)) await this.removeTool(partition, tool);
    }
    if (since.kinds.has("wordings")) await this.followWordings(partition, state);
    // Only once every step above is done: a follow that failed part-way is tried again next turn.
    if ((this.followed.get(partition) ?? -1) < now.seq) this.followed.set(partition, now.seq);
  }

  /** The wordings as the ledger's turn records give them now, written without a refit and never announced. */
  private async followWordings(partition: string, state: PartitionState): Promise<void> {
    if (!this.wordings.enabled) return;
    const cards = await this.ledger.listCards(partition);
    const wanted = await wordingsFromLedger(this.ledger, partition, cards, this.wordings, this.memoOf(partition));
    await this.writeWordings(partition, state, wanted);
  }

  private memoOf(partition: string): WordingsMemo {
    let memo = this.wordingMemos.get(partition);
    if (!memo) {
      memo = {};
      this.wordingMemos.set(partition, memo);
    }
    return memo;
  }

  /**
   * Bring the index up to date with these cards (after registration, apply or undo). Only tools
   * whose routing text changed are re-embedded. With `trial`, cards not in the ledger are put in
   * for a moment (the review's guard), with no refit.
   */
  async upsertCards(partition: string, cards: readonly ToolCard[], options: { trial?: boolean } = {}): Promise<void> {
    let state = this.partitions.get(partition);
    if (!state) {
      await this.reindex(partition);
      return;
    }
    const changed = cards.filter((c) => state!.textHash.get(c.name) !== hashCard(c));
    if (changed.length === 0) return;
    this.bump(partition);
    // A trial (a review's guard trying cards not in the ledger, then putting them back) never
    // refits: a refit rebuilds from the ledger's cards.
    if (!options.trial) state.changedSinceFit += changed.length;
    if (
      !options.trial &&
      this.ownsEmbeddings &&
      state.changedSinceFit >= Math.max(1, REFIT_AFTER_CHANGED_SHARE * state.textHash.size)
    ) {
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
    const wordings = state.wordings.get(tool);
    if (wordings) {
      await this.store.delete({ ids: [...wordings.keys()].map((key) => wordingId(partition, tool, key)) });
      state.wordings.delete(tool);
      state.wordingCount -= wordings.size;
      forgetWordings(state);
    }
    state.textHash.delete(tool);
    state.parts.delete(tool);
    this.bump(partition);
  }

  /**
   * Changes whenever the partition's vectors change in this process (reindex, upsert, removal,
   * wordings; bumped when a change starts and ends): what serving keys its routed sets by.
   */
  revision(partition: string): number {
    return this.revisions.get(partition) ?? 0;
  }

  private bump(partition: string): void {
    this.revisions.set(partition, (this.revisions.get(partition) ?? 0) + 1);
  }

  /** True when this index holds the card's routing text as it is now (a trial put in with {@link upsertCards}). */
  holdsCard(partition: string, card: ToolCard): boolean {
    return this.partitions.get(partition)?.textHash.get(card.name) === hashCard(card);
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

  /** Embed a request as the partition's queries are embedded, as a dense vector (through {@link embedQuery}: the same numbers). */
  async embedRequest(partition: string, request: string): Promise<number[]> {
    const vector = await this.embedQuery(partition, request);
    return isSparse(vector) ? denseOf(vector) : vector;
  }

  /**
   * Embed a request for {@link routeVector}: sparse (its nonzero entries only) when the partition
   * holds the package's lexical vectors in the in-memory store, else as {@link embedRequest}.
   */
  async embedQuery(partition: string, request: string): Promise<RoutingVector> {
    const state = await this.ensure(partition);
    const sparse = this.sparseEmbedder(state);
    if (!sparse) return this.checkedDocuments([await state.embeddings.embedQuery(request)], "query")[0];
    return state.requests.through(request, async () => (await sparse([request], "query"))[0]);
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
    // With wordings, every card score (a tool's wordings may lift it past cards that score
    // higher); else one vector per tool: k (+ excluded) hits suffice; one per example: more.
    const wanted = query.k + exclude.size;
    const few = this.mode === "tool" ? Math.min(tools, wanted) : wanted * 8;
    const { cards, terms } = this.routesWithWordings(state)
      ? await this.scored(partition, state, vector)
      : { cards: await this.cardScores(partition, state, vector, few), terms: undefined };
    const best = exclude.size === 0 ? cards : new Map([...cards].filter(([tool]) => !exclude.has(tool)));
    return rankWithWordings(best, terms, query.k, query.minScore ?? Number.NEGATIVE_INFINITY, this.wordings.keep).map(
      ([tool, score], i) => ({
        tool,
        rank: i + 1,
        score,
      }),
    );
  }

  /** What each tool's wordings add to its card's score for a request vector (`wording-calibration.ts`). */
  async wordingScores(partition: string, vector: RoutingVector): Promise<Map<string, number>> {
    const state = await this.ensure(partition);
    if (!this.routesWithWordings(state)) return new Map();
    return new Map((await this.scored(partition, state, vector)).terms);
  }

  /** Every card's score and the wordings' terms for a request vector (the last few kept: `IndexSearches.scored`). */
  private scored(partition: string, state: PartitionState, vector: RoutingVector): Promise<Scored> {
    return this.searches.scored(
      partition,
      vector,
      () => this.revision(partition),
      async () => {
        const cards = await this.cardScores(partition, state, vector);
        return { cards, terms: await this.wordingTermsOf(partition, state, vector, cards) };
      },
    );
  }

  /** A tool's stored wordings (in this process), sorted. */
  wordingsOf(partition: string, tool: string): string[] {
    return [...(this.partitions.get(partition)?.wordings.get(tool)?.values() ?? [])].sort();
  }

  /**
   * Bring a partition's wordings up to date with the newest turn records of the review's window (the partition's `reviewTurns`)
   * (or `records`: a review passes its window), writing only what changed (the revision changes
   * then). Returns how many are stored. A review calls it before it asks routing "what if".
   */
  async refreshWordings(partition: string, records?: WordingRecords): Promise<number> {
    const state = await this.ensure(partition);
    if (!this.wordings.enabled) return 0;
    const before = this.revision(partition);
    const cards = await this.ledger.listCards(partition);
    const wanted = await wordingsFromLedger(
      this.ledger,
      partition,
      cards,
      this.wordings,
      this.memoOf(partition),
      records,
    );
    // The lexical weights are fitted on the cards alone: new wordings need no refit.
    await this.writeWordings(partition, state, wanted);
    // Every process serving the partition follows what changed here on its next turn.
    if (this.revision(partition) !== before) {
      const seq = await this.ledger.announce({ partition, kind: "wordings" });
      // Nothing else was announced between: this index is already where that version says.
      if (this.followed.get(partition) === seq - 1) this.followed.set(partition, seq);
    }
    return this.partitions.get(partition)?.wordingCount ?? 0;
  }

  /** Stores `wanted`, the re-check holding back what would push other tools' requests out. */
  private async writeWordings(partition: string, state: PartitionState, wanted: ReadonlyMap<string, Wording[]>) {
    const host: WordingsHost = {
      store: this.store,
      bump: () => {
        forgetWordings(state);
        this.bump(partition);
      },
      embed: (texts) => this.embedTexts(state, texts),
      write: (vectors, docs, ids) => this.write(vectors, docs, ids),
      search: (vector, k, filter) => this.searches.search(vector, k, filter),
    };
    if (this.wordings.check <= 0) return writeWordings(host, partition, state, wanted);
    // The re-check routes as the partition routes: its `routingK` (one settings read a write).
    const { routingK } = await this.ledger.getSettings(partition);
    await writeGuardedWordings(host, partition, state, wanted, { ...this.wordings, k: routingK });
  }

  private routesWithWordings = (state: PartitionState): boolean => this.wordings.enabled && state.wordingCount > 0;

  private async wordingTermsOf(
    partition: string,
    state: PartitionState,
    vector: RoutingVector,
    cards: ReadonlyMap<string, number>,
  ): Promise<Map<string, number>> {
    return calibratedWordingTerms(this.scoringHost(partition, state), state, vector, cards, this.wordings);
  }

  /** Each tool's best card score for a request vector, from the first `k` card vectors (default: all). */
  private cardScores(partition: string, state: PartitionState, vector: RoutingVector, k?: number) {
    return cardScores(this.scoringHost(partition, state), state, vector, k);
  }

  private scoringHost(partition: string, state: PartitionState): ScoringHost {
    return {
      partition,
      embed: (texts) => this.embedTexts(state, texts),
      search: (vector, k, filter) => this.searches.search(vector, k, filter),
      listCards: () => this.ledger.listCards(partition),
    };
  }

  /** Writes unit vectors (sparse ones as they are to the in-memory store). */
  private async write(vectors: RoutingVector[], docs: Document[], ids: string[]): Promise<void> {
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
    return vectors.reduce((best, v) => Math.max(best, cosine(request, v)), Number.NEGATIVE_INFINITY);
  }

  /**
   * How the partition's texts are embedded by their nonzero entries when its store holds them as
   * they are (the in-memory store, centering off: a centered vector is dense): the package's
   * lexical embeddings, or a blend of them with other parts (the sentence-encoder preset), whose
   * dense parts are checked like any caller's vectors. Else undefined (dense vectors).
   */
  private sparseEmbedder(
    state: PartitionState,
  ): ((texts: string[], kind: "documents" | "query") => Promise<SparseVector[]>) | undefined {
    const { embeddings } = state;
    if (this.sparseStore === undefined || this.examples.center !== 0) return undefined;
    if (ownLexical(embeddings)) return async (texts) => texts.map((t) => embeddings.embedSparse(t));
    if (!ownBlend(embeddings)) return undefined;
    return async (texts, kind) => {
      const vectors = await embeddings.embedSparse(texts, kind === "query");
      return this.guard ? this.guard.checkSparse(vectors, kind) : vectors;
    };
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
    const sparse = this.sparseEmbedder(state);
    return sparse ? sparse(texts, "documents") : this.checkedDocuments(await state.embeddings.embedDocuments(texts));
  }

  /** The caller's document vectors, checked ({@link EmbeddingsGuard}); the index's own lexical ones as they are. */
  private checkedDocuments(vectors: number[][], kind: "documents" | "query" = "documents"): number[][] {
    return this.guard ? this.guard.check(vectors, kind) : vectors;
  }

  /** Each card's vectors, in the order of its pieces (sparse when {@link sparseEmbedder} says so). */
  private async embedAll(state: PartitionState, cards: readonly ToolCard[]): Promise<RoutingVector[][]> {
    if (this.mode === "examples") {
      const pieces = cards.map((c) => cardPieces(this.mode, c).map((p) => p.text));
      const flat = await this.embedTexts(state, pieces.flat());
      let i = 0;
      return pieces.map((p) => p.map(() => flat[i++]));
    }
    // Tool part and examples embedded apart, then mixed (tool parts cached).
    return mixedToolVectors(cards, state.toolParts, this.examples, state.exampleMean, (texts) =>
      this.embedTexts(state, texts),
    );
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

  /** Embeds the cards and writes their vectors, {@link EMBED_BATCH_CARDS} at a time. */
  private async embedCards(partition: string, state: PartitionState, cards: readonly ToolCard[]): Promise<void> {
    for (let start = 0; start < cards.length; start += EMBED_BATCH_CARDS) {
      await this.embedBatch(partition, state, cards.slice(start, start + EMBED_BATCH_CARDS));
    }
    // The in-memory store's common posting lists in order now, not at the first searches.
    this.sparseStore?.settle();
  }

  private async embedBatch(partition: string, state: PartitionState, cards: readonly ToolCard[]): Promise<void> {
    const docs: Document[] = [];
    const ids: string[] = [];
    const spare: string[] = [];
    const partCounts: number[] = [];
    for (const card of cards) {
      const pieces = cardPieces(this.mode, card);
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
    await this.write((await this.embedAll(state, cards)).flat(), docs, ids);
    // Only once the store holds them: after a failed write (the store down) the same cards are
    // still "changed", so the next upsertCards writes them instead of skipping them as done.
    cards.forEach((card, i) => {
      state.parts.set(card.name, partCounts[i]);
      state.textHash.set(card.name, hashCard(card));
    });
  }
}
