/**
 * A partition's state in the routing index (`tool-index.ts`): the embeddings fitted for it, what
 * each tool was embedded from, the wordings kept, and how a fresh one is fitted from the cards.
 */
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { ToolCard } from "../ledger/schema.js";
import { fitsPerPartition } from "./blended-embeddings.js";
import { CappedVectorCache } from "./card-vectors.js";
import { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
import { routingTexts } from "./routing-text.js";
import type { IndexMode } from "./tool-index-options.js";
import type { Wording } from "./wordings.js";
import type { WordingModel } from "./tool-index-scoring.js";

export interface PartitionState {
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
   * Request vectors by text, as the sparse embedder gives them: a review and each revision it
   * applies ask routing about the same served requests again. Dropped with the state (a refit).
   */
  requests: CappedVectorCache;
  /**
   * Mean of the partition's tools' unit example vectors (a tool without examples counting as
   * zero) at the last (re)index, in `tool` mode with centering on; taken from each tool's example
   * vector before mixing.
   */
  exampleMean?: number[];
  /** Wordings stored per tool: key → text (see `wordings.ts`). */
  wordings: Map<string, Map<string, string>>;
  /** Wordings stored in all. */
  wordingCount: number;
  /** What is fitted from the wordings (each tool's background, the classifier), until they change (`tool-index-scoring.ts`). */
  backgrounds?: WordingModel;
}

/**
 * Most vector entries the tool-part cache of a partition holds (numbers of a dense vector,
 * nonzero entries of a sparse one), the oldest evicted first: at most 32 MB dense, 48 MB sparse.
 */
const MAX_CACHED_TOOL_PART_ENTRIES = 4_000_000;

/**
 * Most vector entries the request cache of a partition holds (nonzero entries), the oldest evicted
 * first: at most 24 MB, some 3,000 requests with a sentence encoder's 512 numbers, 10,000 lexical.
 */
const MAX_CACHED_REQUEST_ENTRIES = 2_000_000;

/** The texts a card is embedded from, in order: one joined text in `tool` mode, the tool part and each example in `examples` mode. */
export function cardPieces(mode: IndexMode, card: ToolCard): { kind: string; text: string }[] {
  const parts = routingTexts(card);
  return mode === "tool"
    ? [{ kind: "tool", text: [parts.tool, ...parts.examples].join("\n") }]
    : [{ kind: "tool", text: parts.tool }, ...parts.examples.map((text) => ({ kind: "example", text }))];
}

/**
 * A partition's fresh state: the default lexical weights fitted on the tools' texts alone (a fit
 * on their wordings too moved the tools without traffic on its own: on MetaTool's long-tail
 * splits, up to 16-22 requests of one tool by the cards alone), a blend's lexical part on the
 * same texts, shared embeddings as they are.
 */
export function freshPartitionState(
  cards: readonly ToolCard[],
  wordings: ReadonlyMap<string, Wording[]>,
  options: { mode: IndexMode; shared: EmbeddingsInterface | undefined; lexical: LexicalEmbeddingsOptions },
): PartitionState {
  let embeddings = options.shared;
  if (!embeddings) {
    const lexical = new LexicalEmbeddings(options.lexical);
    for (const card of cards) lexical.partialFit(cardPieces(options.mode, card).map((p) => p.text));
    embeddings = lexical;
  } else if (fitsPerPartition(embeddings)) {
    // A blend with an unfitted lexical part: fitted on this partition's texts, as the default is.
    embeddings = embeddings.fittedOn(cards.flatMap((card) => cardPieces(options.mode, card).map((p) => p.text)));
  }
  return {
    embeddings,
    textHash: new Map(),
    parts: new Map(),
    changedSinceFit: 0,
    toolParts: new CappedVectorCache(MAX_CACHED_TOOL_PART_ENTRIES),
    requests: new CappedVectorCache(MAX_CACHED_REQUEST_ENTRIES),
    wordings: new Map(),
    wordingCount: 0,
  };
}
